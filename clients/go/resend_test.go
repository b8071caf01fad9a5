package postcompact

// Auto-start and calls the daemon may already have applied (docs/clients.md, "Retries across a
// daemon restart"): after an auto-start only an idempotent call, or one that was never sent, is
// sent again (how often the daemon is started: client_test.go).

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	"google.golang.org/grpc/health/grpc_health_v1"
)

// cutListener keeps the connections it accepted so that cut can close them all at once.
type cutListener struct {
	net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func (l *cutListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.conns = append(l.conns, conn)
		l.mu.Unlock()
	}
	return conn, err
}

func (l *cutListener) cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, conn := range l.conns {
		_ = conn.Close()
	}
	l.conns = nil
}

// cuttingServer applies Compact and PreviewCompact, then, once armed, drops every connection
// before answering: a daemon that went away after it applied the call. It stays up, so the
// auto-start's health check finds it serving.
type cuttingServer struct {
	*fakeServer
	lis   *cutListener
	armed atomic.Bool
}

func (s *cuttingServer) maybeCut() {
	if s.armed.CompareAndSwap(true, false) {
		s.lis.cut()
	}
}

func (s *cuttingServer) Compact(ctx context.Context, req *pb.CompactRequest) (*pb.CompactResponse, error) {
	defer s.maybeCut()
	return s.fakeServer.Compact(ctx, req)
}

func (s *cuttingServer) PreviewCompact(ctx context.Context, req *pb.PreviewCompactRequest) (*pb.PreviewCompactResponse, error) {
	defer s.maybeCut()
	return s.fakeServer.PreviewCompact(ctx, req)
}

func (s *cuttingServer) count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.requests {
		switch r.(type) {
		case *pb.CompactRequest:
			if method == "Compact" {
				n++
			}
		case *pb.PreviewCompactRequest:
			if method == "PreviewCompact" {
				n++
			}
		}
	}
	return n
}

func cuttingFake(t *testing.T) (*cuttingServer, string) {
	sock := filepath.Join(shortTempDir(t), "d.sock")
	inner, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	s := &cuttingServer{fakeServer: &fakeServer{socket: sock}, lis: &cutListener{Listener: inner}}
	srv := grpc.NewServer()
	pb.RegisterPostcompactServiceServer(srv, s)
	hs := health.NewServer()
	hs.SetServingStatus("", grpc_health_v1.HealthCheckResponse_SERVING)
	grpc_health_v1.RegisterHealthServer(srv, hs)
	go func() { _ = srv.Serve(s.lis) }()
	t.Cleanup(srv.Stop)
	return s, sock
}

func TestAutoStartDoesNotResendWhatMayHaveBeenApplied(t *testing.T) {
	isolate(t)
	s, sock := cuttingFake(t)
	// Auto-start must not need to spawn anything (the daemon answers health): a spawn would fail.
	opts := []Option{WithAddress("unix://" + sock), WithAutoStart(true), WithDaemonBin("/nonexistent/postcompact")}

	c, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess := c.Session("s")
	if _, err := sess.PreviewCompact(ctxT(t)); err != nil { // connected
		t.Fatal(err)
	}
	s.armed.Store(true)
	_, err = sess.Compact(ctxT(t))
	if CodeOf(err) != codes.Unavailable || !strings.Contains(err.Error(), "which is not retried: the daemon may have applied it") {
		t.Fatalf("Compact cut after it was applied: %v", err)
	}
	if !IsReason(err, ReasonConnectionLost) {
		t.Fatalf("not retried, named CONNECTION_LOST: %v", err)
	}
	if n := s.count("Compact"); n != 1 {
		t.Fatalf("the daemon received Compact %d times, want once", n)
	}

	// An idempotent call is sent again after the auto-start.
	c2, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := c2.Session("s").PreviewCompact(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	before := s.count("PreviewCompact")
	s.armed.Store(true)
	if _, err := c2.Session("s").PreviewCompact(ctxT(t)); err != nil {
		t.Fatalf("PreviewCompact cut once: %v", err)
	}
	if n := s.count("PreviewCompact") - before; n != 2 {
		t.Fatalf("the daemon received PreviewCompact %d times, want twice", n)
	}
}
