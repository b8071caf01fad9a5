package main

// Gemini CLI (clients/gemini-cli, tested with 0.61.0). Its hooks run this same program:
//
//	SessionStart (startup, resume, clear)  starts the daemon when none runs, opens the session
//	AfterTool read_file|replace|write_file|activate_skill
//	                                       RecordRead (from disk, the range read), RecordWrite
//	                                       (the content on disk), RecordSkill
//	BeforeModel                            after a compression: Compact once per <state_snapshot>
//	                                       (snapshot_cache.go) and that text appended to the
//	                                       snapshot message of every request
//
// Gemini CLI restores no file after it compresses the conversation, so the session is opened
// under the default profile with no complement: postcompact's own rule. Gemini has no hook after
// a compression (PreCompress fires before every request), so BeforeModel finds the snapshot in
// the request itself.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	postcompact "github.com/postcompact/postcompact/clients/go"
	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
)

// HarnessGemini is Gemini CLI.
const HarnessGemini Harness = "gemini-cli"

// GeminiSessionPrefix makes the daemon's session id from Gemini's session_id.
const GeminiSessionPrefix = "gemini-"

// geminiEvents are the events only Gemini CLI names so (Claude Code's are PostToolUse, ...).
var geminiEvents = map[string]bool{
	"AfterTool": true, "BeforeTool": true, "BeforeModel": true, "AfterModel": true,
	"BeforeAgent": true, "AfterAgent": true, "BeforeToolSelection": true, "PreCompress": true,
}

// isGemini: Gemini CLI sets GEMINI_SESSION_ID for its hooks (and CLAUDE_PROJECT_DIR too, for
// compatibility), and names its events its own way.
func isGemini(p *Payload, getenv func(string) string) bool {
	return getenv("GEMINI_SESSION_ID") != "" || geminiEvents[p.HookEventName]
}

var geminiDeadlines = map[string]time.Duration{
	"SessionStart": 25 * time.Second,
	"AfterTool":    20 * time.Second,
	"BeforeModel":  50 * time.Second,
}

// GeminiFileTokens is what the restored files may take in all (rough tokens): a fixed budget in
// place of the default profile's match_budget, which spends what Claude Code's own rule would (a
// rule Gemini CLI does not have). About 100,000 characters, appended to every request after a
// compression: 2.5% of gemini-2.5-flash's window.
const GeminiFileTokens = 25_000

// GeminiPolicy is the policy of a Gemini session, passed again with every compaction: the
// default profile's rule (no complement: Gemini restores nothing itself) within
// GeminiFileTokens.
func GeminiPolicy() *pb.RestorePolicy {
	budget := int64(GeminiFileTokens)
	return &pb.RestorePolicy{FileTokenBudget: &budget}
}

// geminiOpenRequest: the default profile, its policy, and the neutral wording with Gemini's read
// tool named (a restored file reads as read_file's call).
func geminiOpenRequest(session, project, home string) *pb.OpenSessionRequest {
	return &pb.OpenSessionRequest{
		SessionId: session,
		Cwd:       project,
		Home:      home,
		Profile:   pb.Profile_PROFILE_DEFAULT,
		Policy:    GeminiPolicy(),
		Templates: &pb.TemplateSpec{Preset: "neutral", Strings: map[string]string{
			"read_tool_name":  "read_file",
			"read_path_key":   "file_path",
			"system_reminder": "{content}",
		}},
	}
}

// geminiPayload is what Gemini's events carry beyond the common fields.
type geminiPayload struct {
	ToolResponse struct {
		LLMContent    json.RawMessage `json:"llmContent"`
		ReturnDisplay json.RawMessage `json:"returnDisplay"`
		Error         json.RawMessage `json:"error"`
	} `json:"tool_response"`
	LLMRequest *LLMRequest `json:"llm_request"`
}

// runGemini handles one Gemini CLI hook call. It always exits 0.
func runGemini(p *Payload, raw []byte, st *State, stdout io.Writer) int {
	var g geminiPayload
	if err := json.Unmarshal(raw, &g); err != nil {
		logf(st, "gemini %s: %v", p.HookEventName, err)
		return 0
	}
	limit, ok := geminiDeadlines[p.HookEventName]
	if !ok {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	session := GeminiSessionPrefix + p.SessionID
	if p.HookEventName == "BeforeModel" {
		out := geminiBeforeModel(ctx, p, g.LLMRequest, st, session)
		if out != nil {
			enc := json.NewEncoder(stdout)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(out); err != nil {
				logf(st, "BeforeModel: writing the output: %v", err)
			}
		}
		return 0
	}
	var report *Report
	if p.HookEventName == "AfterTool" {
		report = GeminiReportFor(p.ToolName, p.ToolInput, g.ToolResponse.LLMContent,
			g.ToolResponse.ReturnDisplay, g.ToolResponse.Error, projectDir(p), st.Now().UnixMilli())
		if report == nil {
			return 0
		}
	}
	h, err := newGeminiHook(p, st, session)
	if err != nil {
		logf(st, "%s: %v", p.HookEventName, err)
		return 0
	}
	defer h.Close()
	switch p.HookEventName {
	case "SessionStart":
		st.Prune()
		err = h.Call(ctx, "", func() error { return h.Open(ctx) })
	case "AfterTool":
		err = h.Send(ctx, "", report)
		if ignorable(err) {
			err = nil
		}
	}
	if err != nil && !errors.Is(err, errDaemonDown) {
		logf(st, "gemini %s %s: %v", p.HookEventName, p.ToolName, err)
	}
	if h.Down != "" && st.TellOnce(session) {
		logf(st, "gemini %s: %s", session, GeminiDownMessage(h.Down))
		// SessionStart's systemMessage goes to the user (stderr when headless), never to the
		// model; the other events' is not shown for sure: there the log says it.
		if p.HookEventName == "SessionStart" {
			enc := json.NewEncoder(stdout)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(Output{SystemMessage: GeminiDownMessage(h.Down)})
		}
	}
	return 0
}

// GeminiDownMessage is the one message a session gets when the daemon is not available.
func GeminiDownMessage(why string) string {
	return "postcompact: the daemon is not running and could not be started, so this session " +
		"goes on without the extension (nothing is restored after a compression). Why: " + why +
		". Start it with `postcompact start`; `postcompact status` shows it."
}

func newGeminiHook(p *Payload, st *State, session string) (*Hook, error) {
	c, err := postcompact.New(postcompact.WithAutoStart(false), postcompact.WithRetry(postcompact.NoRetry()))
	if err != nil {
		return nil, err
	}
	home, _ := os.UserHomeDir()
	project := projectDir(p)
	return &Hook{P: p, St: st, C: c, SessionID: session, Project: project, Home: home,
		OpenReq: func() *pb.OpenSessionRequest { return geminiOpenRequest(session, project, home) }}, nil
}

// --- AfterTool -------------------------------------------------------------------------------

type geminiReadInput struct {
	FilePath  string `json:"file_path"`
	StartLine *int64 `json:"start_line"`
	EndLine   *int64 `json:"end_line"`
}

type geminiEditInput struct {
	FilePath      string `json:"file_path"`
	OldString     string `json:"old_string"`
	NewString     string `json:"new_string"`
	AllowMultiple bool   `json:"allow_multiple"`
}

type geminiSkillInput struct {
	Name string `json:"name"`
}

// shownLines is read_file's note on a text it cut: "Showing lines 50-69 of 301 total lines".
var shownLines = regexp.MustCompile(`Showing lines (\d+)-(\d+) of (\d+) total lines`)

// skillDir is activate_skill's returnDisplay: "Resources loaded from `DIR`".
var skillDir = regexp.MustCompile("Resources loaded from `([^`]+)`")

// jsonString is a JSON string's value ("" for anything else: read_file's llmContent is a
// list of parts for an image or a PDF).
func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// absPath is a tool's file_path made absolute (Gemini's tools take paths relative to the
// project as well).
func absPath(path, project string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(project, path)
}

// GeminiReportFor turns a Gemini tool call into its report; nil when it reports nothing (a
// failed call, an image or a PDF, a file gone since). A read is taken from disk: read_file's
// answer is numbered and annotated, the file's lines are what it showed.
func GeminiReportFor(tool string, input, llmContent, returnDisplay, toolErr json.RawMessage, project string, atMS int64) *Report {
	if len(toolErr) > 0 && string(toolErr) != "null" {
		return nil
	}
	switch tool {
	case "read_file":
		var in geminiReadInput
		if json.Unmarshal(input, &in) != nil || in.FilePath == "" {
			return nil
		}
		text, ok := jsonString(llmContent)
		if !ok {
			return nil // images, PDFs, audio: parts, not file state
		}
		path := absPath(in.FilePath, project)
		disk, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		r := &Report{Kind: "read", Path: path, AtMS: atMS}
		var first, last int64
		if m := shownLines.FindStringSubmatch(text); m != nil {
			first, _ = strconv.ParseInt(m[1], 10, 64)
			last, _ = strconv.ParseInt(m[2], 10, 64)
		} else if in.StartLine != nil || in.EndLine != nil {
			first, last = 1, 0
			if in.StartLine != nil {
				first = *in.StartLine
			}
			if in.EndLine != nil {
				last = *in.EndLine
			}
		} else {
			r.Content = disk
			return r
		}
		lines := strings.Split(string(disk), "\n")
		if strings.HasSuffix(string(disk), "\n") {
			lines = lines[:len(lines)-1]
		}
		n := int64(len(lines))
		if last <= 0 || last > n {
			last = n
		}
		if first < 1 {
			first = 1
		}
		if first > last {
			return nil
		}
		count := last - first + 1
		r.Content = []byte(strings.Join(lines[first-1:last], "\n"))
		r.Offset, r.Limit = &first, &count
		return r
	case "replace":
		var in geminiEditInput
		if json.Unmarshal(input, &in) != nil || in.FilePath == "" {
			return nil
		}
		path := absPath(in.FilePath, project)
		r := &Report{Kind: "write", Path: path, AtMS: atMS}
		if disk, err := os.ReadFile(path); err == nil {
			r.Changed, r.HasChanged = EditLines(string(disk), in.OldString, in.NewString, in.AllowMultiple)
		}
		return r
	case "write_file":
		var in writeInput
		if json.Unmarshal(input, &in) != nil || in.FilePath == "" {
			return nil
		}
		// A new file: the daemon takes all of it; an overwrite: the daemon diffs.
		return &Report{Kind: "write", Path: absPath(in.FilePath, project), AtMS: atMS}
	case "activate_skill":
		var in geminiSkillInput
		if json.Unmarshal(input, &in) != nil || in.Name == "" {
			return nil
		}
		text, ok := jsonString(llmContent)
		if !ok || text == "" {
			return nil
		}
		path := "gemini:" + in.Name
		if display, ok := jsonString(returnDisplay); ok {
			if m := skillDir.FindStringSubmatch(display); m != nil {
				path = filepath.Join(m[1], "SKILL.md")
			}
		}
		return &Report{Kind: "skill", SkillName: in.Name, SkillPath: path, Content: []byte(text), AtMS: atMS}
	}
	return nil
}

// EditLines derives the lines a replace changed from the file on disk: each place new_string
// stands in it, less the lines it shares with old_string at its start and its end (replace's
// new_string carries context lines). ok is false when that cannot be told (new_string is not
// in the file as given, or more often than the call replaced): the daemon diffs then.
func EditLines(disk, oldS, newS string, allowMultiple bool) (ranges [][2]int64, ok bool) {
	if newS == "" {
		return [][2]int64{}, true // a deletion changes no line it leaves
	}
	var at []int
	for i := 0; ; {
		k := strings.Index(disk[i:], newS)
		if k < 0 {
			break
		}
		at = append(at, i+k)
		i += k + len(newS)
	}
	if len(at) == 0 || (!allowMultiple && len(at) != 1) {
		return nil, false
	}
	oldL, newL := strings.Split(oldS, "\n"), strings.Split(newS, "\n")
	head := 0
	for head < len(oldL) && head < len(newL) && oldL[head] == newL[head] {
		head++
	}
	tail := 0
	for tail < len(oldL)-head && tail < len(newL)-head && oldL[len(oldL)-1-tail] == newL[len(newL)-1-tail] {
		tail++
	}
	ranges = [][2]int64{}
	for _, off := range at {
		line := int64(strings.Count(disk[:off], "\n")) + 1
		first, last := line+int64(head), line+int64(len(newL)-1-tail)
		if first <= last {
			ranges = append(ranges, [2]int64{first, last})
		}
	}
	return ranges, true
}
