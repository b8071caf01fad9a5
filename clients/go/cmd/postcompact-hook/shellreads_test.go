package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseShellRead(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want *ShellRead // nil: refused
	}{
		{"cat src/a.py", &ShellRead{Command: "cat", Files: []string{"src/a.py"}}},
		{"cat -- a.py b.py", &ShellRead{Command: "cat", Files: []string{"a.py", "b.py"}}},
		{"  cat 'dir with space/a.py'  ", &ShellRead{Command: "cat", Files: []string{"dir with space/a.py"}}},
		{`cat "a.py"`, &ShellRead{Command: "cat", Files: []string{"a.py"}}},
		{"cat /abs/a.py", &ShellRead{Command: "cat", Files: []string{"/abs/a.py"}}},
		{"nl a.py", &ShellRead{Command: "nl", Files: []string{"a.py"}}},
		{"nl -ba a.py", &ShellRead{Command: "nl", Files: []string{"a.py"}}},
		{"sed -n '10,20p' a.py", &ShellRead{Command: "sed", Files: []string{"a.py"}, From: 10, To: 20}},
		{"sed -n 10,20p a.py", &ShellRead{Command: "sed", Files: []string{"a.py"}, From: 10, To: 20}},
		{`sed -n "7p" a.py`, &ShellRead{Command: "sed", Files: []string{"a.py"}, From: 7, To: 7}},
		{"sed -n '50,$p' a.py", &ShellRead{Command: "sed", Files: []string{"a.py"}, From: 50}},
		{"head a.py", &ShellRead{Command: "head", Files: []string{"a.py"}, From: 1, To: 10}},
		{"head -n 40 a.py", &ShellRead{Command: "head", Files: []string{"a.py"}, From: 1, To: 40}},
		{"head -40 a.py", &ShellRead{Command: "head", Files: []string{"a.py"}, From: 1, To: 40}},
		{"head -n40 a.py", &ShellRead{Command: "head", Files: []string{"a.py"}, From: 1, To: 40}},
		{"head --lines=40 a.py", &ShellRead{Command: "head", Files: []string{"a.py"}, From: 1, To: 40}},
		{"tail a.py", &ShellRead{Command: "tail", Files: []string{"a.py"}, Last: 10}},
		{"tail -n 5 a.py", &ShellRead{Command: "tail", Files: []string{"a.py"}, Last: 5}},
		{"tail -n +30 a.py", &ShellRead{Command: "tail", Files: []string{"a.py"}, From: 30}},
		// Refused: anything more than a plain read.
		{"cat a.py | head", nil},
		{"cat a.py > b.py", nil},
		{"cat < a.py", nil},
		{"cat *.py", nil},
		{"cat src/?.py", nil},
		{"cat src/[ab].py", nil},
		{"cat $FILE", nil},
		{"cat ${FILE}", nil},
		{`cat "$FILE"`, nil},
		{"cat `ls`", nil},
		{"cat $(ls)", nil},
		{"cat ~/a.py", nil},
		{"cat a.py; cat b.py", nil},
		{"cat a.py && cat b.py", nil},
		{"cat a.py\ncat b.py", nil},
		{"cd src && cat a.py", nil},
		{"(cat a.py)", nil},
		{"cat a.py &", nil},
		{"cat a.py # note", nil},
		{`cat a\ b.py`, nil},
		{"LANG=C cat a.py", nil},
		{"cat", nil},
		{"cat -n a.py", nil},
		{"cat -", nil},
		{"cat 'a.py", nil},
		{"sed -n '10,20p;30,40p' a.py", nil},
		{"sed -n '/x/p' a.py", nil},
		{"sed -n '20,10p' a.py", nil},
		{"sed -n '0,10p' a.py", nil},
		{"sed '10,20p' a.py", nil},
		{"sed -i 's/a/b/' a.py", nil},
		{"sed -n '10,20p' a.py b.py", nil},
		{"head -n -5 a.py", nil},
		{"head -c 100 a.py", nil},
		{"head -n 10 a.py b.py", nil},
		{"head -n +5 a.py", nil},
		{"tail -f a.py", nil},
		{"tail -n 1K a.py", nil},
		{"nl -v5 a.py", nil},
		{"grep x a.py", nil},
		{"python a.py", nil},
		{"", nil},
	} {
		got, ok := ParseShellRead(tc.cmd)
		switch {
		case tc.want == nil && ok:
			t.Errorf("%q: recognized as %+v, want refused", tc.cmd, got)
		case tc.want != nil && !ok:
			t.Errorf("%q: refused, want %+v", tc.cmd, *tc.want)
		case tc.want != nil && !reflect.DeepEqual(got, *tc.want):
			t.Errorf("%q: %+v, want %+v", tc.cmd, got, *tc.want)
		}
	}
}

func numberedText(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString("line " + strings.Repeat("x", i%7) + "\n")
	}
	return b.String()
}

func TestReadReports(t *testing.T) {
	dir := t.TempDir()
	text := numberedText(30)
	lines := fileLines(text)
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "src", "a.py")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	join := func(from, to int) string { return strings.Join(lines[from-1:to], "") }
	ranged := func(from, to int) string { return strings.TrimSuffix(join(from, to), "\n") }
	for _, tc := range []struct {
		cmd, output     string
		content         string
		offset, limit   int64 // 0: a whole read
		refusedByOutput bool
	}{
		{cmd: "cat src/a.py", output: text, content: text},
		{cmd: "sed -n '5,9p' src/a.py", output: join(5, 9), content: ranged(5, 9), offset: 5, limit: 5},
		{cmd: "sed -n '25,$p' src/a.py", output: join(25, 30), content: ranged(25, 30), offset: 25, limit: 6},
		{cmd: "sed -n '25,99p' src/a.py", output: join(25, 30), content: ranged(25, 30), offset: 25, limit: 6},
		{cmd: "head src/a.py", output: join(1, 10), content: ranged(1, 10), offset: 1, limit: 10},
		{cmd: "head -n 100 src/a.py", output: text, content: text},
		{cmd: "tail -n 3 src/a.py", output: join(28, 30), content: ranged(28, 30), offset: 28, limit: 3},
		{cmd: "tail -n +29 src/a.py", output: join(29, 30), content: ranged(29, 30), offset: 29, limit: 2},
		{cmd: "cat " + path, output: text, content: text},
		{cmd: "cat src/a.py", output: strings.ReplaceAll(text, "\n", "\r\n"), content: text},
		{cmd: "nl -ba src/a.py", output: nlOutput(lines), content: text},
		// What the command printed is not the file's text there: nothing is recorded.
		{cmd: "cat src/a.py", output: text[:40], refusedByOutput: true},
		{cmd: "sed -n '5,9p' src/a.py", output: join(5, 8), refusedByOutput: true},
		{cmd: "cat src/a.py", output: "cat: src/a.py: No such file or directory\n", refusedByOutput: true},
		{cmd: "cat src/missing.py", output: "", refusedByOutput: true},
		{cmd: "cat src", output: "", refusedByOutput: true},
		{cmd: "sed -n '40,50p' src/a.py", output: "", refusedByOutput: true},
		{cmd: "nl src/a.py", output: text, refusedByOutput: true},
	} {
		r, ok := ParseShellRead(tc.cmd)
		if !ok {
			t.Fatalf("%q: refused", tc.cmd)
		}
		got := ReadReports(r, dir, tc.output, 7)
		if tc.refusedByOutput {
			if got != nil {
				t.Errorf("%q with output %.30q: recorded %+v", tc.cmd, tc.output, got[0])
			}
			continue
		}
		if len(got) != 1 {
			t.Fatalf("%q: %d reports", tc.cmd, len(got))
		}
		g := got[0]
		if g.Path != path || g.Kind != "read" || string(g.Content) != tc.content || g.AtMS != 7 {
			t.Errorf("%q: %s %s %.40q", tc.cmd, g.Kind, g.Path, g.Content)
		}
		if tc.offset == 0 && (g.Offset != nil || g.Limit != nil) {
			t.Errorf("%q: a whole read with a range", tc.cmd)
		}
		if tc.offset != 0 && (g.Offset == nil || *g.Offset != tc.offset || g.Limit == nil || *g.Limit != tc.limit) {
			t.Errorf("%q: range %v %v, want %d,%d", tc.cmd, g.Offset, g.Limit, tc.offset, tc.limit)
		}
	}
	// Several files: each recorded, when the output is their texts one after the other.
	other := filepath.Join(dir, "b.py")
	if err := os.WriteFile(other, []byte("B\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, _ := ParseShellRead("cat src/a.py b.py")
	if got := ReadReports(r, dir, text+"B\n", 1); len(got) != 2 || got[1].Path != other {
		t.Errorf("cat of two files: %+v", got)
	}
	if got := ReadReports(r, "", text+"B\n", 1); got != nil {
		t.Errorf("relative paths without a cwd: %+v", got)
	}
	// A file over the size the hook reads back: nothing.
	huge := filepath.Join(dir, "huge.log")
	if err := os.WriteFile(huge, []byte(strings.Repeat("x\n", maxShellReadBytes/2+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r, _ = ParseShellRead("head -n 1 huge.log")
	if got := ReadReports(r, dir, "x\n", 1); got != nil {
		t.Errorf("a huge file read back: %+v", got)
	}
}

func nlOutput(lines []string) string {
	var b strings.Builder
	for i, l := range lines {
		b.WriteString(strings.Repeat(" ", 5) + string(rune('0'+(i+1)%10)) + "\t" + l)
	}
	return b.String()
}
