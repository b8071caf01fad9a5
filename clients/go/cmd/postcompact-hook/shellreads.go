package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Codex has no read tool: the agent reads files with shell commands (its exec_command tool,
// `Bash` in the hook payloads). ParseShellRead recognizes the plain ones, and only those:
//
//	cat FILE...                  the whole files
//	nl FILE, nl -ba FILE         the whole file
//	sed -n 'A,Bp' FILE           lines A..B (also 'Ap', 'A,$p')
//	head FILE, head -n N FILE    lines 1..N (10 by default; -N, -nN, --lines=N)
//	tail FILE, tail -n N FILE    the last N lines (10 by default); tail -n +K: line K to the end
//
// Anything else is refused, never guessed: a pipe, a redirection, a glob, a variable or any
// other expansion, several commands (`;`, `&&`, a newline), a subshell, an assignment, an
// option it does not know. Quotes are understood (single; double without `$`, backquote or `\`).

// ShellRead is one recognized read command: its files, as written (relative to the command's
// working directory unless absolute), and the range it prints.
type ShellRead struct {
	Command string // cat, nl, sed, head, tail
	Files   []string
	// The range: From..To (1-based, inclusive) for sed and head; From..end when To is 0
	// ("A,$p", "tail -n +K"); Last > 0 for tail -n N (the last N lines). All zero: the whole file.
	From, To, Last int64
}

// Whole reports whether the command prints whole files.
func (r ShellRead) Whole() bool { return r.From == 0 && r.To == 0 && r.Last == 0 }

// shellWords splits a command line into words, or refuses it (ok false) when it holds anything
// but plain words: unquoted metacharacters, expansions, globs, comments, several commands.
func shellWords(line string) (words []string, ok bool) {
	line = strings.TrimSpace(line)
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, false
			}
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			end := strings.IndexByte(line[i+1:], '"')
			if end < 0 {
				return nil, false
			}
			inner := line[i+1 : i+1+end]
			if strings.ContainsAny(inner, "$`\\") {
				return nil, false // an expansion (or an escape) inside double quotes
			}
			cur.WriteString(inner)
			i += end + 1
			inWord = true
		case c == '\\':
			return nil, false
		case strings.IndexByte("|&;<>()$`*?[]{}!#\n\r", c) >= 0:
			return nil, false
		case c == '~' && !inWord:
			return nil, false // the home folder's expansion
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, len(words) > 0
}

var (
	sedRange = regexp.MustCompile(`^([0-9]+)(?:,([0-9]+|\$))?p$`)
	count    = regexp.MustCompile(`^[0-9]+$`)
)

// ParseShellRead recognizes a plain read command (see above); ok is false for anything else.
func ParseShellRead(command string) (r ShellRead, ok bool) {
	words, ok := shellWords(command)
	if !ok {
		return ShellRead{}, false
	}
	name, args := words[0], words[1:]
	if strings.Contains(name, "=") {
		return ShellRead{}, false // an assignment before the command
	}
	r.Command = name
	switch name {
	case "cat":
		if len(args) > 0 && args[0] == "--" {
			args = args[1:]
		}
		r.Files = args
	case "nl":
		if len(args) > 0 && args[0] == "-ba" {
			args = args[1:]
		}
		if len(args) != 1 {
			return ShellRead{}, false
		}
		r.Files = args
	case "sed":
		if len(args) != 3 || args[0] != "-n" {
			return ShellRead{}, false
		}
		m := sedRange.FindStringSubmatch(args[1])
		if m == nil {
			return ShellRead{}, false
		}
		from, _ := strconv.ParseInt(m[1], 10, 64)
		to := from
		switch m[2] {
		case "":
		case "$":
			to = 0
		default:
			to, _ = strconv.ParseInt(m[2], 10, 64)
			if to < from {
				return ShellRead{}, false
			}
		}
		if from < 1 {
			return ShellRead{}, false
		}
		r.From, r.To, r.Files = from, to, args[2:]
	case "head", "tail":
		n, plus, rest, ok := lineCount(args)
		if !ok || len(rest) != 1 {
			return ShellRead{}, false
		}
		r.Files = rest
		switch {
		case name == "head" && !plus && n >= 1:
			r.From, r.To = 1, n
		case name == "tail" && plus && n >= 1:
			r.From = n
		case name == "tail" && !plus && n >= 1:
			r.Last = n
		default:
			return ShellRead{}, false
		}
	default:
		return ShellRead{}, false
	}
	if len(r.Files) == 0 {
		return ShellRead{}, false // reads standard input
	}
	for _, f := range r.Files {
		if f == "" || strings.HasPrefix(f, "-") {
			return ShellRead{}, false // an option it does not know, or standard input
		}
	}
	return r, true
}

// lineCount parses head's or tail's line count: none (10), `-n N`, `-nN`, `--lines=N`, `-N`;
// plus is a `+K` count (tail: from line K). The other arguments are returned.
func lineCount(args []string) (n int64, plus bool, rest []string, ok bool) {
	n = 10
	value := ""
	switch {
	case len(args) == 0:
		return 0, false, nil, false
	case args[0] == "-n" && len(args) >= 2:
		value, rest = args[1], args[2:]
	case strings.HasPrefix(args[0], "--lines="):
		value, rest = strings.TrimPrefix(args[0], "--lines="), args[1:]
	case strings.HasPrefix(args[0], "-n") && len(args[0]) > 2:
		value, rest = args[0][2:], args[1:]
	case len(args[0]) > 1 && args[0][0] == '-' && count.MatchString(args[0][1:]):
		value, rest = args[0][1:], args[1:]
	default:
		return n, false, args, true
	}
	if strings.HasPrefix(value, "+") {
		plus, value = true, value[1:]
	}
	if !count.MatchString(value) {
		return 0, false, nil, false // -n -5 (all but the last), a suffix (1K), nothing
	}
	n, err := strconv.ParseInt(value, 10, 64)
	if err != nil {
		return 0, false, nil, false
	}
	return n, plus, rest, true
}

// maxShellReadBytes: a larger file is not read back (a `head` of a big log would cost the tool
// call its whole read; a whole read of it would not be restored anyway).
const maxShellReadBytes = 8 << 20

// fileLines splits a file's text as sed counts its lines: a final newline ends the last line.
func fileLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// ReadReports turns a recognized read into the reads to record: each file as it is on disk
// (resolved against cwd), with the range the command printed. A read is kept only when what the
// command printed (output, the tool's response) is exactly what the file holds there now: then
// the agent saw that text, of that file. A file that is not one (gone, a directory) or whose
// text differs (a cd the hook cannot see, a change since, the output cut) reports nothing.
func ReadReports(r ShellRead, cwd, output string, atMS int64) []*Report {
	output = strings.ReplaceAll(output, "\r\n", "\n")
	var reports []*Report
	var printed strings.Builder
	for _, f := range r.Files {
		path := f
		if !filepath.IsAbs(path) {
			if cwd == "" {
				return nil
			}
			path = filepath.Join(cwd, path)
		}
		if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() || st.Size() > maxShellReadBytes {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		text := string(b)
		lines := fileLines(text)
		total := int64(len(lines))
		from, to := int64(1), total
		switch {
		case r.Last > 0:
			from = max(total-r.Last+1, 1)
		case r.From > 0:
			from = r.From
			if r.To > 0 {
				to = min(r.To, total)
			}
		}
		if from > total {
			return nil // nothing printed of it
		}
		seen := strings.Join(lines[from-1:to], "")
		rep := &Report{Kind: "read", Path: path, AtMS: atMS}
		if from == 1 && to == total {
			rep.Content = b
		} else {
			// A range's text as a Read gives it: its lines, without the newline that ends the
			// last (the daemon counts the empty line after a final newline as one more).
			limit := to - from + 1
			rep.Content, rep.Offset, rep.Limit = []byte(strings.TrimSuffix(seen, "\n")), &from, &limit
		}
		if r.Command == "nl" {
			if !numbered(output, lines) {
				return nil
			}
		} else {
			printed.WriteString(seen)
		}
		reports = append(reports, rep)
	}
	if r.Command != "nl" && printed.String() != output {
		return nil
	}
	return reports
}

var nlPrefix = regexp.MustCompile(`^ *[0-9]+\t`)

// numbered reports whether output is nl's numbering of lines: one output line per line, each
// the line after its number and a tab (an empty line may be left unnumbered).
func numbered(output string, lines []string) bool {
	out := fileLines(output)
	if len(out) != len(lines) {
		return false
	}
	for i, line := range lines {
		got := strings.TrimSuffix(out[i], "\n")
		want := strings.TrimSuffix(line, "\n")
		if want == "" && strings.TrimSpace(got) == "" {
			continue // an empty line nl left unnumbered
		}
		if !nlPrefix.MatchString(got) || nlPrefix.ReplaceAllString(got, "") != want {
			return false
		}
	}
	return true
}
