package postcompact_test

// Overload admission (docs/clients.md, "Overload: retried when the daemon says so") against the
// real daemon, as tests/daemon/server/test_overload.py does for Python: two ReadFiles held in their
// worker fill limits.max_calls_in_flight = 2; the next call is refused OVERLOADED with a
// RetryInfo of 100 ms, which the error exposes (NoRetry) and the client retries for any call,
// Compact included, within its policy; a permanent limit (TOO_MANY_SESSIONS) is not retried.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	postcompact "github.com/postcompact/postcompact/clients/go"
	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
	"google.golang.org/grpc/codes"
)

const overloadConfig = "[limits]\nmax_calls_in_flight = 2\nmax_sessions = 4\n"

// heldDaemon is a daemon started with the readfile.worker failpoint held at hold: a ReadFile
// that reaches its worker appends a line to hold+".reached" and blocks until hold exists.
type heldDaemon struct {
	d    *daemon
	c    *postcompact.Client // default retry policy
	sock string
	hold string
	big  string // over 256 KiB: ReadFile reads it in a worker, not inline
	root string
}

func startHeld(t *testing.T) *heldDaemon {
	t.Helper()
	repo := repoRoot(t)
	dir := runtimeDir(t)
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte(overloadConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	h := &heldDaemon{sock: filepath.Join(dir, "d.sock"), hold: filepath.Join(dir, "hold"), root: filepath.Join(dir, "project")}
	if err := os.MkdirAll(h.root, 0o700); err != nil {
		t.Fatal(err)
	}
	var big strings.Builder
	for i := range 100_000 {
		fmt.Fprintf(&big, "line %d\n", i)
	}
	h.big = filepath.Join(h.root, "big.txt")
	if err := os.WriteFile(h.big, []byte(big.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("POSTCOMPACT_FAILPOINTS", "readfile.worker=hold:"+h.hold) // daemonEnv passes it on
	// Memory only: with state stored, max_sessions bounds memory and evicts an idle session
	// instead of refusing (docs/persistence.md, "Sessions in memory").
	h.d = launchDaemon(t, repo, dir, h.sock, "--config", cfg, "--no-persist")
	// Cleanups run last-in first-out: the held workers go before launchDaemon's SIGTERM.
	t.Cleanup(h.release)
	c, err := postcompact.New(postcompact.WithAddress("unix://"+h.sock), postcompact.WithAutoStart(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	h.c = c
	return h
}

func (h *heldDaemon) release() {
	if f, err := os.OpenFile(h.hold, os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		_ = f.Close()
	}
}

// client is a second client of the daemon with policy p.
func (h *heldDaemon) client(t *testing.T, p postcompact.RetryPolicy) *postcompact.Client {
	t.Helper()
	c, err := postcompact.New(postcompact.WithAddress("unix://"+h.sock), postcompact.WithAutoStart(false), postcompact.WithRetry(p))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// logCount is how often the daemon's output holds s so far.
func (h *heldDaemon) logCount(s string) int { return strings.Count(h.d.log.String(), s) }

// waitLog waits until the daemon's output holds s at least n times.
func (h *heldDaemon) waitLog(t *testing.T, s string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for h.logCount(s) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon's output holds %q %d time(s), not %d:\n%s", s, h.logCount(s), n, tail(h.d.log.String(), 4000))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// fill holds two ReadFiles in the daemon's worker, from two agents of one session (one agent's
// calls wait for each other): the daemon is at its limit of 2 calls in flight. The channel gets
// each read's outcome once released.
func (h *heldDaemon) fill(t *testing.T, ctx context.Context) (*postcompact.Session, <-chan error) {
	t.Helper()
	s, err := h.c.OpenSession(ctx, &pb.OpenSessionRequest{SessionId: "ovl-go", Cwd: h.root})
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.StartAgent(ctx, "second", pb.AgentMode_AGENT_MODE_FRESH)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	for _, r := range []*postcompact.Session{s, second} {
		go func() {
			_, err := r.ReadFile(ctx, h.big, postcompact.Lines(2, 3))
			done <- err
		}()
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(h.hold + ".reached")
		if strings.Count(string(b), "\n") >= 2 {
			return s, done
		}
		if time.Now().After(deadline) {
			t.Fatalf("2 workers did not reach the failpoint (%q):\n%s", b, tail(h.d.log.String(), 4000))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// drain releases the held reads and checks that they succeeded.
func (h *heldDaemon) drain(t *testing.T, done <-chan error) {
	t.Helper()
	h.release()
	for range 2 {
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("a held ReadFile failed: %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("a held ReadFile did not finish after the release")
		}
	}
}

const overloaded = `"reason": "OVERLOADED"`

func asOverloaded(t *testing.T, err error) *postcompact.Error {
	t.Helper()
	var pe *postcompact.Error
	if !errors.As(err, &pe) || pe.Code != codes.ResourceExhausted || pe.Reason != "OVERLOADED" {
		t.Fatalf("want RESOURCE_EXHAUSTED OVERLOADED, got %v", err)
	}
	if pe.RetryAfter != 100*time.Millisecond {
		t.Fatalf("RetryAfter %v, want 100ms (%v)", pe.RetryAfter, err)
	}
	return pe
}

func TestOverloadRefusalCarriesRetryAfter(t *testing.T) {
	h := startHeld(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	_, done := h.fill(t, ctx)
	req := &pb.EstimateTokensBatchRequest{Texts: [][]byte{[]byte("a"), []byte("b")}}

	// Retries off: the daemon's refusal itself, asked once.
	before := h.logCount(overloaded)
	_, err := h.client(t, postcompact.NoRetry()).EstimateTokensBatch(ctx, req)
	if pe := asOverloaded(t, err); !strings.Contains(pe.Message, "limits.max_calls_in_flight (2)") {
		t.Fatalf("message %q", pe.Message)
	}
	h.waitLog(t, overloaded, before+1)

	// A policy spent on refusals ends with the daemon's OVERLOADED, not DAEMON_UNAVAILABLE, after
	// exactly its attempts, each at least the daemon's 100 ms after the last.
	before = h.logCount(overloaded)
	p := postcompact.DefaultRetryPolicy()
	p.MaxAttempts = 3
	begin := time.Now()
	_, err = h.client(t, p).EstimateTokensBatch(ctx, req)
	took := time.Since(begin)
	asOverloaded(t, err)
	if took < 200*time.Millisecond {
		t.Fatalf("3 attempts took %v: the retries did not wait the RetryInfo's 100 ms", took)
	}
	h.waitLog(t, overloaded, before+3)
	time.Sleep(300 * time.Millisecond)
	if n := h.logCount(overloaded) - before; n != 3 {
		t.Fatalf("%d refusals for MaxAttempts 3", n)
	}
	h.drain(t, done)
}

func TestOverloadedCompactIsRetried(t *testing.T) {
	h := startHeld(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s, done := h.fill(t, ctx)
	// Compact is not idempotent, yet an OVERLOADED Compact is retried: it was not applied.
	type result struct {
		res *postcompact.CompactResult
		err error
	}
	compacted := make(chan result, 1)
	go func() {
		res, err := s.Compact(ctx)
		compacted <- result{res, err}
	}()
	h.waitLog(t, overloaded, 2) // refused, then refused again on its retry
	h.drain(t, done)
	select {
	case r := <-compacted:
		if r.err != nil {
			t.Fatalf("Compact after the overload: %v", r.err)
		}
		if r.res.Compaction != 1 {
			t.Fatalf("compaction %d, want 1: applied once", r.res.Compaction)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Compact did not finish once the daemon had room")
	}
}

func TestPermanentLimitIsNotRetried(t *testing.T) {
	h := startHeld(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	open := func(i int) error {
		_, err := h.c.OpenSession(ctx, &pb.OpenSessionRequest{SessionId: fmt.Sprintf("full-%d", i), Cwd: h.root})
		return err
	}
	for i := range 4 {
		if err := open(i); err != nil {
			t.Fatal(err)
		}
	}
	const refused = `"reason": "TOO_MANY_SESSIONS"`
	before := h.logCount(refused)
	err := open(4)
	var pe *postcompact.Error
	if !errors.As(err, &pe) || pe.Reason != "TOO_MANY_SESSIONS" || pe.RetryAfter != 0 {
		t.Fatalf("want TOO_MANY_SESSIONS without a retry delay, got %v", err)
	}
	h.waitLog(t, refused, before+1)
	time.Sleep(300 * time.Millisecond) // a retry would have come within the first backoff
	if n := h.logCount(refused) - before; n != 1 {
		t.Fatalf("TOO_MANY_SESSIONS asked %d times, want once", n)
	}
}
