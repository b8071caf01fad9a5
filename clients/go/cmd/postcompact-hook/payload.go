package main

import (
	"encoding/json"
	"os"
	"strings"
)

// Payload is what a Claude Code hook reads on stdin (docs: clients/claude-code/README.md). Every
// event carries the session, the transcript and the working directory; the tool events their
// tool's input and (PostToolUse) response; a sub-agent's tool calls its agent_id.
type Payload struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolResponse   json.RawMessage `json:"tool_response"`
	ToolUseID      string          `json:"tool_use_id"`
	AgentID        string          `json:"agent_id"`   // set on a sub-agent's events
	AgentType      string          `json:"agent_type"` // its type ("general-purpose", ...)
	Source         string          `json:"source"`     // SessionStart: startup, resume, clear, compact
	Trigger        string          `json:"trigger"`    // PreCompact, PostCompact: manual, auto
	PromptID       string          `json:"prompt_id"`  // Claude Code only
	TurnID         string          `json:"turn_id"`    // Codex only
}

// Harness names who called the hook.
type Harness string

const (
	HarnessClaudeCode Harness = "claude-code"
	HarnessCodex      Harness = "codex"
)

// DetectHarness works out which harness ran the hook: Gemini CLI's by its environment and
// events; Codex's payloads carry a turn_id (and it sets no CLAUDECODE); Claude Code's never do.
// Codex's SessionStart carries none (0.171.0): its hooks file (hooks/codex.json) passes --codex,
// which decides first.
func DetectHarness(p *Payload, getenv func(string) string) Harness {
	if isGemini(p, getenv) { // gemini.go
		return HarnessGemini
	}
	if p.TurnID != "" && getenv("CLAUDECODE") == "" {
		return HarnessCodex
	}
	return HarnessClaudeCode
}

// readInput is a Read's tool_input.
type readInput struct {
	FilePath string `json:"file_path"`
	Offset   *int64 `json:"offset"`
	Limit    *int64 `json:"limit"`
}

// readResponse is a Read's tool_response: {"type":"text","file":{...}}.
type readResponse struct {
	Type string `json:"type"`
	File *struct {
		FilePath   string  `json:"filePath"`
		Content    *string `json:"content"`
		NumLines   int64   `json:"numLines"`
		StartLine  int64   `json:"startLine"`
		TotalLines int64   `json:"totalLines"`
	} `json:"file"`
}

// writeInput is an Edit's or a Write's tool_input.
type writeInput struct {
	FilePath string `json:"file_path"`
}

// Hunk is one hunk of an Edit's or Write's structuredPatch.
type Hunk struct {
	NewStart *int64   `json:"newStart"`
	Lines    []string `json:"lines"`
}

// writeResponse is an Edit's or a Write's tool_response.
type writeResponse struct {
	Type            string          `json:"type"` // Write: "create" or "update"
	FilePath        string          `json:"filePath"`
	StructuredPatch json.RawMessage `json:"structuredPatch"`
}

// skillInput is a Skill's tool_input.
type skillInput struct {
	Skill string `json:"skill"`
}

// PatchLines returns the lines of the new text an Edit or Write added or changed, as 1-based
// inclusive ranges, from its structuredPatch: each hunk's " " and "+" lines counted from its
// newStart, the "+" ones marked (as the daemon's transcript import does). ok is false when there
// are no hunks or they are not of that shape: the daemon then diffs the content itself. A hunk
// that only deletes marks no line (ok, with no range: the write changed no line it left).
func PatchLines(raw json.RawMessage) (ranges [][2]int64, ok bool) {
	var hunks []json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &hunks) != nil || len(hunks) == 0 {
		return nil, false
	}
	ranges = [][2]int64{}
	for _, h := range hunks {
		var hunk Hunk
		if json.Unmarshal(h, &hunk) != nil || hunk.NewStart == nil || hunk.Lines == nil {
			return nil, false
		}
		at := *hunk.NewStart
		for _, line := range hunk.Lines {
			switch {
			case strings.HasPrefix(line, "+"):
				if n := len(ranges); n > 0 && ranges[n-1][1] == at-1 {
					ranges[n-1][1] = at
				} else {
					ranges = append(ranges, [2]int64{at, at})
				}
				at++
			case strings.HasPrefix(line, " "):
				at++
			}
			// "-" lines and "\ No newline at end of file" are no line of the new text.
		}
	}
	return ranges, true
}

// projectDir is where the session works: CLAUDE_PROJECT_DIR (the project root, fixed for the
// session), else the payload's cwd (which follows the shell's cd), else the process's.
func projectDir(p *Payload) string {
	if d := os.Getenv("CLAUDE_PROJECT_DIR"); d != "" {
		return d
	}
	if p.Cwd != "" {
		return p.Cwd
	}
	d, _ := os.Getwd()
	return d
}
