package main

import (
	"strings"
	"testing"
	"time"
)

func TestNewer(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"2.1.337", "2.1.336", true}, {"2.2.0", "2.1.336", true}, {"10.0.0", "9.9.9", true},
		{"2.1.336", "2.1.336", false}, {"2.1.88", "2.1.336", false}, {"", "2.1.336", false},
		{"2.1.400 (Claude Code)", "2.1.336", true}, {"garbage", "2.1.336", false},
	} {
		if got := Newer(c.a, c.b); got != c.want {
			t.Errorf("Newer(%q, %q) = %v", c.a, c.b, got)
		}
	}
}

func TestVersionWarningOncePerVersion(t *testing.T) {
	st := &State{Dir: t.TempDir(), Now: time.Now}
	if w := VersionWarning(st, TestedClaudeCode); w != "" {
		t.Fatalf("a warning for the tested version: %q", w)
	}
	w := VersionWarning(st, "2.1.400")
	if !strings.Contains(w, "2.1.400 is newer than "+TestedClaudeCode) {
		t.Fatalf("warning: %q", w)
	}
	if again := VersionWarning(st, "2.1.400"); again != "" {
		t.Fatalf("warned twice: %q", again)
	}
	if VersionWarning(st, "2.1.401") == "" {
		t.Fatal("a newer version again is not warned")
	}
}
