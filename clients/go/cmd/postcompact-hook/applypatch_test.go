package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParsePatch(t *testing.T) {
	patch := strings.Join([]string{
		"*** Begin Patch",
		"*** Add File: src/new.py",
		"+NEW = 1",
		"+",
		"*** Delete File: old.py",
		"*** Update File: src/a.py",
		"*** Move to: src/b.py",
		"@@ def f():",
		" keep",
		"-gone",
		"+added",
		"",
		"@@",
		"+tail",
		"*** End of File",
		"*** Update File: c.py",
		" first hunk without its @@",
		"+x",
		"*** End Patch",
	}, "\n")
	ops, err := ParsePatch(patch)
	if err != nil {
		t.Fatal(err)
	}
	want := []PatchOp{
		{Kind: "add", Path: "src/new.py"},
		{Kind: "delete", Path: "old.py"},
		{Kind: "update", Path: "src/a.py", MoveTo: "src/b.py", Hunks: []PatchHunk{
			{After: "def f():", Lines: []string{" keep", "-gone", "+added", " "}},
			{Lines: []string{"+tail"}},
		}},
		{Kind: "update", Path: "c.py", Hunks: []PatchHunk{{Lines: []string{" first hunk without its @@", "+x"}}}},
	}
	if !reflect.DeepEqual(ops, want) {
		t.Errorf("got  %+v\nwant %+v", ops, want)
	}
	for _, bad := range []string{
		"",
		"*** Update File: a.py\n@@\n+x\n", // no Begin/End
		"*** Begin Patch\n*** End Patch",  // empty
		"*** Begin Patch\n*** Update File: a.py\n*** End Patch",                 // no hunk
		"*** Begin Patch\n*** Update File: a.py\n@@\n?x\n*** End Patch",         // not a hunk line
		"*** Begin Patch\n*** Frobnicate File: a.py\n*** End Patch",             // not an operation
		"*** Begin Patch\n*** Add File: \n+x\n*** End Patch",                    // no path
		"diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a\n+b", // a unified diff
	} {
		if ops, err := ParsePatch(bad); err == nil {
			t.Errorf("%q: parsed as %+v", bad, ops)
		}
	}
}

func TestChangedLines(t *testing.T) {
	content := "a\nb\nX\nc\nd\ne\nY\nZ\nf\n"
	for _, tc := range []struct {
		name   string
		hunks  []PatchHunk
		want   [][2]int64
		wantOK bool
	}{
		{"one added line", []PatchHunk{{Lines: []string{" b", "-old", "+X", " c"}}}, [][2]int64{{3, 3}}, true},
		{"two hunks in order", []PatchHunk{
			{Lines: []string{" b", "+X", " c"}},
			{Lines: []string{" e", "+Y", "+Z", " f"}},
		}, [][2]int64{{3, 3}, {7, 8}}, true},
		{"after its @@ line", []PatchHunk{{After: "d", Lines: []string{"+Y"}}}, [][2]int64{{7, 7}}, true},
		{"a deletion only", []PatchHunk{{Lines: []string{" a", "-gone", " b"}}}, [][2]int64{}, true},
		{"trailing spaces in the patch's context", []PatchHunk{{Lines: []string{" b  ", "+X"}}}, [][2]int64{{3, 3}}, true},
		{"not in the file", []PatchHunk{{Lines: []string{" q", "+X"}}}, nil, false},
		{"out of order", []PatchHunk{
			{Lines: []string{"+Y"}},
			{Lines: []string{"+X"}},
		}, nil, false},
	} {
		got, ok := ChangedLines(content, tc.hunks)
		if ok != tc.wantOK || (ok && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("%s: %v %v, want %v %v", tc.name, got, ok, tc.want, tc.wantOK)
		}
	}
}

func TestPatchReports(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.py", "one\nTWO\nthree\n") // as on disk after the patch
	write("new.py", "N\n")
	write("moved.py", "m\nM2\n")
	patch := "*** Begin Patch\n" +
		"*** Update File: a.py\n@@\n one\n-two\n+TWO\n three\n" +
		"*** Add File: new.py\n+N\n" +
		"*** Delete File: gone.py\n" +
		"*** Update File: old.py\n*** Move to: moved.py\n@@\n m\n+M2\n" +
		"*** End Patch\n"
	ok := "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nM a.py\n"
	got := PatchReports(patch, ok, dir, 5)
	if len(got) != 3 {
		t.Fatalf("%d reports, want 3 (the deleted file reports nothing): %+v", len(got), got)
	}
	a, n, m := got[0], got[1], got[2]
	if a.Path != filepath.Join(dir, "a.py") || !a.HasChanged || !reflect.DeepEqual(a.Changed, [][2]int64{{2, 2}}) {
		t.Errorf("update: %+v", a)
	}
	if n.Path != filepath.Join(dir, "new.py") || n.HasChanged || n.Kind != "write" {
		t.Errorf("add: %+v (a new file: the daemon takes all of it)", n)
	}
	if m.Path != filepath.Join(dir, "moved.py") || !reflect.DeepEqual(m.Changed, [][2]int64{{2, 2}}) {
		t.Errorf("move: %+v", m)
	}
	// A hunk not found on disk: the write is still recorded, its lines left to the daemon's diff.
	write("a.py", "rewritten since\n")
	if got := PatchReports(patch, ok, dir, 5); got[0].HasChanged {
		t.Errorf("changed lines of a hunk not on disk: %+v", got[0])
	}
	if got := PatchReports(patch, "Exit code: 1\nOutput:\nerror: the patch does not apply\n", dir, 5); got != nil {
		t.Errorf("a failed patch recorded: %+v", got)
	}
	if got := PatchReports("not a patch", ok, dir, 5); got != nil {
		t.Errorf("not a patch: %+v", got)
	}
}
