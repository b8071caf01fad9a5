package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestDetectHarnessGemini(t *testing.T) {
	none := func(string) string { return "" }
	gemEnv := func(k string) string {
		if k == "GEMINI_SESSION_ID" {
			return "s1"
		}
		return ""
	}
	if h := DetectHarness(&Payload{HookEventName: "SessionStart"}, gemEnv); h != HarnessGemini {
		t.Errorf("GEMINI_SESSION_ID set: %s", h)
	}
	for _, ev := range []string{"AfterTool", "BeforeModel"} {
		if h := DetectHarness(&Payload{HookEventName: ev}, none); h != HarnessGemini {
			t.Errorf("%s: %s", ev, h)
		}
	}
	if h := DetectHarness(&Payload{HookEventName: "PostToolUse"}, none); h != HarnessClaudeCode {
		t.Errorf("Claude Code's PostToolUse: %s", h)
	}
}

func raw(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func TestGeminiReportForRead(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for i := 1; i <= 30; i++ {
		lines = append(lines, "line "+strings.Repeat("x", i%3)+string(rune('a'+i%26)))
	}
	disk := strings.Join(lines, "\n") + "\n"
	os.WriteFile(filepath.Join(dir, "a.py"), []byte(disk), 0o644)

	// A whole read, a relative path: the file as on disk, no range.
	r := GeminiReportFor("read_file", raw(map[string]any{"file_path": "a.py"}), raw("1: ..."), nil, nil, dir, 5)
	if r == nil || r.Kind != "read" || r.Path != filepath.Join(dir, "a.py") || string(r.Content) != disk || r.Offset != nil {
		t.Fatalf("whole read: %+v", r)
	}
	// A range from start_line/end_line: those lines, raw.
	r = GeminiReportFor("read_file", raw(map[string]any{"file_path": filepath.Join(dir, "a.py"), "start_line": 5, "end_line": 9}),
		raw("\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines 5-9 of 30 total lines.\n"), nil, raw(nil), dir, 5)
	if r == nil || *r.Offset != 5 || *r.Limit != 5 || string(r.Content) != strings.Join(lines[4:9], "\n") {
		t.Fatalf("ranged read: %+v", r)
	}
	// The note wins (read_file cut a whole read at its limit); an end past the file is cut.
	r = GeminiReportFor("read_file", raw(map[string]any{"file_path": "a.py"}), raw("Status: Showing lines 1-20 of 30 total lines."), nil, nil, dir, 5)
	if r == nil || *r.Offset != 1 || *r.Limit != 20 {
		t.Fatalf("cut read: %+v", r)
	}
	r = GeminiReportFor("read_file", raw(map[string]any{"file_path": "a.py", "start_line": 28, "end_line": 99}), raw("x"), nil, nil, dir, 5)
	if r == nil || *r.Offset != 28 || *r.Limit != 3 {
		t.Fatalf("range past the end: %+v", r)
	}
	// A failed call, an image (parts, not a string), a missing file: nothing.
	if GeminiReportFor("read_file", raw(map[string]any{"file_path": "a.py"}), raw("x"), nil, raw(map[string]string{"message": "no"}), dir, 5) != nil {
		t.Error("a failed read reported")
	}
	if GeminiReportFor("read_file", raw(map[string]any{"file_path": "a.py"}), raw(map[string]any{"inlineData": 1}), nil, nil, dir, 5) != nil {
		t.Error("an image reported")
	}
	if GeminiReportFor("read_file", raw(map[string]any{"file_path": "gone.py"}), raw("x"), nil, nil, dir, 5) != nil {
		t.Error("a missing file reported")
	}
}

func TestGeminiReportForWrites(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "b.py"), []byte("a\nb\nNEW1\nNEW2\ne\nf\n"), 0o644)
	r := GeminiReportFor("replace", raw(map[string]any{"file_path": "b.py", "old_string": "b\nc\nd\ne", "new_string": "b\nNEW1\nNEW2\ne"}), raw("Successfully modified file"), nil, nil, dir, 5)
	if r == nil || r.Kind != "write" || !r.HasChanged || !reflect.DeepEqual(r.Changed, [][2]int64{{3, 4}}) {
		t.Fatalf("replace: %+v", r)
	}
	r = GeminiReportFor("write_file", raw(map[string]any{"file_path": "c.py", "content": "x"}), raw("Successfully created"), nil, nil, dir, 5)
	if r == nil || r.Kind != "write" || r.Path != filepath.Join(dir, "c.py") || r.HasChanged {
		t.Fatalf("write_file: %+v", r)
	}
}

func TestEditLines(t *testing.T) {
	// disk is the file after the edit.
	cases := []struct {
		disk, old, new string
		multi          bool
		want           [][2]int64
		ok             bool
	}{
		{"one\ntwo\nTHREE\nfour\n", "three", "THREE", false, [][2]int64{{3, 3}}, true},
		{"one\ntwo\nthree\nfour\n", "x\nthree\ny", "two\nthree\nfour", false, [][2]int64{{2, 4}}, true},
		{"one\ntwo\nthree\nfour\n", "two\nthree", "two\nthree\nfour", false, [][2]int64{{4, 4}}, true},
		{"one\ntwo\nthree\ntwo\n", "a", "two", true, [][2]int64{{2, 2}, {4, 4}}, true},
		{"one\ntwo\nthree\ntwo\n", "a", "two", false, nil, false}, // twice, one replaced: which?
		{"one\ntwo\n", "a", "absent", false, nil, false},          // corrected by Gemini: the daemon diffs
		{"one\ntwo\n", "a\nb\nc", "", false, [][2]int64{}, true},
		{"one\nthree\n", "one\nX\nthree", "one\nthree", false, [][2]int64{}, true}, // a deletion inside
	}
	for i, c := range cases {
		got, ok := EditLines(c.disk, c.old, c.new, c.multi)
		if c.ok != ok || (ok && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("case %d: %v %v, want %v %v", i, got, ok, c.want, c.ok)
		}
	}
}

func TestGeminiReportForSkill(t *testing.T) {
	text := "<activated_skill name=\"deploy\">\n  <instructions>\n    Run it.\n  </instructions>\n</activated_skill>"
	r := GeminiReportFor("activate_skill", raw(map[string]any{"name": "deploy"}), raw(text),
		raw("Skill **deploy** activated. Resources loaded from `/p/.gemini/skills/deploy`:\n\n..."), nil, "/p", 5)
	if r == nil || r.Kind != "skill" || r.SkillName != "deploy" || r.SkillPath != "/p/.gemini/skills/deploy/SKILL.md" || string(r.Content) != text {
		t.Fatalf("skill: %+v", r)
	}
	if GeminiReportFor("activate_skill", raw(map[string]any{"name": "x"}), raw("Error: Skill \"x\" not found."), nil, raw(map[string]string{"message": "not found"}), "/p", 5) != nil {
		t.Error("a failed activation reported")
	}
	if GeminiReportFor("run_shell_command", raw(map[string]any{"command": "cat a"}), raw("x"), nil, nil, "/p", 5) != nil {
		t.Error("a shell command reported")
	}
}

// The extension's hooks.json runs this program on the events it handles, each with a timeout
// (milliseconds, in Gemini CLI) longer than the program's own deadline for it.
func TestGeminiHooksJSON(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "gemini-cli", "hooks", "hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Command string `json:"command"`
				Timeout int64  `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for ev, groups := range doc.Hooks {
		limit, ok := geminiDeadlines[ev]
		if !ok {
			t.Errorf("hooks.json runs the hook on %s, which it does not handle", ev)
		}
		for _, g := range groups {
			for _, h := range g.Hooks {
				if h.Command != `"${extensionPath}${/}bin${/}postcompact-hook"` || h.Timeout <= limit.Milliseconds() {
					t.Errorf("%s: %q, timeout %d ms for a deadline of %v", ev, h.Command, h.Timeout, limit)
				}
			}
		}
	}
	for ev := range geminiDeadlines {
		if doc.Hooks[ev] == nil {
			t.Errorf("hooks.json does not run the hook on %s", ev)
		}
	}
	for _, tool := range []string{"read_file", "replace", "write_file", "activate_skill"} {
		re := regexp.MustCompile(doc.Hooks["AfterTool"][0].Matcher)
		if !re.MatchString(tool) || re.MatchString("x"+tool) {
			t.Errorf("the AfterTool matcher and %s", tool)
		}
	}
}

// A daemon that cannot start: the session goes on; SessionStart says why once (its
// systemMessage, which Gemini CLI shows the user), the log says it too, and a tool call after it
// prints nothing and waits on no second start (the back-off marker).
func TestGeminiDaemonDown(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "postcompact")
	os.WriteFile(fake, []byte("#!/bin/sh\necho 'postcompact: made unstartable by the test' >&2\nexit 1\n"), 0o755)
	t.Setenv("POSTCOMPACT_HOOK_STATE", filepath.Join(dir, "state"))
	t.Setenv("POSTCOMPACT_ADDRESS", "unix://"+filepath.Join(dir, "none.sock"))
	t.Setenv("POSTCOMPACT_BIN", fake)
	t.Setenv("GEMINI_SESSION_ID", "s1")
	os.WriteFile(filepath.Join(dir, "a.py"), []byte("x = 1\n"), 0o644)
	event := func(v map[string]any) *strings.Reader {
		v["session_id"], v["cwd"] = "s1", dir
		b, _ := json.Marshal(v)
		return strings.NewReader(string(b))
	}
	var out strings.Builder
	run(event(map[string]any{"hook_event_name": "SessionStart", "source": "startup"}), &out, 0, false)
	var o Output
	if err := json.Unmarshal([]byte(out.String()), &o); err != nil || !strings.Contains(o.SystemMessage, "made unstartable by the test") {
		t.Fatalf("SessionStart's output: %q (%v)", out.String(), err)
	}
	out.Reset()
	run(event(map[string]any{"hook_event_name": "AfterTool", "tool_name": "read_file",
		"tool_input": map[string]any{"file_path": "a.py"}, "tool_response": map[string]any{"llmContent": "x = 1"}}), &out, 0, false)
	run(event(map[string]any{"hook_event_name": "SessionStart", "source": "resume"}), &out, 0, false)
	if out.Len() != 0 {
		t.Fatalf("said twice: %q", out.String())
	}
	log, _ := os.ReadFile(filepath.Join(dir, "state", "hook.log"))
	if strings.Count(string(log), "could not be started") != 1 {
		t.Fatalf("hook.log: %s", log)
	}
}
