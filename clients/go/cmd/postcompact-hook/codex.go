package main

// Codex CLI (tested with 0.171.0) runs the same plugin folder: it reads
// .codex-plugin/plugin.json, whose hooks file (hooks/codex.json) runs this program with --codex.
// What differs from Claude Code (../shared/reference/harness-hooks.md, its Codex section):
//
//   - Codex restores no file itself: the session is postcompact's own rule (the default profile,
//     no complement), `codex-<session_id>`.
//   - It has no read or edit tool: reads are shell commands (PostToolUse `Bash`, parsed by
//     ParseShellRead), edits apply_patch's patches (PostToolUse `apply_patch`, ParsePatch).
//   - The compaction runs PreCompact, the summary request, PostCompact, then the
//     SessionStart(compact) hooks, whose texts reach the model as developer messages, each inline
//     up to about 2,500 tokens (10,000 bytes), in the order the hooks are configured. So
//     PostCompact commits the compaction once (one process: nothing to share) and leaves its parts
//     in the state directory; each `--part N` command prints its part; PreCompact removes the
//     parts of the compaction before, so that no part is ever an old one.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	postcompact "github.com/postcompact/postcompact/clients/go"
	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
)

const (
	// CodexParts is how many SessionStart(compact) commands hooks/codex.json runs.
	CodexParts = 4
	// CodexPartBytes is the most bytes a part may have: Codex inlines a hook's text up to about
	// 2,500 tokens, 10,000 bytes (HOOK_OUTPUT_TOKEN_LIMIT), and replaces a longer one by a
	// preview; 100 are kept in hand.
	CodexPartBytes = 9_900
	// CodexSessionPrefix makes the daemon's session id from Codex's session_id.
	CodexSessionPrefix = "codex-"
	// TestedCodex is the Codex CLI version the plugin was tested with (tests/codex).
	TestedCodex = "0.171.0"
)

// CodexLayout: Codex keeps the parts in the order configured and counts bytes.
var CodexLayout = Layout{
	Parts:   CodexParts,
	Max:     CodexPartBytes,
	Measure: func(s string) int { return len(s) },
	Header:  codexHeader,
}

func codexHeader(k, n int) string {
	return fmt.Sprintf("postcompact re-read these files from disk after the conversation was summarized: "+
		"the ones the agent used most recently, as they are now (part %d of %d).", k, n)
}

// CodexPolicy: a file takes at most one part (2,400 tokens of ASCII text with its header fit
// 9,900 bytes), and the files three parts' worth in all; a file or a set that does not fit
// (wide characters take more bytes than tokens count) is dropped whole at the compaction.
func CodexPolicy() *pb.RestorePolicy {
	perFile, budget := int64(PartTokens), int64((CodexParts-1)*PartTokens)
	return &pb.RestorePolicy{MaxTokensPerFile: &perFile, FileTokenBudget: &budget}
}

// codexOpenRequest is the session as the Codex hooks open it: the default profile under its own
// rule, its neutral wording (Codex has no Read tool to name), and no <system-reminder> wrapper
// (the text goes in a developer message as it is).
func (h *Hook) codexOpenRequest() *pb.OpenSessionRequest {
	return &pb.OpenSessionRequest{
		SessionId: h.SessionID,
		Cwd:       h.Project,
		Home:      h.Home,
		Profile:   pb.Profile_PROFILE_DEFAULT,
		Policy:    CodexPolicy(),
		Templates: &pb.TemplateSpec{Preset: "neutral", Strings: map[string]string{"system_reminder": "{content}"}},
	}
}

// runCodex handles one Codex hook event; like run, it never fails the harness.
func runCodex(p *Payload, st *State, stdout io.Writer, part int) {
	limit, ok := deadlines[p.HookEventName]
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	h, err := newHook(p, st)
	if err != nil {
		logf(st, "codex %s: %v", p.HookEventName, err)
		return
	}
	defer h.Close()
	h.SessionID = CodexSessionPrefix + p.SessionID
	h.OpenReq = h.codexOpenRequest
	var out Output
	switch p.HookEventName {
	case "PostToolUse":
		h.CodexPostToolUse(ctx)
	case "PreCompact":
		os.Remove(h.St.codexPartsPath(h.SessionID))
	case "PostCompact":
		h.CodexPostCompact(ctx)
	case "SessionStart":
		out = h.CodexSessionStart(ctx, part)
	}
	if out.SystemMessage != "" || out.HookSpecificOutput != nil {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			logf(st, "codex %s: writing the output: %v", p.HookEventName, err)
		}
	}
}

// CodexReports turns a Codex tool call into its reports: a plain read command of the shell
// tool, or an applied patch; nil for anything else.
func CodexReports(tool string, input, response json.RawMessage, cwd string, atMS int64) []*Report {
	var in struct {
		Command string `json:"command"`
	}
	var out string
	if json.Unmarshal(input, &in) != nil || json.Unmarshal(response, &out) != nil {
		return nil
	}
	switch tool {
	case "Bash":
		r, ok := ParseShellRead(in.Command)
		if !ok {
			return nil
		}
		return ReadReports(r, cwd, out, atMS)
	case "apply_patch":
		return PatchReports(in.Command, out, cwd, atMS)
	}
	return nil
}

// CodexPostToolUse records the reads and writes of one tool call (synchronously: the next
// model request, and so a compaction, waits for it; a call costs a few milliseconds).
func (h *Hook) CodexPostToolUse(ctx context.Context) {
	p := h.P
	for _, r := range CodexReports(p.ToolName, p.ToolInput, p.ToolResponse, p.Cwd, h.St.Now().UnixMilli()) {
		err := h.Send(ctx, "", r)
		if errors.Is(err, errDaemonDown) {
			return
		}
		if err != nil && !ignorable(err) {
			logf(h.St, "codex PostToolUse %s %s: %v", p.ToolName, r.Path, err)
		}
	}
}

// codexParts is what PostCompact leaves for the part commands.
type codexParts struct {
	AtMS  int64    `json:"at_ms"`
	Parts []string `json:"parts"`
}

func (s *State) codexPartsPath(session string) string {
	return s.sessionFile(session, ".codex-parts.json")
}

// CodexPostCompact commits the compaction and lays its restoration out in parts: the preview
// packed into the parts (whole files; those that do not fit dropped from the end of the ranking),
// Compact with the budget of the files kept, and the parts of what it committed written for the
// SessionStart(compact) commands that come next.
func (h *Hook) CodexPostCompact(ctx context.Context) {
	path := h.St.codexPartsPath(h.SessionID)
	os.Remove(path)
	var res *postcompact.CompactResult
	err := h.Call(ctx, "", func() error {
		var err error
		res, err = h.C.Session(h.SessionID).PreviewCompact(ctx, postcompact.WithPolicy(CodexPolicy()))
		return err
	})
	if err != nil {
		if !errors.Is(err, errDaemonDown) {
			logf(h.St, "codex PostCompact: preview: %v", err)
		}
		return
	}
	plan := PackLayout(codexItems(res.Attachments), CodexLayout)
	policy := CodexPolicy()
	if len(plan.Dropped) > 0 {
		budget := plan.KeptTokens
		policy.FileTokenBudget = &budget
		logf(h.St, "codex PostCompact %s: %d file(s) did not fit %d parts and were dropped", h.SessionID, len(plan.Dropped), CodexParts)
	}
	err = h.Call(ctx, "", func() error {
		var err error
		res, err = h.C.Session(h.SessionID).Compact(ctx, postcompact.WithPolicy(policy))
		return err
	})
	if err != nil {
		if !errors.Is(err, errDaemonDown) {
			logf(h.St, "codex PostCompact: compact: %v", err)
		}
		return
	}
	committed := PackLayout(codexItems(res.Attachments), CodexLayout)
	if len(committed.Dropped) > 0 { // a file changed between the preview and the commit
		logf(h.St, "codex PostCompact %s: %d committed file(s) no longer fit the parts", h.SessionID, len(committed.Dropped))
	}
	// The parts that hold files are the first ones (first-fit fills them in order): each says
	// "part k of n" of those (the same width as of CodexParts, so each still fits).
	n := 0
	for n < len(committed.Parts) && len(committed.Parts[n]) > 0 {
		n++
	}
	committed.Parts = committed.Parts[:n]
	doc := codexParts{AtMS: h.St.Now().UnixMilli()}
	for k := 1; k <= CodexParts; k++ {
		doc.Parts = append(doc.Parts, committed.Text(k))
	}
	b, _ := json.Marshal(doc)
	if h.St.mkdir(path) != nil {
		return
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	if err := os.WriteFile(tmp, b, 0o600); err != nil || os.Rename(tmp, path) != nil {
		os.Remove(tmp)
		logf(h.St, "codex PostCompact %s: cannot write the parts to %s", h.SessionID, path)
	}
}

// codexItems are the file attachments measured in bytes.
func codexItems(atts []*pb.Attachment) []Item {
	items := Items(atts)
	for i := range items {
		items[i].Units = len(items[i].Text)
	}
	return items
}

// codexPartsMaxAge: parts older than this are not this compaction's (PreCompact removes the
// last ones; this only guards against a PreCompact that did not run).
const codexPartsMaxAge = 10 * time.Minute

// CodexSessionStart: at startup, resume and clear the daemon is made to serve and the session
// opened; after a compaction (source "compact") this command prints its part.
func (h *Hook) CodexSessionStart(ctx context.Context, part int) Output {
	var out Output
	if h.P.Source == "compact" {
		if part < 1 {
			return out
		}
		b, err := os.ReadFile(h.St.codexPartsPath(h.SessionID))
		if err != nil {
			if part == 1 {
				logf(h.St, "codex SessionStart(compact) %s: no parts: PostCompact committed nothing "+
					"(no daemon, or it did not run)", h.SessionID)
			}
			return out
		}
		var doc codexParts
		if json.Unmarshal(b, &doc) != nil || h.St.Now().Sub(time.UnixMilli(doc.AtMS)) > codexPartsMaxAge {
			return out
		}
		if part <= len(doc.Parts) && doc.Parts[part-1] != "" {
			out.HookSpecificOutput = &SpecificOutput{HookEventName: "SessionStart", AdditionalContext: doc.Parts[part-1]}
		}
		return out
	}
	h.St.Prune()
	if err := h.Call(ctx, "", func() error { return h.Open(ctx) }); err != nil && !errors.Is(err, errDaemonDown) {
		logf(h.St, "codex SessionStart(%s): %v", h.P.Source, err)
	}
	if h.Down != "" && h.St.TellOnce(h.SessionID) {
		// Said once per session, and logged too: `codex exec` shows no SessionStart message.
		out.SystemMessage = "postcompact: the daemon is not running and could not be started, so this " +
			"session goes on without postcompact (nothing is restored after a compaction). Why: " + h.Down +
			". Start it with `postcompact start`; `postcompact status` shows it."
		logf(h.St, "codex %s: %s", h.SessionID, out.SystemMessage)
	}
	return out
}
