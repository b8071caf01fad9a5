package postcompact

// Starting the daemon on demand (docs/clients.md, "Auto-start"): spawn `postcompact serve
// --detached` in its own session, read why it could not start, and decide when to start it
// again. A client with auto-start on starts the daemon whenever a call finds none (a transport
// UNAVAILABLE), over its whole life, within its AutoStartPolicy; a start the policy does not
// allow yet leaves the call to its retry policy, which asks again at each retry.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ReasonDaemonStartFailed is the reason of the *Error returned when auto-start could not bring a
// daemon up: it could not be spawned, exited before serving (the message carries its exit
// status and first error line; its log is in its state directory), or did not report SERVING
// within the start timeout.
const ReasonDaemonStartFailed = "DAEMON_START_FAILED"

// exitAlreadyRunning is `postcompact serve`'s exit status when another daemon holds the lock: it
// lost a race to another starter, whose daemon is coming up.
const exitAlreadyRunning = 4

// AutoStartPolicy bounds how often a client starts the daemon: at most MaxStarts starts in any
// Window; after a start the next waits InitialBackoff, doubled after each start that failed, at
// most MaxBackoff. A daemon found serving is not a start.
type AutoStartPolicy struct {
	MaxStarts      int
	Window         time.Duration
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
}

// DefaultAutoStartPolicy is at most 3 starts a minute, 1 s after each, doubling after each
// failed one up to 30 s.
func DefaultAutoStartPolicy() AutoStartPolicy {
	return AutoStartPolicy{MaxStarts: 3, Window: time.Minute, InitialBackoff: time.Second, MaxBackoff: 30 * time.Second}
}

// WithAutoStartPolicy sets how often auto-start may start the daemon (default
// DefaultAutoStartPolicy()).
func WithAutoStartPolicy(p AutoStartPolicy) Option {
	return func(o *options) { o.autoStartPolicy = &p }
}

// starter is one client's starts: the one running (which failing calls join) and the policy's
// bookkeeping.
type starter struct {
	mu       sync.Mutex
	policy   AutoStartPolicy
	starts   []time.Time // the starts within the window
	failures int         // starts in a row that did not bring a daemon up
	ended    time.Time   // when the last start ended
	lastErr  string      // why the last start failed ("" when it did not)
	run      *startRun   // the start running, if any (calls failing meanwhile join it)
	spawned  bool        // the start running spawned a daemon
}

// whyNot says why the policy allows no start now ("" when it does). mu held.
func (s *starter) whyNot(now time.Time) string {
	p := s.policy
	for len(s.starts) > 0 && now.Sub(s.starts[0]) >= p.Window {
		s.starts = s.starts[1:]
	}
	if len(s.starts) >= p.MaxStarts {
		return fmt.Sprintf("not started again: %d starts in the last %g s, the most its AutoStartPolicy allows",
			len(s.starts), p.Window.Seconds())
	}
	if s.ended.IsZero() {
		return ""
	}
	backoff := p.InitialBackoff
	for i := 1; i < s.failures && backoff < p.MaxBackoff; i++ {
		backoff *= 2
	}
	backoff = min(backoff, p.MaxBackoff)
	if wait := s.ended.Add(backoff).Sub(now); wait > 0 {
		last := fmt.Sprintf("the daemon was started %.1f s ago", now.Sub(s.ended).Seconds())
		if s.lastErr != "" {
			last = "the last start failed (" + s.lastErr + ")"
		}
		return fmt.Sprintf("not started again yet: %s; the next start may come in %.1f s", last, wait.Seconds())
	}
	return ""
}

func (s *starter) note() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.whyNot(time.Now())
}

func (s *starter) recordSpawn() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.starts = append(s.starts, time.Now())
	s.spawned = true
}

// DaemonCommand returns the argv auto-start runs: the configured command (WithDaemonCommand), else
// WithDaemonBin, else POSTCOMPACT_BIN, else `postcompact` on PATH; then `serve --detached`, then
// `--socket PATH` when the client's Unix socket is not the default one, then WithServeArgs.
func (c *Client) DaemonCommand() ([]string, error) {
	var argv []string
	switch {
	case len(c.opts.command) > 0:
		argv = append(argv, c.opts.command...)
	case c.opts.bin != "":
		argv = append(argv, c.opts.bin)
	case os.Getenv(EnvBin) != "":
		argv = append(argv, os.Getenv(EnvBin))
	default:
		p, err := exec.LookPath("postcompact")
		if err != nil {
			return nil, fmt.Errorf("postcompact: cannot auto-start the daemon: %s is unset and `postcompact` is not on PATH", EnvBin)
		}
		argv = append(argv, p)
	}
	argv = append(argv, "serve", "--detached")
	if c.addr.SocketPath != "" && filepath.Clean(c.addr.SocketPath) != filepath.Clean(DefaultSocketPath()) {
		argv = append(argv, "--socket", c.addr.SocketPath)
	}
	return append(argv, c.opts.serveArgs...), nil
}

// spawned is a daemon this client started: exited receives how it ended if it exits while the
// client lives (an exit 4, another daemon winning the race, is not sent: that one is coming
// up); errors holds what it wrote to stderr while starting (it writes to its log file once
// serving).
type spawned struct {
	pid    int
	exited <-chan error
	errors *os.File
}

// said is what the daemon wrote to stderr, in one line: its first `postcompact: ...` line, else
// its last non-empty one (a traceback's exception).
func (s *spawned) said() string {
	buf := make([]byte, 64<<10)
	n, _ := s.errors.ReadAt(buf, 0)
	return firstErrorLine(string(buf[:n]))
}

func firstErrorLine(text string) string {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "postcompact:") {
			return l
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1]
}

// spawn starts the daemon detached (its own session; stdin and stdout on /dev/null, stderr to
// an unlinked temporary file).
func (c *Client) spawn() (*spawned, error) {
	argv, err := c.DaemonCommand()
	if err != nil {
		return nil, err
	}
	errFile, err := os.CreateTemp("", "postcompact-start-")
	if err != nil {
		return nil, fmt.Errorf("postcompact: cannot start %q: %w", argv, err)
	}
	_ = os.Remove(errFile.Name())
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Stderr = errFile // Stdin and Stdout left nil are connected to /dev/null by os/exec.
	if err := cmd.Start(); err != nil {
		_ = errFile.Close()
		return nil, fmt.Errorf("postcompact: cannot start %q: %w", argv, err)
	}
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait() // reap it if it dies while we live
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee) && ee.ExitCode() == exitAlreadyRunning:
			return
		case err == nil:
			err = errors.New("exited with status 0")
		case errors.As(err, &ee) && ee.ExitCode() >= 0:
			err = fmt.Errorf("exited with status %d", ee.ExitCode())
		case errors.As(err, &ee):
			err = fmt.Errorf("was killed (%v)", ee.ProcessState)
		}
		exited <- err
	}()
	return &spawned{pid: cmd.Process.Pid, exited: exited, errors: errFile}, nil
}
