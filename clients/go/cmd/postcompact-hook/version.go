package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// TestedClaudeCode is the Claude Code version the plugin was tested with (tests/claude_code).
const TestedClaudeCode = "2.1.336"

var versionRE = regexp.MustCompile(`^\d+\.\d+\.\d+`)

// ClaudeCodeVersion is the version of the Claude Code that runs the hook ("" when unknown): the
// package.json beside its executable (/proc/$CLAUDE_PID/exe; an npm install), else a version in
// the executable's own name (the native installer's versions/<version>).
func ClaudeCodeVersion(_ *Payload) string {
	pid := os.Getenv("CLAUDE_PID")
	if pid == "" {
		return ""
	}
	exe, err := os.Readlink(filepath.Join("/proc", pid, "exe"))
	if err != nil {
		return ""
	}
	if v := packageVersion(filepath.Join(filepath.Dir(exe), "package.json")); v != "" {
		return v
	}
	if m := versionRE.FindString(filepath.Base(exe)); m != "" {
		return m
	}
	return ""
}

func packageVersion(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var pkg struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if json.Unmarshal(b, &pkg) != nil || !strings.HasPrefix(pkg.Name, "@anthropic-ai/claude-code") {
		return ""
	}
	return versionRE.FindString(pkg.Version)
}

// Newer reports whether version a is newer than b (dotted numbers; anything else is not newer).
func Newer(a, b string) bool {
	pa, pb := strings.Split(versionRE.FindString(a), "."), strings.Split(versionRE.FindString(b), ".")
	if len(pa) != 3 || len(pb) != 3 {
		return false
	}
	for i := range 3 {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x > y
		}
	}
	return false
}

// VersionWarning is the warning, once per Claude Code version (a marker in the state
// directory), that Claude Code is newer than the version the plugin was tested with: its hook
// payloads or its own restoration may have changed.
func VersionWarning(st *State, version string) string {
	if !Newer(version, TestedClaudeCode) {
		return ""
	}
	if !st.Once(filepath.Join(st.Dir, "warned-claude-code-"+version)) {
		return ""
	}
	return fmt.Sprintf("postcompact: Claude Code %s is newer than %s, the version this plugin was "+
		"tested with; if files restored after a compaction look wrong, `postcompact preview "+
		"<session>` shows what it would restore (this warning is shown once).", version, TestedClaudeCode)
}
