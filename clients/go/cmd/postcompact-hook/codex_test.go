package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A file at the per-file cap, with its part's header, fits one part in bytes; and each part's
// text stays within the cap whatever is packed.
func TestCodexLayoutFitsCodexCap(t *testing.T) {
	capacity := CodexPartBytes - len(codexHeader(CodexParts, CodexParts)) - len(itemSep)
	if capacity < PartTokens*4 {
		t.Fatalf("a part holds %d bytes of a file, the per-file cap is %d tokens (%d bytes of ASCII)", capacity, PartTokens, PartTokens*4)
	}
	var items []Item
	for i := range 12 {
		text := strings.Repeat("é", 700+i*300) // two bytes a character: bytes, not characters, count
		items = append(items, Item{Rank: i, Path: fmt.Sprint(i), Text: text, Units: len(text), Tokens: int64(Units(text) / 4)})
	}
	p := PackLayout(items, CodexLayout)
	if len(p.Dropped) == 0 {
		t.Fatal("expected some items dropped")
	}
	for k := 1; k <= CodexParts; k++ {
		text := p.Text(k)
		if len(text) > CodexPartBytes {
			t.Errorf("part %d: %d bytes", k, len(text))
		}
		if text != "" && !strings.HasPrefix(text, codexHeader(k, CodexParts)+itemSep) {
			t.Errorf("part %d does not open with its header", k)
		}
	}
	for i, it := range p.Kept { // a prefix of the ranking
		if it.Rank != i {
			t.Errorf("kept %d has rank %d", i, it.Rank)
		}
	}
}

// hooks/codex.json runs the program with --codex: one SessionStart(compact) command per part, in
// order; the tool hook on the shell and apply_patch, synchronous; PreCompact and PostCompact once.
func TestCodexHooksJSONMatchesTheProgram(t *testing.T) {
	root := filepath.Join("..", "..", "..", "claude-code", "plugins", "postcompact")
	var manifest struct {
		Name  string `json:"name"`
		Hooks string `json:"hooks"`
	}
	b, err := os.ReadFile(filepath.Join(root, ".codex-plugin", "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &manifest); err != nil || manifest.Name != "postcompact" || manifest.Hooks != "./hooks/codex.json" {
		t.Fatalf("the Codex manifest: %+v %v", manifest, err)
	}
	b, err = os.ReadFile(filepath.Join(root, "hooks", "codex.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Command string `json:"command"`
				Async   bool   `json:"async"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	const hook = `"${PLUGIN_ROOT}/bin/postcompact-hook" --codex`
	var parts []string
	for _, group := range doc.Hooks["SessionStart"] {
		for _, h := range group.Hooks {
			if group.Matcher == "compact" {
				parts = append(parts, h.Command)
			} else if h.Command != hook {
				t.Errorf("SessionStart(%s): %q", group.Matcher, h.Command)
			}
		}
	}
	if len(parts) != CodexParts {
		t.Fatalf("%d SessionStart(compact) commands, the program prints %d parts", len(parts), CodexParts)
	}
	for i, c := range parts {
		if want := fmt.Sprintf("%s --part %d", hook, i+1); c != want {
			t.Errorf("part command %d: %q, want %q", i+1, c, want)
		}
	}
	post := doc.Hooks["PostToolUse"]
	if len(post) != 1 || post[0].Matcher != "^(Bash|apply_patch)$" || post[0].Hooks[0].Async || post[0].Hooks[0].Command != hook {
		t.Errorf("PostToolUse: %+v", post)
	}
	for _, event := range []string{"PreCompact", "PostCompact"} {
		if g := doc.Hooks[event]; len(g) != 1 || len(g[0].Hooks) != 1 || g[0].Hooks[0].Async || g[0].Hooks[0].Command != hook {
			t.Errorf("%s must run once, synchronously: %+v", event, g)
		}
	}
	for event, groups := range doc.Hooks {
		limit, ok := deadlines[event]
		if !ok {
			t.Errorf("%s: the program does nothing on it", event)
		}
		for _, group := range groups {
			for _, h := range group.Hooks {
				if h.Timeout*1000 <= int(limit.Milliseconds()) {
					t.Errorf("%s: Codex's timeout %d s is not above the program's %v", event, h.Timeout, limit)
				}
			}
		}
	}
}

// The payloads as Codex 0.171.0 sends them (harness-hooks.md): a shell read and a patch.
func TestCodexReportsFromPayloads(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.py"), []byte("1\n2\n3\n4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	raw := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	read := CodexReports("Bash", raw(map[string]string{"command": "sed -n '2,3p' a.py"}), raw("2\n3\n"), dir, 1)
	if len(read) != 1 || *read[0].Offset != 2 || *read[0].Limit != 2 || string(read[0].Content) != "2\n3" {
		t.Errorf("sed read: %+v", read)
	}
	patch := "*** Begin Patch\n*** Update File: a.py\n@@\n 1\n-2\n+2\n*** End Patch\n"
	write := CodexReports("apply_patch", raw(map[string]string{"command": patch}),
		raw("Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nM a.py\n"), dir, 1)
	if len(write) != 1 || write[0].Kind != "write" || write[0].Path != filepath.Join(dir, "a.py") {
		t.Errorf("patch: %+v", write)
	}
	for _, tool := range []string{"Read", "Edit", "view_image"} {
		if got := CodexReports(tool, raw(map[string]string{"command": "cat a.py"}), raw("1\n2\n3\n4\n"), dir, 1); got != nil {
			t.Errorf("%s: %+v", tool, got)
		}
	}
	if got := CodexReports("Bash", raw(map[string]string{"command": "cat a.py | wc -l"}), raw("4\n"), dir, 1); got != nil {
		t.Errorf("a pipe: %+v", got)
	}
}

// The part commands print what PostCompact left, each its own part, and nothing once a part is
// empty, the parts are gone (PreCompact removed them) or they are too old to be this compaction's.
func TestCodexPartsFromPostCompact(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	st := &State{Dir: t.TempDir(), Now: func() time.Time { return now }}
	h := &Hook{P: &Payload{Source: "compact"}, St: st, SessionID: CodexSessionPrefix + "s1"}
	path := st.codexPartsPath(h.SessionID)
	if err := st.mkdir(path); err != nil {
		t.Fatal(err)
	}
	write := func(at time.Time, parts ...string) {
		b, _ := json.Marshal(codexParts{AtMS: at.UnixMilli(), Parts: parts})
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	text := func(part int) string {
		out := h.CodexSessionStart(context.Background(), part)
		if out.SystemMessage != "" {
			t.Errorf("part %d: a message %q", part, out.SystemMessage)
		}
		if out.HookSpecificOutput == nil {
			return ""
		}
		if out.HookSpecificOutput.HookEventName != "SessionStart" {
			t.Errorf("part %d: event %q", part, out.HookSpecificOutput.HookEventName)
		}
		return out.HookSpecificOutput.AdditionalContext
	}
	write(now.Add(-time.Second), "one", "two", "", "")
	for part, want := range map[int]string{1: "one", 2: "two", 3: "", 4: "", 5: "", 0: ""} {
		if got := text(part); got != want {
			t.Errorf("part %d: %q, want %q", part, got, want)
		}
	}
	write(now.Add(-codexPartsMaxAge-time.Second), "stale")
	if got := text(1); got != "" {
		t.Errorf("an old compaction's part: %q", got)
	}
	os.Remove(path)
	if got := text(1); got != "" {
		t.Errorf("no parts, yet %q", got)
	}
}
