package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// StateDir is where the hook keeps what its processes share: $XDG_STATE_HOME/postcompact/hooks
// (~/.local/state/postcompact/hooks), beside the daemon's own state. POSTCOMPACT_HOOK_STATE
// names another directory.
func StateDir() string {
	if d := os.Getenv("POSTCOMPACT_HOOK_STATE"); d != "" {
		return d
	}
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			home = os.TempDir()
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "postcompact", "hooks")
}

// State is the hook's shared directory: the daemon start's back-off marker and lock, and per
// session the tool calls reported and whether the user was told the daemon is down.
type State struct {
	Dir string
	Now func() time.Time
}

func newState() *State { return &State{Dir: StateDir(), Now: time.Now} }

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// sessionFile is the path of one of a session's files (its id made safe for a file name).
func (s *State) sessionFile(session, suffix string) string {
	return filepath.Join(s.Dir, "sessions", unsafeName.ReplaceAllString(session, "_")+suffix)
}

func (s *State) mkdir(path string) error { return os.MkdirAll(filepath.Dir(path), 0o700) }

// Once creates the marker at path and reports true the first time only, across processes
// (O_EXCL): what makes a message appear once.
func (s *State) Once(path string) bool {
	if s.mkdir(path) != nil {
		return false
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false
	}
	fmt.Fprintln(f, s.Now().UTC().Format(time.RFC3339))
	f.Close()
	return true
}

// --- the back-off after a failed daemon start -------------------------------------------------

// StartFailure is the back-off marker: written when a start failed, removed when a daemon
// serves. While it is fresh no hook process tries to start the daemon again.
type StartFailure struct {
	AtMS     int64  `json:"at_ms"`
	Failures int    `json:"failures"`
	Reason   string `json:"reason"`
}

const (
	backoffFirst = 30 * time.Second
	backoffMax   = 10 * time.Minute
)

// Backoff is how long after the n-th failure in a row no start is tried: 30 s, doubling, at most
// 10 minutes.
func Backoff(failures int) time.Duration {
	d := backoffFirst
	for i := 1; i < failures && d < backoffMax; i++ {
		d *= 2
	}
	return min(d, backoffMax)
}

func (s *State) failurePath() string { return filepath.Join(s.Dir, "daemon-start-failed.json") }

// LastFailure returns the marker, nil when there is none (or it cannot be read).
func (s *State) LastFailure() *StartFailure {
	b, err := os.ReadFile(s.failurePath())
	if err != nil {
		return nil
	}
	var f StartFailure
	if json.Unmarshal(b, &f) != nil {
		return nil
	}
	return &f
}

// InBackoff reports the marker when it is still fresh: no start is to be tried now.
func (s *State) InBackoff() *StartFailure {
	f := s.LastFailure()
	if f == nil {
		return nil
	}
	if s.Now().Sub(time.UnixMilli(f.AtMS)) < Backoff(f.Failures) {
		return f
	}
	return nil
}

// RecordFailure writes the marker (atomically: a rename), counting the failures in a row.
func (s *State) RecordFailure(reason string) {
	failures := 1
	if prev := s.LastFailure(); prev != nil {
		failures = prev.Failures + 1
	}
	f := StartFailure{AtMS: s.Now().UnixMilli(), Failures: failures, Reason: reason}
	b, _ := json.Marshal(f)
	path := s.failurePath()
	if s.mkdir(path) != nil {
		return
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	if os.WriteFile(tmp, b, 0o600) == nil {
		if os.Rename(tmp, path) != nil {
			os.Remove(tmp)
		}
	}
}

// ClearFailure removes the marker: a daemon serves.
func (s *State) ClearFailure() {
	if _, err := os.Stat(s.failurePath()); err == nil {
		os.Remove(s.failurePath())
	}
}

func (s *State) lockPath() string { return filepath.Join(s.Dir, "daemon-start.lock") }

// --- the tool calls a session's hooks reported ------------------------------------------------

// Reported returns the tool_use ids recorded for the session (kept across its compactions: a
// report that comes late must not record a call from before the last one again).
func (s *State) Reported(session string) map[string]bool {
	out := map[string]bool{}
	f, err := os.Open(s.sessionFile(session, ".reported"))
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if id := strings.TrimSpace(sc.Text()); id != "" {
			out[id] = true
		}
	}
	return out
}

// MarkReported appends tool_use ids (one O_APPEND write: lines of concurrent processes do not
// interleave).
func (s *State) MarkReported(session string, ids ...string) {
	if len(ids) == 0 {
		return
	}
	path := s.sessionFile(session, ".reported")
	if s.mkdir(path) != nil {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	f.WriteString(strings.Join(ids, "\n") + "\n")
	f.Close()
}

// TellOnce reports true the first time it is asked for a session: one message per session.
func (s *State) TellOnce(session string) bool { return s.Once(s.sessionFile(session, ".told")) }

// Prune removes session files not touched for 30 days.
func (s *State) Prune() {
	dir := filepath.Join(s.Dir, "sessions")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	cut := s.Now().Add(-30 * 24 * time.Hour)
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.ModTime().Before(cut) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
