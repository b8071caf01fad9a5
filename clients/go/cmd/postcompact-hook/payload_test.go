package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestPatchLines(t *testing.T) {
	cases := []struct {
		patch string
		want  [][2]int64
		ok    bool
	}{
		{`[{"oldStart":1,"oldLines":2,"newStart":1,"newLines":2,"lines":[" alpha","-beta","+gamma"]}]`, [][2]int64{{2, 2}}, true},
		{`[{"newStart":10,"lines":[" a","+b","+c"," d","+e"]},{"newStart":40,"lines":["+x"]}]`, [][2]int64{{11, 12}, {14, 14}, {40, 40}}, true},
		{`[{"newStart":3,"lines":[" a","-b","\\ No newline at end of file"]}]`, [][2]int64{}, true}, // a deletion only
		{`[]`, nil, false},
		{``, nil, false},
		{`[{"lines":["+a"]}]`, nil, false},
		{`{"not":"a list"}`, nil, false},
	}
	for _, c := range cases {
		got, ok := PatchLines(json.RawMessage(c.patch))
		if ok != c.ok || (c.ok && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("PatchLines(%s) = %v, %v; want %v, %v", c.patch, got, ok, c.want, c.ok)
		}
	}
}

func TestDetectHarness(t *testing.T) {
	none := func(string) string { return "" }
	if h := DetectHarness(&Payload{PromptID: "p"}, none); h != HarnessClaudeCode {
		t.Fatal(h)
	}
	if h := DetectHarness(&Payload{TurnID: "t"}, none); h != HarnessCodex {
		t.Fatal(h)
	}
	claude := func(k string) string {
		if k == "CLAUDECODE" {
			return "1"
		}
		return ""
	}
	if h := DetectHarness(&Payload{TurnID: "t"}, claude); h != HarnessClaudeCode {
		t.Fatal(h)
	}
}

// The payloads below are as Claude Code 2.1.336 sends them (clients/claude-code/plugins/postcompact/README.md).
func TestReportForRead(t *testing.T) {
	whole := ReportFor("Read", json.RawMessage(`{"file_path":"/p/a.txt"}`),
		json.RawMessage(`{"type":"text","file":{"filePath":"/p/a.txt","content":"alpha\nbeta\n","numLines":3,"startLine":1,"totalLines":3}}`), "/p", "/h", 7)
	if whole == nil || whole.Kind != "read" || string(whole.Content) != "alpha\nbeta\n" || whole.Offset != nil || whole.Limit != nil || whole.AtMS != 7 {
		t.Fatalf("whole read: %+v", whole)
	}
	ranged := ReportFor("Read", json.RawMessage(`{"file_path":"/p/b.txt","offset":10,"limit":5}`),
		json.RawMessage(`{"type":"text","file":{"filePath":"/p/b.txt","content":"b9\nb10\nb11\nb12\nb13","numLines":5,"startLine":10,"totalLines":101}}`), "/p", "/h", 7)
	if ranged == nil || *ranged.Offset != 10 || *ranged.Limit != 5 {
		t.Fatalf("ranged read: %+v", ranged)
	}
	cut := ReportFor("Read", json.RawMessage(`{"file_path":"/p/c.txt"}`),
		json.RawMessage(`{"type":"text","file":{"filePath":"/p/c.txt","content":"x","numLines":2000,"startLine":1,"totalLines":3000}}`), "/p", "/h", 7)
	if cut == nil || *cut.Offset != 1 || *cut.Limit != 2000 {
		t.Fatalf("a read Claude Code cut at its line limit: %+v", cut)
	}
	if r := ReportFor("Read", json.RawMessage(`{"file_path":"/p/i.png"}`), json.RawMessage(`{"type":"image","file":{}}`), "/p", "/h", 7); r != nil {
		t.Fatalf("an image read reported: %+v", r)
	}
}

func TestReportForWrites(t *testing.T) {
	edit := ReportFor("Edit", json.RawMessage(`{"file_path":"/p/a.txt","old_string":"beta","new_string":"gamma"}`),
		json.RawMessage(`{"filePath":"/p/a.txt","oldString":"beta","newString":"gamma","originalFile":"alpha\nbeta\n","structuredPatch":[{"oldStart":1,"oldLines":2,"newStart":1,"newLines":2,"lines":[" alpha","-beta","+gamma"]}],"userModified":false,"replaceAll":false}`), "/p", "/h", 7)
	if edit == nil || edit.Kind != "write" || !edit.HasChanged || !reflect.DeepEqual(edit.Changed, [][2]int64{{2, 2}}) {
		t.Fatalf("edit: %+v", edit)
	}
	create := ReportFor("Write", json.RawMessage(`{"file_path":"/p/c.txt","content":"new\n"}`),
		json.RawMessage(`{"type":"create","filePath":"/p/c.txt","content":"new\n","structuredPatch":[],"originalFile":null,"userModified":false}`), "/p", "/h", 7)
	if create == nil || create.HasChanged || create.Path != "/p/c.txt" {
		t.Fatalf("create: %+v", create)
	}
}

func TestFindSkill(t *testing.T) {
	root := t.TempDir()
	project, home := filepath.Join(root, "home", "u", "proj"), filepath.Join(root, "home", "u")
	write := func(dir, body string) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(project, ".claude", "skills", "demo"), "---\nname: demo\ndescription: d\n---\n\nDo the demo.\n")
	write(filepath.Join(home, ".claude", "skills", "mine"), "Mine, no front matter.\n")
	path, text := FindSkill("demo", filepath.Join(project, "sub"), home)
	want := "Base directory for this skill: " + filepath.Join(project, ".claude", "skills", "demo") + "\n\nDo the demo.\n"
	if path != "projectSettings:demo" || string(text) != want {
		t.Fatalf("project skill: %q %q", path, text)
	}
	path, text = FindSkill("mine", project, home)
	if path != "userSettings:mine" || !strings.HasSuffix(string(text), "\n\nMine, no front matter.\n") {
		t.Fatalf("user skill: %q %q", path, text)
	}
	for _, name := range []string{"absent", "plugin:skill", "../x", ""} {
		if _, text := FindSkill(name, project, home); text != nil {
			t.Fatalf("FindSkill(%q) found %q", name, text)
		}
	}
}
