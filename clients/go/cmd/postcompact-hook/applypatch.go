package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Codex edits files with its apply_patch tool, whose input is a patch of its own format:
//
//	*** Begin Patch
//	*** Add File: path          then the new file's lines, each after "+"
//	*** Delete File: path
//	*** Update File: path       optionally "*** Move to: new path", then hunks: an "@@" line
//	                            (optionally "@@ a line the hunk comes after"), and lines after
//	                            " " (kept), "-" (removed) or "+" (added); "*** End of File"
//	*** End Patch
//
// The hunks carry no line numbers: ChangedLines finds each hunk's new text in the file as it is
// on disk after the patch, in order, as apply_patch places them.

// PatchOp is one file of a patch.
type PatchOp struct {
	Kind   string // "add", "delete", "update"
	Path   string
	MoveTo string // update: the file's new path ("" when it stays)
	Hunks  []PatchHunk
}

// PatchHunk is one hunk of an update: the line it comes after ("" for none) and its lines, each
// with its prefix (' ', '-', '+').
type PatchHunk struct {
	After string
	Lines []string
}

// ParsePatch parses an apply_patch input; an error for anything not of that format (nothing of
// it is then recorded).
func ParsePatch(patch string) ([]PatchOp, error) {
	lines := strings.Split(strings.ReplaceAll(strings.TrimSpace(patch), "\r\n", "\n"), "\n")
	if len(lines) < 2 || strings.TrimSpace(lines[0]) != "*** Begin Patch" ||
		strings.TrimSpace(lines[len(lines)-1]) != "*** End Patch" {
		return nil, errors.New("not a patch: no *** Begin Patch ... *** End Patch")
	}
	lines = lines[1 : len(lines)-1]
	var ops []PatchOp
	for i := 0; i < len(lines); {
		line := lines[i]
		switch {
		case strings.HasPrefix(line, "*** Add File: "):
			op := PatchOp{Kind: "add", Path: strings.TrimSpace(strings.TrimPrefix(line, "*** Add File: "))}
			for i++; i < len(lines) && strings.HasPrefix(lines[i], "+"); i++ {
			}
			ops = append(ops, op)
		case strings.HasPrefix(line, "*** Delete File: "):
			ops = append(ops, PatchOp{Kind: "delete", Path: strings.TrimSpace(strings.TrimPrefix(line, "*** Delete File: "))})
			i++
		case strings.HasPrefix(line, "*** Update File: "):
			op := PatchOp{Kind: "update", Path: strings.TrimSpace(strings.TrimPrefix(line, "*** Update File: "))}
			i++
			if i < len(lines) && strings.HasPrefix(lines[i], "*** Move to: ") {
				op.MoveTo = strings.TrimSpace(strings.TrimPrefix(lines[i], "*** Move to: "))
				i++
			}
			var cur *PatchHunk
			for ; i < len(lines) && (lines[i] == "*** End of File" || !strings.HasPrefix(lines[i], "*** ")); i++ {
				l := lines[i]
				switch {
				case l == "*** End of File":
				case l == "@@" || strings.HasPrefix(l, "@@ "):
					op.Hunks = append(op.Hunks, PatchHunk{After: strings.TrimPrefix(strings.TrimPrefix(l, "@@"), " ")})
					cur = &op.Hunks[len(op.Hunks)-1]
				case l == "" || l[0] == ' ' || l[0] == '-' || l[0] == '+':
					if cur == nil { // the first hunk may come without its "@@"
						op.Hunks = append(op.Hunks, PatchHunk{})
						cur = &op.Hunks[len(op.Hunks)-1]
					}
					if l == "" {
						l = " " // an empty kept line
					}
					cur.Lines = append(cur.Lines, l)
				default:
					return nil, fmt.Errorf("line %q of %s is not a hunk line", l, op.Path)
				}
			}
			if len(op.Hunks) == 0 {
				return nil, fmt.Errorf("update of %s without a hunk", op.Path)
			}
			ops = append(ops, op)
		case strings.TrimSpace(line) == "":
			i++
		default:
			return nil, fmt.Errorf("unexpected line %q", line)
		}
	}
	for _, op := range ops {
		if op.Path == "" {
			return nil, errors.New("a file without a path")
		}
	}
	if len(ops) == 0 {
		return nil, errors.New("an empty patch")
	}
	return ops, nil
}

// ChangedLines finds the lines an update's hunks added in the file's new text (as a Read counts
// them), as 1-based inclusive ranges: each hunk's kept and added lines are a block of the new
// text, found after the previous hunk (and after its "@@" line, when it names one), exactly or
// else but for trailing whitespace. ok is false when a hunk is not found: the daemon then diffs
// the content itself. A hunk that only removes lines marks none.
func ChangedLines(content string, hunks []PatchHunk) (ranges [][2]int64, ok bool) {
	lines := strings.Split(content, "\n")
	ranges = [][2]int64{}
	pos := 0
	for _, h := range hunks {
		var block []string
		var added []bool
		for _, l := range h.Lines {
			if l[0] == '-' {
				continue
			}
			block = append(block, l[1:])
			added = append(added, l[0] == '+')
		}
		if h.After != "" {
			at := find(lines, []string{h.After}, pos)
			if at < 0 {
				return nil, false
			}
			pos = at + 1
		}
		if len(block) == 0 {
			continue
		}
		at := find(lines, block, pos)
		if at < 0 {
			return nil, false
		}
		for j, plus := range added {
			if !plus {
				continue
			}
			n := int64(at + j + 1)
			if k := len(ranges); k > 0 && ranges[k-1][1] == n-1 {
				ranges[k-1][1] = n
			} else {
				ranges = append(ranges, [2]int64{n, n})
			}
		}
		pos = at + len(block)
	}
	return ranges, true
}

// find returns the first index at or after from where block appears in lines: exactly, else with
// trailing whitespace ignored; -1 when it does not.
func find(lines, block []string, from int) int {
	for _, same := range []func(a, b string) bool{
		func(a, b string) bool { return a == b },
		func(a, b string) bool { return strings.TrimRight(a, " \t") == strings.TrimRight(b, " \t") },
	} {
	next:
		for i := from; i+len(block) <= len(lines); i++ {
			for j, b := range block {
				if !same(lines[i+j], b) {
					continue next
				}
			}
			return i
		}
	}
	return -1
}

var exitCode = regexp.MustCompile(`(?m)^Exit code: (-?[0-9]+)$`)

// PatchReports turns an applied patch into the writes to record: an added file as a new one
// (the daemon takes all of it), an updated one with the lines its hunks added (or, when they are
// not found, none given: the daemon diffs), under its new path when it moved. A deleted file
// reports nothing (it is gone: the daemon finds so at the next compaction). A patch whose
// response says it failed (an exit code other than 0) reports nothing: it changed no file.
func PatchReports(patch, response, cwd string, atMS int64) []*Report {
	if m := exitCode.FindStringSubmatch(response); m != nil {
		if code, _ := strconv.Atoi(m[1]); code != 0 {
			return nil
		}
	}
	ops, err := ParsePatch(patch)
	if err != nil {
		return nil
	}
	abs := func(p string) string {
		if filepath.IsAbs(p) || cwd == "" {
			return p
		}
		return filepath.Join(cwd, p)
	}
	var out []*Report
	for _, op := range ops {
		switch op.Kind {
		case "add":
			out = append(out, &Report{Kind: "write", Path: abs(op.Path), AtMS: atMS})
		case "update":
			path := abs(op.Path)
			if op.MoveTo != "" {
				path = abs(op.MoveTo)
			}
			r := &Report{Kind: "write", Path: path, AtMS: atMS}
			if b, err := os.ReadFile(path); err == nil {
				r.Changed, r.HasChanged = ChangedLines(string(b), op.Hunks)
			}
			out = append(out, r)
		}
	}
	return out
}
