package postcompact_test

// Recovery across a daemon restart (docs/clients.md, "Retries") against the real daemon:
// idempotent calls made while the daemon is restarted (SIGTERM or kill -9, then a new daemon on
// the same socket and state) succeed with the state intact; a Compact that was never sent is
// retried; a daemon gone for good is DAEMON_UNAVAILABLE within the retry bound.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	postcompact "github.com/postcompact/postcompact/clients/go"
	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
	"google.golang.org/grpc/codes"
)

// kill stops d with sig and waits for it; the exit is recorded as clean for d's own cleanup.
func kill(t *testing.T, d *daemon, sig syscall.Signal) {
	t.Helper()
	_ = d.cmd.Process.Signal(sig)
	select {
	case <-d.exited:
		d.exited <- nil
	case <-time.After(15 * time.Second):
		t.Fatalf("daemon did not exit after %v", sig)
	}
}

func TestRecoveryAcrossRestarts(t *testing.T) {
	repo := repoRoot(t)
	dir := runtimeDir(t)
	sock := filepath.Join(dir, "d.sock")
	d := launchDaemon(t, repo, dir, sock)
	c, err := postcompact.New(postcompact.WithAddress("unix://" + sock))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	project := filepath.Join(dir, "project")
	if err := os.MkdirAll(project, 0o700); err != nil {
		t.Fatal(err)
	}
	a := filepath.Join(project, "a.go")
	if err := os.WriteFile(a, []byte("package a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := c.OpenSession(ctx, &pb.OpenSessionRequest{SessionId: "recover-go", Cwd: project})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordRead(ctx, a, []byte("package a\n"), time.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	const ts = 1_700_000_000_000
	if _, err := s.RecordSkill(ctx, "review", "/skills/review.md", []byte("look"), ts); err != nil {
		t.Fatal(err)
	}

	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		var calls atomic.Int64
		stop := make(chan struct{})
		failed := make(chan error, 1)
		go func() {
			defer close(failed)
			for n := int64(1); ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				r, err := s.CheckWrite(ctx, a)
				if err == nil && r.GetResult() != pb.WriteCheck_WRITE_CHECK_ALLOWED {
					err = &postcompact.Error{Code: codes.Internal, Message: "CheckWrite: " + r.GetResult().String()}
				}
				if err == nil {
					_, err = s.RecordSkill(ctx, "k"+string(rune('0'+n%5)), "", []byte("x"), ts+n)
				}
				if err == nil {
					_, err = c.ListSessions(ctx)
				}
				if err != nil {
					failed <- err
					return
				}
				calls.Add(3)
			}
		}()
		time.Sleep(300 * time.Millisecond)
		before := calls.Load()
		kill(t, d, sig)
		time.Sleep(time.Second)
		d = launchDaemon(t, repo, dir, sock)
		time.Sleep(500 * time.Millisecond)
		close(stop)
		if err := <-failed; err != nil {
			t.Fatalf("%v: a call failed across the restart: %v", sig, err)
		}
		if before == 0 || calls.Load() <= before {
			t.Fatalf("%v: calls before %d, total %d", sig, before, calls.Load())
		}
	}
	if n, err := s.RecordSkill(ctx, "review", "/skills/review.md", []byte("look"), ts); err != nil || n != 6 {
		t.Fatalf("skills after the restarts: %d, %v", n, err)
	}
	again, err := c.OpenSession(ctx, &pb.OpenSessionRequest{SessionId: "recover-go", Cwd: project})
	if err != nil || !again.Resumed {
		t.Fatalf("the session was not resumed: %v", err)
	}

	// Not idempotent but never sent: a Compact while the daemon is down waits for it.
	if _, err := s.ReadFile(ctx, a); err != nil {
		t.Fatal(err)
	}
	kill(t, d, syscall.SIGTERM)
	restarted := make(chan *daemon, 1)
	go func() {
		time.Sleep(time.Second)
		restarted <- launchDaemon(t, repo, dir, sock)
	}()
	res, err := s.Compact(ctx)
	d = <-restarted
	if err != nil || len(res.Decisions) == 0 {
		t.Fatalf("Compact across a restart: %v", err)
	}

	// Gone for good: DAEMON_UNAVAILABLE, naming the address, within the bound.
	kill(t, d, syscall.SIGTERM)
	c2, err := postcompact.New(postcompact.WithAddress("unix://"+sock),
		postcompact.WithRetry(postcompact.RetryPolicy{MaxElapsed: 2 * time.Second, InitialBackoff: 50 * time.Millisecond,
			MaxBackoff: 500 * time.Millisecond, Multiplier: 2, Jitter: 0.2}))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	begin := time.Now()
	_, err = c2.Session("recover-go").CheckWrite(ctx, a)
	took := time.Since(begin)
	if !postcompact.IsReason(err, postcompact.ReasonDaemonUnavailable) || postcompact.CodeOf(err) != codes.Unavailable {
		t.Fatalf("want DAEMON_UNAVAILABLE, got %v", err)
	}
	if !strings.Contains(err.Error(), sock) || !strings.Contains(err.Error(), "CheckWrite") ||
		took < 1900*time.Millisecond || took > 4*time.Second {
		t.Fatalf("error %q after %v", err, took)
	}
	var pe *postcompact.Error
	if !errors.As(err, &pe) || pe.Metadata["attempts"] == "" || pe.Metadata["address"] != "unix://"+sock {
		t.Fatalf("metadata of %v", err)
	}
}

func TestIdempotence(t *testing.T) {
	for _, m := range []string{"GetStats", "CheckWrite", "/postcompact.v1.PostcompactService/SetPlan", "TruncateTokens"} {
		if !postcompact.IsIdempotent(m, nil) {
			t.Errorf("%s should be idempotent", m)
		}
	}
	for _, m := range []string{"ReadFile", "Compact", "SetCatalog", "StartAgent", "EndAgent", "CloseSession", "MergeFileState",
		"ImportTranscript", "/postcompact.v1.PostcompactService/ImportTranscript"} {
		if postcompact.IsIdempotent(m, nil) {
			t.Errorf("%s should not be idempotent", m)
		}
	}
	cases := []struct {
		m   string
		req any
		ok  bool
	}{
		{"OpenSession", &pb.OpenSessionRequest{SessionId: "s"}, true},
		{"OpenSession", &pb.OpenSessionRequest{}, false},
		{"RecordRead", &pb.RecordReadRequest{TimestampMs: 1}, true},
		{"RecordRead", &pb.RecordReadRequest{}, false},
		{"RecordSkill", &pb.RecordSkillRequest{InvokedAtMs: 1}, true},
		{"RecordSkill", &pb.RecordSkillRequest{}, false},
	}
	for _, tc := range cases {
		if postcompact.IsIdempotent(tc.m, tc.req) != tc.ok {
			t.Errorf("%s %v: want %v", tc.m, tc.req, tc.ok)
		}
	}
	p := postcompact.DefaultRetryPolicy()
	p.Jitter = 0
	var got []time.Duration
	for n := 1; n <= 7; n++ {
		got = append(got, p.Backoff(n))
	}
	if got[0] != 50*time.Millisecond || got[4] != 800*time.Millisecond || got[6] != time.Second {
		t.Fatalf("backoff %v", got)
	}
}
