package postcompact

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// fakeServer is an in-process stand-in for the daemon: it records what it received and answers
// with canned data or errors.
type fakeServer struct {
	pb.UnimplementedPostcompactServiceServer
	mu        sync.Mutex
	auth      []string // authorization metadata seen
	requests  []any
	socket    string
	wantToken string
}

func (f *fakeServer) seen(ctx context.Context, req any) error {
	md, _ := metadata.FromIncomingContext(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.auth = append(f.auth, strings.Join(md.Get("authorization"), ","))
	f.requests = append(f.requests, req)
	if f.wantToken != "" && strings.Join(md.Get("authorization"), ",") != "Bearer "+f.wantToken {
		return daemonError(ctx, codes.Unauthenticated, "BAD_TOKEN", "bad token", true, true)
	}
	return nil
}

func (f *fakeServer) lastAuth() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.auth) == 0 {
		return "<none>"
	}
	return f.auth[len(f.auth)-1]
}

// daemonError builds an error the way the daemon does: ErrorInfo detail and/or trailing reason.
func daemonError(ctx context.Context, code codes.Code, reason, msg string, detail, trailer bool) error {
	st := status.New(code, msg)
	if detail {
		if d, err := st.WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: ErrorDomain, Metadata: map[string]string{"k": "v"}}); err == nil {
			st = d
		}
	}
	if trailer {
		_ = grpc.SetTrailer(ctx, metadata.Pairs(ReasonMetadataKey, reason))
	}
	return st.Err()
}

func (f *fakeServer) GetServerInfo(ctx context.Context, req *pb.GetServerInfoRequest) (*pb.GetServerInfoResponse, error) {
	if err := f.seen(ctx, req); err != nil {
		return nil, err
	}
	return &pb.GetServerInfoResponse{Version: "fake", ApiVersion: "postcompact.v1", Pid: int64(os.Getpid()), SocketPath: f.socket}, nil
}

func (f *fakeServer) OpenSession(ctx context.Context, req *pb.OpenSessionRequest) (*pb.OpenSessionResponse, error) {
	if err := f.seen(ctx, req); err != nil {
		return nil, err
	}
	if req.GetCwd() == "" {
		return nil, daemonError(ctx, codes.InvalidArgument, "CWD_REQUIRED", "cwd is required", true, true)
	}
	id := req.GetSessionId()
	if id == "" {
		id = "s-made"
	}
	return &pb.OpenSessionResponse{SessionId: id, Session: &pb.SessionInfo{SessionId: id, Cwd: req.GetCwd()}}, nil
}

func (f *fakeServer) ReadFile(ctx context.Context, req *pb.ReadFileRequest) (*pb.ReadFileResponse, error) {
	if err := f.seen(ctx, req); err != nil {
		return nil, err
	}
	switch req.GetPath() {
	case "detail-only":
		return nil, daemonError(ctx, codes.NotFound, "FILE_NOT_FOUND", "no such file", true, false)
	case "trailer-only":
		return nil, daemonError(ctx, codes.PermissionDenied, "OUTSIDE_ROOTS", "outside the roots", false, true)
	case "draining":
		return nil, daemonError(ctx, codes.Unavailable, "SHUTTING_DOWN", "shutting down", true, true)
	case "bare":
		return nil, status.Error(codes.Internal, "boom")
	}
	return &pb.ReadFileResponse{Path: "/abs/" + req.GetPath(), Text: []byte("1\tx\n"), StartLine: req.GetOffset()}, nil
}

func (f *fakeServer) RecordRead(ctx context.Context, req *pb.RecordReadRequest) (*pb.RecordReadResponse, error) {
	if err := f.seen(ctx, req); err != nil {
		return nil, err
	}
	return &pb.RecordReadResponse{Path: "/abs/" + req.GetPath()}, nil
}

func (f *fakeServer) StartAgent(ctx context.Context, req *pb.StartAgentRequest) (*pb.StartAgentResponse, error) {
	if err := f.seen(ctx, req); err != nil {
		return nil, err
	}
	return &pb.StartAgentResponse{AgentId: req.GetAgentId()}, nil
}

func (f *fakeServer) Compact(ctx context.Context, req *pb.CompactRequest) (*pb.CompactResponse, error) {
	if err := f.seen(ctx, req); err != nil {
		return nil, err
	}
	return &pb.CompactResponse{
		Attachments: []*pb.Attachment{
			{Kind: pb.AttachmentKind_ATTACHMENT_KIND_FILE, Placement: pb.Placement_PLACEMENT_USER, Blocks: []string{"A1", "A2"}},
			{Kind: pb.AttachmentKind_ATTACHMENT_KIND_PLAN_MODE, Placement: pb.Placement_PLACEMENT_SYSTEM, Blocks: []string{"B"}},
		},
		Decisions:  []*pb.Decision{{Subject: pb.Subject_SUBJECT_FILE, Name: "/a", Outcome: pb.Outcome_OUTCOME_RESTORED}},
		Compaction: 1,
	}, nil
}

func (f *fakeServer) PreviewCompact(ctx context.Context, req *pb.PreviewCompactRequest) (*pb.PreviewCompactResponse, error) {
	if err := f.seen(ctx, req); err != nil {
		return nil, err
	}
	return &pb.PreviewCompactResponse{
		Attachments: []*pb.Attachment{{Kind: pb.AttachmentKind_ATTACHMENT_KIND_PLAN_MODE, Placement: pb.Placement_PLACEMENT_USER, Blocks: []string{"P"}}},
	}, nil
}

func (f *fakeServer) ImportTranscript(ctx context.Context, req *pb.ImportTranscriptRequest) (*pb.ImportTranscriptResponse, error) {
	if err := f.seen(ctx, req); err != nil {
		return nil, err
	}
	if req.GetCwd() == "" {
		return nil, daemonError(ctx, codes.InvalidArgument, "CWD_REQUIRED", "cwd is required", true, true)
	}
	id := req.GetSessionId()
	if id == "" {
		id = "from-transcript"
	}
	lines := int64(bytes.Count(req.GetTranscript(), []byte("\n")))
	return &pb.ImportTranscriptResponse{SessionId: id, Session: &pb.SessionInfo{SessionId: id, Cwd: req.GetCwd()},
		Records: lines}, nil
}

// serveFake serves f on lis with a health service reporting SERVING; it stops with the test.
func serveFake(t testing.TB, f *fakeServer, lis net.Listener) {
	srv := grpc.NewServer()
	pb.RegisterPostcompactServiceServer(srv, f)
	hs := health.NewServer()
	hs.SetServingStatus("", grpc_health_v1.HealthCheckResponse_SERVING)
	grpc_health_v1.RegisterHealthServer(srv, hs)
	go func() { _ = srv.Serve(lis) }()
	if t != nil {
		t.Cleanup(srv.Stop)
	}
}

// shortTempDir returns a short directory (Unix socket paths are limited to 107 bytes).
func shortTempDir(t testing.TB) string {
	d, err := os.MkdirTemp("/tmp", "pcgo")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}

func unixFake(t testing.TB) (*fakeServer, string) {
	sock := filepath.Join(shortTempDir(t), "d.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{socket: sock}
	serveFake(t, f, lis)
	return f, sock
}

// runFakeDaemon is what the test binary does when auto-start spawns it (see TestMain): serve a
// fake daemon on --socket until killed, or for at most a minute.
func runFakeDaemon(args []string) int {
	sock := ""
	for i, a := range args {
		if a == "--socket" && i+1 < len(args) {
			sock = args[i+1]
		}
	}
	if sock == "" {
		fmt.Fprintln(os.Stderr, "fake daemon: --socket required")
		return 2
	}
	if log := os.Getenv("POSTCOMPACT_GO_FAKE_SPAWN_LOG"); log != "" {
		f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintln(f, os.Getpid())
			_ = f.Close()
		}
	}
	time.Sleep(200 * time.Millisecond) // like a real daemon, not instantly up
	_ = os.Remove(sock)                // a socket left by a daemon that was killed, as a real one does
	lis, err := net.Listen("unix", sock)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.Remove(sock)
	serveFake(nil, &fakeServer{socket: sock}, lis)
	time.Sleep(time.Minute)
	return 0
}

func TestMain(m *testing.M) {
	if os.Getenv("POSTCOMPACT_GO_FAKE_DAEMON") == "1" {
		os.Exit(runFakeDaemon(os.Args[1:]))
	}
	os.Exit(m.Run())
}
