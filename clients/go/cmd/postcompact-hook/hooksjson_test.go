package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// hooks.json runs one SessionStart(compact) command per part, and the tool hooks async.
func TestHooksJSONMatchesTheProgram(t *testing.T) {
	path := filepath.Join("..", "..", "..", "claude-code", "plugins", "postcompact", "hooks", "hooks.json")
	b, err := os.ReadFile(path)
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
	const hook = `"${CLAUDE_PLUGIN_ROOT}/bin/postcompact-hook"`
	var parts []string
	for _, group := range doc.Hooks["SessionStart"] {
		if group.Matcher != "compact" {
			continue
		}
		for _, h := range group.Hooks {
			parts = append(parts, h.Command)
		}
	}
	if len(parts) != Parts {
		t.Fatalf("%d SessionStart(compact) commands, the program prints %d parts", len(parts), Parts)
	}
	for i, c := range parts {
		if want := fmt.Sprintf("%s --part %d", hook, i+1); c != want {
			t.Errorf("part command %d: %q, want %q", i+1, c, want)
		}
	}
	post := doc.Hooks["PostToolUse"]
	if len(post) != 1 || post[0].Matcher != "Read|Edit|Write|Skill" || !post[0].Hooks[0].Async {
		t.Errorf("PostToolUse: %+v", post)
	}
	for event, limit := range deadlines {
		for _, group := range doc.Hooks[event] {
			for _, h := range group.Hooks {
				if h.Timeout*1000 <= int(limit.Milliseconds()) {
					t.Errorf("%s: Claude Code's timeout %d s is not above the program's %v", event, h.Timeout, limit)
				}
			}
		}
	}
	for _, event := range []string{"PreCompact", "PostCompact"} {
		if g := doc.Hooks[event]; len(g) != 1 || g[0].Hooks[0].Async {
			t.Errorf("%s must run once, synchronously: %+v", event, g)
		}
	}
}
