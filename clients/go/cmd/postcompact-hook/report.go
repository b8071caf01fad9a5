package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"

	postcompact "github.com/postcompact/postcompact/clients/go"
	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
	"google.golang.org/grpc/codes"
)

// Report is what one tool call tells the daemon: a read (its text and range), a write (the
// content on disk and the lines it changed) or an invoked skill.
type Report struct {
	Kind      string // "read", "write", "skill"
	ToolUseID string
	Path      string
	// read: the text read (raw, not numbered) and, for a range, its first line and length.
	Content       []byte
	Offset, Limit *int64
	// write: the changed lines (HasChanged: known from the structuredPatch).
	Changed    [][2]int64
	HasChanged bool
	// skill
	SkillName, SkillPath string
	AtMS                 int64 // when it happened (ms since the epoch)
}

// ReportFor turns a tool call into its report; nil when the call reports nothing (an image or a
// PDF read, a tool the plugin does not track, a skill whose SKILL.md is not found).
func ReportFor(tool string, input, response json.RawMessage, project, home string, atMS int64) *Report {
	switch tool {
	case "Read":
		var in readInput
		var out readResponse
		if json.Unmarshal(input, &in) != nil || json.Unmarshal(response, &out) != nil {
			return nil
		}
		if out.Type != "text" || out.File == nil || out.File.Content == nil {
			return nil // images, PDFs, notebooks: not file state
		}
		path := out.File.FilePath
		if path == "" {
			path = in.FilePath
		}
		r := &Report{Kind: "read", Path: path, Content: []byte(*out.File.Content), AtMS: atMS}
		// A range: the lines startLine..startLine+numLines-1 (a ranged Read, or a whole Read
		// that Claude Code cut at its line limit).
		start, num, total := out.File.StartLine, out.File.NumLines, out.File.TotalLines
		if start > 1 || in.Offset != nil || in.Limit != nil || (total > 0 && num < total) {
			if start < 1 {
				start = 1
			}
			r.Offset = &start
			if num >= 1 {
				r.Limit = &num
			}
		}
		return r
	case "Edit", "Write":
		var in writeInput
		var out writeResponse
		_ = json.Unmarshal(input, &in)
		_ = json.Unmarshal(response, &out)
		path := out.FilePath
		if path == "" {
			path = in.FilePath
		}
		if path == "" {
			return nil
		}
		r := &Report{Kind: "write", Path: path, AtMS: atMS}
		if out.Type != "create" { // a new file: unset, the daemon takes all of it
			r.Changed, r.HasChanged = PatchLines(out.StructuredPatch)
		}
		return r
	case "Skill":
		var in skillInput
		if json.Unmarshal(input, &in) != nil || in.Skill == "" {
			return nil
		}
		path, content := FindSkill(in.Skill, project, home)
		if content == nil {
			return nil
		}
		return &Report{Kind: "skill", SkillName: in.Skill, SkillPath: path, Content: content, AtMS: atMS}
	}
	return nil
}

// FindSkill finds an invoked skill's SKILL.md by its name, where Claude Code loads skills from:
// `.claude/skills/<name>/SKILL.md` in the project (from it up to /), then in the home folder.
// It returns the path as Claude Code names the skill (`projectSettings:<name>`,
// `userSettings:<name>`) and the text Claude Code puts in the conversation: `Base directory for
// this skill: <dir>` and the body after its front matter (as the daemon's transcript import
// reads it). A plugin's skill (`plugin:name`) is not looked up.
func FindSkill(name, project, home string) (string, []byte) {
	if name == "" || strings.ContainsAny(name, `/\:`) || name == "." || name == ".." {
		return "", nil
	}
	try := func(root, source string) (string, []byte) {
		dir := filepath.Join(root, ".claude", "skills", name)
		b, err := os.ReadFile(filepath.Join(dir, "SKILL.md"))
		if err != nil {
			return "", nil
		}
		text := "Base directory for this skill: " + dir + "\n\n" + skillBody(string(b))
		return source + ":" + name, []byte(text)
	}
	for d := project; d != ""; {
		if home != "" && d == home {
			break // the home folder's skills are the user's, below
		}
		if p, c := try(d, "projectSettings"); c != nil {
			return p, c
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if home != "" {
		return try(home, "userSettings")
	}
	return "", nil
}

// skillBody is a SKILL.md without its front matter (`---` ... `---`) and the blank lines after it.
func skillBody(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if strings.HasPrefix(s, "---\n") {
		if end := strings.Index(s[4:], "\n---"); end >= 0 {
			rest := s[4+end+4:]
			if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
				rest = rest[nl+1:]
			} else {
				rest = ""
			}
			s = strings.TrimLeft(rest, "\n")
		}
	}
	return s
}

// ignorable: answers that mean the daemon keeps nothing of this call, and never will: a file
// outside the project or denied, not UTF-8, a change that does not fit (the daemon diffs then).
func ignorable(err error) bool {
	switch postcompact.CodeOf(err) {
	case codes.PermissionDenied, codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition:
		return postcompact.ReasonOf(err) != "SESSION_NOT_FOUND" && postcompact.ReasonOf(err) != "AGENT_NOT_FOUND"
	}
	return false
}

// Send records the report for agent ("" = the main thread). A write's content is what is on disk
// now; its changed lines, when they no longer fit that content (a later edit came first), are
// left to the daemon's diff.
func (h *Hook) Send(ctx context.Context, agent string, r *Report) error {
	s := h.C.Session(h.SessionID).Agent(agent)
	switch r.Kind {
	case "read":
		return h.Call(ctx, agent, func() error {
			var opts []postcompact.ReadOption
			if r.Offset != nil {
				opts = append(opts, postcompact.Offset(*r.Offset))
			}
			if r.Limit != nil {
				opts = append(opts, postcompact.Limit(*r.Limit))
			}
			_, err := s.RecordRead(ctx, r.Path, r.Content, r.AtMS, opts...)
			return err
		})
	case "write":
		content, err := os.ReadFile(r.Path)
		if err != nil {
			return nil // gone since: nothing to hold
		}
		st, err := os.Stat(r.Path)
		if err != nil {
			return nil
		}
		mtime := st.ModTime().UnixMilli()
		withChanged := r.HasChanged
		return h.Call(ctx, agent, func() error {
			var opts []postcompact.WriteOption
			if withChanged {
				opts = append(opts, postcompact.ChangedLines(r.Changed...))
			}
			_, err := s.RecordWrite(ctx, r.Path, content, mtime, opts...)
			if withChanged && (postcompact.IsReason(err, "BAD_CHANGED_LINES") || postcompact.IsReason(err, "TOO_MANY_CHANGED_LINES")) {
				withChanged = false
				_, err = s.RecordWrite(ctx, r.Path, content, mtime)
			}
			return err
		})
	case "skill":
		return h.Call(ctx, agent, func() error {
			_, err := s.RecordSkill(ctx, r.SkillName, r.SkillPath, r.Content, r.AtMS)
			return err
		})
	}
	return nil
}

// PostToolUse reports one tool call (async in hooks.json: Claude Code does not wait for it).
// A sub-agent's call goes to its agent (its agent_id), never to the main thread's state.
func (h *Hook) PostToolUse(ctx context.Context) {
	p := h.P
	if p.ToolUseID != "" && h.St.Reported(h.SessionID)[p.ToolUseID] {
		return // the PreCompact sweep recorded it already
	}
	r := ReportFor(p.ToolName, p.ToolInput, p.ToolResponse, h.Project, h.Home, h.St.Now().UnixMilli())
	if r == nil {
		return
	}
	err := h.Send(ctx, p.AgentID, r)
	if err != nil && !ignorable(err) {
		if !errors.Is(err, errDaemonDown) {
			logf(h.St, "PostToolUse %s %s: %v", p.ToolName, r.Path, err)
		}
		return
	}
	if p.ToolUseID != "" {
		h.St.MarkReported(h.SessionID, p.ToolUseID)
	}
}

// SubagentStop ends the sub-agent's state on the daemon (its slot in the session is free again).
func (h *Hook) SubagentStop(ctx context.Context) {
	if h.P.AgentID == "" {
		return
	}
	_, err := h.C.EndAgent(ctx, &pb.EndAgentRequest{SessionId: h.SessionID, AgentId: h.P.AgentID})
	if err != nil && !transport(err) && postcompact.CodeOf(err) != codes.NotFound {
		logf(h.St, "SubagentStop %s: %v", h.P.AgentID, err)
	}
}
