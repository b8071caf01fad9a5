package postcompact

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// isolate points the runtime directory at a fresh temp dir and clears the client's variables.
func isolate(t *testing.T) string {
	xdg := shortTempDir(t)
	t.Setenv("XDG_RUNTIME_DIR", xdg)
	t.Setenv(EnvAddress, "")
	t.Setenv(EnvToken, "")
	t.Setenv(EnvBin, "")
	return filepath.Join(xdg, "postcompact")
}

func writeServerJSON(t *testing.T, dir string, sj string) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ServerJSONName), []byte(sj), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestRuntimeDir(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/7")
	if got := RuntimeDir(); got != "/run/user/7/postcompact" {
		t.Fatalf("RuntimeDir = %q", got)
	}
	t.Setenv("XDG_RUNTIME_DIR", "")
	if got, want := RuntimeDir(), fmt.Sprintf("/tmp/postcompact-%d", os.Getuid()); got != want {
		t.Fatalf("RuntimeDir = %q, want %q", got, want)
	}
	if got := DefaultSocketPath(); got != filepath.Join(RuntimeDir(), "daemon.sock") {
		t.Fatalf("DefaultSocketPath = %q", got)
	}
}

func TestParseAddress(t *testing.T) {
	for in, want := range map[string]Address{
		"unix:///a/b.sock":  {Target: "unix:///a/b.sock", SocketPath: "/a/b.sock"},
		"unix:/a/b.sock":    {Target: "unix:///a/b.sock", SocketPath: "/a/b.sock"},
		"/a/b.sock":         {Target: "unix:///a/b.sock", SocketPath: "/a/b.sock"},
		"127.0.0.1:7777":    {Target: "127.0.0.1:7777"},
		"localhost:1":       {Target: "localhost:1"},
		"dns:///[::1]:8080": {Target: "[::1]:8080"},
	} {
		got, err := ParseAddress(in)
		if err != nil || got.Target != want.Target || got.SocketPath != want.SocketPath {
			t.Errorf("ParseAddress(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "unix://", "nonsense"} {
		if _, err := ParseAddress(bad); err == nil {
			t.Errorf("ParseAddress(%q) succeeded", bad)
		}
	}
}

func TestResolveAddressOrder(t *testing.T) {
	d := isolate(t)
	// 4. default socket
	a, err := ResolveAddress("")
	if err != nil || a.Source != SourceDefault || a.Target != "unix://"+filepath.Join(d, "daemon.sock") {
		t.Fatalf("default: %+v %v", a, err)
	}
	// 3. server.json
	writeServerJSON(t, d, `{"pid": 1, "version": "x", "api_version": "postcompact.v1", "socket": "/s/j.sock",
		"address": "unix:///s/j.sock", "tcp_port": 0, "token_file": null, "started_at_ms": 5}`)
	a, err = ResolveAddress("")
	if err != nil || a.Source != SourceServerJSON || a.Target != "unix:///s/j.sock" || a.ServerJSON.StartedAtMS != 5 {
		t.Fatalf("server.json: %+v %v", a, err)
	}
	// 2. env
	t.Setenv(EnvAddress, "127.0.0.1:9")
	a, err = ResolveAddress("")
	if err != nil || a.Source != SourceEnv || a.Target != "127.0.0.1:9" || !a.IsTCP() {
		t.Fatalf("env: %+v %v", a, err)
	}
	// 1. explicit
	a, err = ResolveAddress("unix:///x.sock")
	if err != nil || a.Source != SourceExplicit || a.SocketPath != "/x.sock" || a.IsTCP() {
		t.Fatalf("explicit: %+v %v", a, err)
	}
	// a broken server.json is ignored
	writeServerJSON(t, d, `{not json`)
	t.Setenv(EnvAddress, "")
	if a, err = ResolveAddress(""); err != nil || a.Source != SourceDefault {
		t.Fatalf("broken server.json: %+v %v", a, err)
	}
}

func TestReadTokenOrder(t *testing.T) {
	d := isolate(t)
	if _, err := ReadToken(nil); err == nil {
		t.Fatal("no token anywhere should fail")
	}
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, TokenName), []byte("from-dir\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if tok, err := ReadToken(nil); err != nil || tok != "from-dir" {
		t.Fatalf("D/token: %q %v", tok, err)
	}
	other := filepath.Join(d, "other-token")
	if err := os.WriteFile(other, []byte("from-json"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeServerJSON(t, d, fmt.Sprintf(`{"address": "127.0.0.1:1", "token_file": %q}`, other))
	if tok, err := ReadToken(nil); err != nil || tok != "from-json" {
		t.Fatalf("token_file: %q %v", tok, err)
	}
	t.Setenv(EnvToken, "from-env")
	if tok, err := ReadToken(nil); err != nil || tok != "from-env" {
		t.Fatalf("env: %q %v", tok, err)
	}
}

func TestErrorMapping(t *testing.T) {
	isolate(t)
	_, sock := unixFake(t)
	c, err := New(WithAddress("unix://" + sock))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := c.Session("s1")
	ctx := ctxT(t)

	cases := []struct {
		path, reason string
		code         codes.Code
		domain       string
	}{
		{"detail-only", "FILE_NOT_FOUND", codes.NotFound, ErrorDomain},
		{"trailer-only", "OUTSIDE_ROOTS", codes.PermissionDenied, ""},
		// no reason: what gRPC produces itself, named by the client (Transport)
		{"bare", ReasonTransportError, codes.Internal, ""},
	}
	for _, tc := range cases {
		_, err := s.ReadFile(ctx, tc.path)
		var pe *Error
		if !errors.As(err, &pe) {
			t.Fatalf("%s: %T %v is not *Error", tc.path, err, err)
		}
		if pe.Code != tc.code || pe.Reason != tc.reason || pe.Domain != tc.domain || pe.Transport != (tc.path == "bare") {
			t.Errorf("%s: got %+v", tc.path, pe)
		}
		if CodeOf(err) != tc.code || ReasonOf(err) != tc.reason || status.Code(err) != tc.code {
			t.Errorf("%s: helpers disagree: %v %q %v", tc.path, CodeOf(err), ReasonOf(err), status.Code(err))
		}
		if tc.reason != "" && !IsReason(err, tc.reason) {
			t.Errorf("%s: IsReason false", tc.path)
		}
		if !errors.Is(err, &Error{Code: tc.code}) || errors.Is(err, &Error{Code: tc.code, Reason: "OTHER"}) {
			t.Errorf("%s: errors.Is matching wrong", tc.path)
		}
	}
	// both detail and trailer (the daemon's way), via OpenSession
	_, err = c.OpenSession(ctx, &pb.OpenSessionRequest{})
	var pe *Error
	if !errors.As(err, &pe) || pe.Code != codes.InvalidArgument || pe.Reason != "CWD_REQUIRED" || pe.Metadata["k"] != "v" {
		t.Fatalf("OpenSession error: %#v", err)
	}
	if pe.Error() != "postcompact: InvalidArgument (CWD_REQUIRED): cwd is required" {
		t.Fatalf("message: %q", pe.Error())
	}
	if FromError(nil, nil) != nil {
		t.Fatal("FromError(nil) != nil")
	}
	plain := errors.New("x")
	if FromError(plain, nil) != plain || CodeOf(nil) != codes.OK || ReasonOf(plain) != "" {
		t.Fatal("non-gRPC errors must pass through")
	}
}

func TestRetryInfoMapping(t *testing.T) {
	st, err := status.New(codes.ResourceExhausted, "full").WithDetails(
		&errdetails.ErrorInfo{Reason: "OVERLOADED", Domain: ErrorDomain},
		&errdetails.RetryInfo{RetryDelay: durationpb.New(100 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	var pe *Error
	if !errors.As(FromError(st.Err(), nil), &pe) || pe.Reason != "OVERLOADED" || pe.RetryAfter != 100*time.Millisecond || !pe.retryInfo {
		t.Fatalf("with a RetryInfo: %#v", pe)
	}
	plain := status.New(codes.ResourceExhausted, "too many").Err()
	if !errors.As(FromError(plain, nil), &pe) || pe.RetryAfter != 0 || pe.retryInfo {
		t.Fatalf("without a RetryInfo: %#v", pe)
	}
}

func TestSessionFlowAgainstFake(t *testing.T) {
	isolate(t)
	f, sock := unixFake(t)
	c, err := New(WithAddress(sock))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := ctxT(t)
	s, err := c.OpenSession(ctx, &pb.OpenSessionRequest{Cwd: "/proj", SessionId: "abc"})
	if err != nil || s.ID != "abc" || s.Info.GetCwd() != "/proj" {
		t.Fatalf("OpenSession: %+v %v", s, err)
	}
	sub, err := s.StartAgent(ctx, "sub", pb.AgentMode_AGENT_MODE_FRESH)
	if err != nil || sub.AgentID != "sub" || s.AgentID != "" {
		t.Fatalf("StartAgent: %+v %v", sub, err)
	}
	r, err := sub.ReadFile(ctx, "a.go", Lines(3, 10))
	if err != nil || r.GetPath() != "/abs/a.go" || r.GetStartLine() != 3 {
		t.Fatalf("ReadFile: %v %v", r, err)
	}
	if p, err := s.RecordRead(ctx, "b.go", []byte("x"), 42, PartialView()); err != nil || p != "/abs/b.go" {
		t.Fatalf("RecordRead: %q %v", p, err)
	}
	res, err := s.Compact(ctx, AdditionalContext("ctx"))
	if err != nil || len(res.Attachments) != 2 || res.RenderedText != "A1\nA2\nB" || res.Compaction != 1 ||
		res.Decisions[0].GetOutcome() != pb.Outcome_OUTCOME_RESTORED {
		t.Fatalf("Compact: %+v %v", res, err)
	}
	prev, err := s.PreviewCompact(ctx, Partial(&pb.ConversationMessage{Role: pb.Role_ROLE_USER}), IncludeContent())
	if err != nil || prev.RenderedText != "P" {
		t.Fatalf("PreviewCompact: %+v %v", prev, err)
	}
	if inj := res.Injection(); strings.Join(inj.UserBlocks, "|") != "A1|A2" || inj.SystemText != "B" {
		t.Fatalf("Injection: %+v", inj)
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	start := f.requests[1].(*pb.StartAgentRequest)
	read := f.requests[2].(*pb.ReadFileRequest)
	rec := f.requests[3].(*pb.RecordReadRequest)
	comp := f.requests[4].(*pb.CompactRequest)
	pre := f.requests[5].(*pb.PreviewCompactRequest)
	if start.GetSessionId() != "abc" || start.GetParentAgentId() != "" || start.GetMode() != pb.AgentMode_AGENT_MODE_FRESH {
		t.Errorf("StartAgent request: %v", start)
	}
	if read.GetSessionId() != "abc" || read.GetAgentId() != "sub" || read.GetOffset() != 3 || read.GetLimit() != 10 {
		t.Errorf("ReadFile request: %v", read)
	}
	if rec.Offset != nil || !rec.GetPartialView() || rec.GetTimestampMs() != 42 {
		t.Errorf("RecordRead request: %v", rec)
	}
	if comp.GetKind() != pb.CompactKind_COMPACT_KIND_FULL || comp.GetAdditionalContext()[0] != "ctx" || comp.GetIncludeContent() {
		t.Errorf("Compact request: %v", comp)
	}
	if pre.GetKind() != pb.CompactKind_COMPACT_KIND_PARTIAL || len(pre.GetPreservedMessages()) != 1 || !pre.GetIncludeContent() {
		t.Errorf("PreviewCompact request: %v", pre)
	}
	if f.auth[0] != "" {
		t.Errorf("a Unix-socket call carried authorization %q", f.auth[0])
	}
}

func TestJoin(t *testing.T) {
	user := func(kind pb.AttachmentKind, blocks ...string) *pb.Attachment {
		return &pb.Attachment{Kind: kind, Placement: pb.Placement_PLACEMENT_USER, Blocks: blocks}
	}
	system := func(kind pb.AttachmentKind, section string) *pb.Attachment {
		return &pb.Attachment{Kind: kind, Placement: pb.Placement_PLACEMENT_SYSTEM, Blocks: []string{section}}
	}
	atts := []*pb.Attachment{
		system(pb.AttachmentKind_ATTACHMENT_KIND_PLAN_MODE, "plan\nmode"),
		user(pb.AttachmentKind_ATTACHMENT_KIND_FILE, "call a", "result a", "note a"),
		system(pb.AttachmentKind_ATTACHMENT_KIND_TASK_STATUS, "task"),
		// UNSPECIFIED placement (an older daemon's shape) is user-placed.
		{Kind: pb.AttachmentKind_ATTACHMENT_KIND_FILE, Blocks: []string{"call b", "result b"}},
		user(pb.AttachmentKind_ATTACHMENT_KIND_COMPACT_FILE_REFERENCE), // no blocks
		system(pb.AttachmentKind_ATTACHMENT_KIND_INVOKED_SKILLS, "skills"),
	}
	inj := Join(atts)
	if want := []string{"call a", "result a", "note a", "call b", "result b"}; fmt.Sprintf("%q", inj.UserBlocks) != fmt.Sprintf("%q", want) {
		t.Errorf("UserBlocks = %q, want %q", inj.UserBlocks, want)
	}
	if want := "plan\nmode\n\ntask\n\nskills"; inj.SystemText != want {
		t.Errorf("SystemText = %q, want %q", inj.SystemText, want)
	}
	// RenderedText flattens every block of every attachment, in attachment order, joined by "\n".
	if got, want := JoinRenderedText(atts), "plan\nmode\ncall a\nresult a\nnote a\ntask\ncall b\nresult b\nskills"; got != want {
		t.Errorf("JoinRenderedText = %q, want %q", got, want)
	}
	res := newCompactResult(atts, nil, nil, 3)
	if res.RenderedText != JoinRenderedText(atts) || fmt.Sprint(res.Injection()) != fmt.Sprint(inj) {
		t.Errorf("CompactResult: %q %+v", res.RenderedText, res.Injection())
	}
	// Everything user-placed (the default profile): the blocks are the whole text.
	only := []*pb.Attachment{user(pb.AttachmentKind_ATTACHMENT_KIND_FILE, "x", "y"), user(pb.AttachmentKind_ATTACHMENT_KIND_PLAN_MODE, "z")}
	if j := Join(only); strings.Join(j.UserBlocks, "\n") != JoinRenderedText(only) || j.SystemText != "" {
		t.Errorf("user-only Join: %+v", j)
	}
	if j := Join(nil); j.UserBlocks != nil || j.SystemText != "" || JoinRenderedText(nil) != "" {
		t.Errorf("Join(nil) = %+v", j)
	}
}

func TestImportTranscriptAgainstFake(t *testing.T) {
	isolate(t)
	f, sock := unixFake(t)
	c, err := New(WithAddress(sock))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := ctxT(t)
	policy := &pb.RestorePolicy{CarryReadState: proto.Bool(false)}
	resp, err := c.ImportTranscript(ctx, []byte("{}\n{}\n"), ImportOptions{
		Cwd: "/proj", SessionID: "imp", PathMap: map[string]string{"/orig/lib": "/lib", "C:\\orig": "/win", "/orig": "/o"},
		Profile: pb.Profile_PROFILE_CLAUDE_CODE_2_1_88, Policy: policy, Home: "/home/u", Replace: true,
	})
	if err != nil || resp.GetSessionId() != "imp" || resp.GetRecords() != 2 || resp.GetSession().GetCwd() != "/proj" {
		t.Fatalf("ImportTranscript: %v %v", resp, err)
	}
	if _, err := c.ImportTranscript(ctx, nil, ImportOptions{}); ReasonOf(err) != "CWD_REQUIRED" {
		t.Fatalf("ImportTranscript without cwd: %v", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	req := f.requests[0].(*pb.ImportTranscriptRequest)
	var pm []string
	for _, m := range req.GetPathMap() {
		pm = append(pm, m.GetSource()+"="+m.GetTarget())
	}
	if string(req.GetTranscript()) != "{}\n{}\n" || req.GetCwd() != "/proj" || req.GetSessionId() != "imp" ||
		req.GetProfile() != pb.Profile_PROFILE_CLAUDE_CODE_2_1_88 || !proto.Equal(req.GetPolicy(), policy) ||
		req.GetHome() != "/home/u" || !req.GetReplace() ||
		strings.Join(pm, ",") != "/orig=/o,/orig/lib=/lib,C:\\orig=/win" {
		t.Errorf("ImportTranscript request: %v", req)
	}
}

func TestTokenOnTCP(t *testing.T) {
	d := isolate(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{wantToken: "sekrit"}
	serveFake(t, f, lis)
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, TokenName), []byte("sekrit\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvAddress, lis.Addr().String())
	c, err := New(WithAutoStart(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := ctxT(t)
	if _, err := c.GetServerInfo(ctx, &pb.GetServerInfoRequest{}); err != nil {
		t.Fatalf("with the D/token: %v", err)
	}
	if got := f.lastAuth(); got != "Bearer sekrit" {
		t.Fatalf("authorization = %q", got)
	}
	// a wrong explicit token is refused with the daemon's reason
	c2, err := New(WithAddress(lis.Addr().String()), WithToken("wrong"))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	_, err = c2.GetServerInfo(ctx, &pb.GetServerInfoRequest{})
	if CodeOf(err) != codes.Unauthenticated || ReasonOf(err) != "BAD_TOKEN" {
		t.Fatalf("wrong token: %v", err)
	}
	// no token anywhere: the call fails as Unauthenticated without reaching the daemon
	if err := os.Remove(filepath.Join(d, TokenName)); err != nil {
		t.Fatal(err)
	}
	c3, err := New(WithAddress(lis.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if _, err = c3.GetServerInfo(ctx, &pb.GetServerInfoRequest{}); CodeOf(err) != codes.Unauthenticated {
		t.Fatalf("no token: %v", err)
	}
}

func TestNoAutoStartWithExplicitAddress(t *testing.T) {
	isolate(t)
	sock := filepath.Join(shortTempDir(t), "none.sock")
	t.Setenv(EnvBin, "/bin/false-should-not-run")
	c, err := New(WithAddress("unix://"+sock), WithRetry(RetryPolicy{MaxElapsed: 300 * time.Millisecond, InitialBackoff: 50 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.GetServerInfo(ctxT(t), &pb.GetServerInfoRequest{})
	var pe *Error
	if !errors.As(err, &pe) || pe.Code != codes.Unavailable || pe.Reason != ReasonDaemonUnavailable {
		t.Fatalf("want Unavailable, got %v", err)
	}
	if err := c.EnsureServing(ctxT(t)); CodeOf(err) != codes.Unavailable {
		t.Fatalf("EnsureServing without a daemon: %v", err)
	}
	_, live := unixFake(t)
	c2, err := New(WithAddress(live))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := c2.EnsureServing(ctxT(t)); err != nil {
		t.Fatalf("EnsureServing with a daemon: %v", err)
	}
}

func TestNoAutoStartWhenADaemonAnswersUnavailable(t *testing.T) {
	isolate(t)
	_, sock := unixFake(t)
	c, err := New(WithAddress(sock), WithAutoStart(true), WithDaemonBin("/nonexistent/postcompact"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Session("s").ReadFile(ctxT(t), "draining")
	if CodeOf(err) != codes.Unavailable || ReasonOf(err) != "SHUTTING_DOWN" || strings.Contains(err.Error(), "auto-start") {
		t.Fatalf("got %v", err)
	}
}

func TestAutoStartFailsClearly(t *testing.T) {
	isolate(t)
	sock := filepath.Join(shortTempDir(t), "none.sock")
	c, err := New(WithAddress("unix://"+sock), WithAutoStart(true), WithDaemonBin("/nonexistent/postcompact"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.GetServerInfo(ctxT(t), &pb.GetServerInfoRequest{})
	if CodeOf(err) != codes.Unavailable {
		t.Fatalf("want Unavailable, got %v", err)
	}
	if want := "auto-start"; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not mention %q", err, want)
	}
	// a daemon that exits at once is reported without waiting the whole timeout
	c2, err := New(WithAddress("unix://"+sock), WithAutoStart(true), WithDaemonBin("/bin/false"),
		WithStartTimeout(8*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	_, err = c2.GetServerInfo(ctxT(t), &pb.GetServerInfoRequest{})
	if CodeOf(err) != codes.Unavailable || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("exiting daemon: %v", err)
	}
}

func TestAutoStartSpawnsAndRetries(t *testing.T) {
	d := isolate(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("POSTCOMPACT_GO_FAKE_DAEMON", "1") // inherited by the spawned test binary
	t.Setenv(EnvBin, exe)
	c, err := New() // default socket in the isolated runtime dir, auto-start on
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Address().Source != SourceDefault {
		t.Fatalf("source %v", c.Address().Source)
	}
	argv, err := c.DaemonCommand()
	if err != nil || len(argv) != 3 || argv[0] != exe || argv[1] != "serve" || argv[2] != "--detached" {
		t.Fatalf("DaemonCommand = %q %v", argv, err)
	}
	// the fake daemon needs the directory; a real one creates it itself
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	// the fake needs --socket: use a non-default explicit socket with auto-start asked for
	sock := filepath.Join(shortTempDir(t), "auto.sock")
	c2, err := New(WithAddress("unix://"+sock), WithAutoStart(true))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	argv, _ = c2.DaemonCommand()
	if len(argv) != 5 || argv[3] != "--socket" || argv[4] != sock {
		t.Fatalf("DaemonCommand = %q", argv)
	}
	spawnLog := filepath.Join(shortTempDir(t), "spawns")
	t.Setenv("POSTCOMPACT_GO_FAKE_SPAWN_LOG", spawnLog)
	// four calls at once find no daemon: one spawn, every call retried and answered
	infos := make(chan *pb.GetServerInfoResponse, 4)
	callErrs := make(chan error, 4)
	for range 4 {
		go func() {
			got, err := c2.GetServerInfo(ctxT(t), &pb.GetServerInfoRequest{})
			infos <- got
			callErrs <- err
		}()
	}
	var info *pb.GetServerInfoResponse
	for range 4 {
		if got := <-infos; got != nil {
			info = got
		}
		if err := <-callErrs; err != nil {
			t.Errorf("auto-start: %v", err)
		}
	}
	if info == nil {
		t.FailNow()
	}
	if b, err := os.ReadFile(spawnLog); err != nil || strings.Count(string(b), "\n") != 1 {
		t.Errorf("spawned %q times (%v), want once", b, err)
	}
	if info.GetPid() == int64(os.Getpid()) || info.GetSocketPath() != sock {
		t.Fatalf("answered by %v", info)
	}
	t.Cleanup(func() { _ = syscall.Kill(int(info.GetPid()), syscall.SIGKILL) })
	// many goroutines of a fresh client all succeed through the running daemon
	c3, err := New(WithAddress("unix://"+sock), WithAutoStart(true))
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := c3.GetServerInfo(ctxT(t), &pb.GetServerInfoRequest{})
			if err == nil && got.GetPid() != info.GetPid() {
				err = fmt.Errorf("answered by pid %d, want %d", got.GetPid(), info.GetPid())
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent call: %v", err)
		}
	}
	// its own session (Setsid): its session id is its pid
	if sid, err := getsid(int(info.GetPid())); err != nil || sid != int(info.GetPid()) {
		t.Fatalf("spawned daemon session id %d (%v), want %d", sid, err, info.GetPid())
	}
}

// TestAutoStartStartsTheDaemonAgain: a long-lived client that finds the daemon it started gone
// starts it again (it used to start it at most once, then fail DAEMON_UNAVAILABLE).
func TestAutoStartStartsTheDaemonAgain(t *testing.T) {
	isolate(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("POSTCOMPACT_GO_FAKE_DAEMON", "1") // inherited by the spawned test binary
	t.Setenv(EnvBin, exe)
	sock := filepath.Join(shortTempDir(t), "again.sock")
	c, err := New(WithAddress("unix://"+sock), WithAutoStart(true), WithRetry(RetryPolicy{MaxElapsed: 20 * time.Second,
		MaxAttempts: 100, InitialBackoff: 50 * time.Millisecond, MaxBackoff: time.Second, Multiplier: 2}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	first, err := c.GetServerInfo(ctxT(t), &pb.GetServerInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	kill := func(pid int64) {
		_ = syscall.Kill(int(pid), syscall.SIGKILL)
		for syscall.Kill(int(pid), 0) == nil { // the client reaps its child
			time.Sleep(20 * time.Millisecond)
		}
	}
	kill(first.GetPid())
	second, err := c.GetServerInfo(ctxT(t), &pb.GetServerInfoRequest{})
	if err != nil {
		t.Fatalf("after the daemon went: %v", err)
	}
	t.Cleanup(func() { kill(second.GetPid()) })
	if second.GetPid() == first.GetPid() {
		t.Fatalf("answered by the same pid %d", first.GetPid())
	}
}

// recordingDaemon is a "daemon" that records its start in spawns, says why it will not serve and
// exits: WithDaemonCommand's argv.
func recordingDaemon(spawns string) Option {
	return WithDaemonCommand("/bin/sh", "-c", `echo x >> "$0"; echo "postcompact: not today" >&2`, spawns)
}

func TestAutoStartIsBoundedPerWindow(t *testing.T) {
	isolate(t)
	dir := shortTempDir(t)
	spawns := filepath.Join(dir, "spawns")
	c, err := New(WithAddress("unix://"+filepath.Join(dir, "none.sock")), WithAutoStart(true), WithRetry(NoRetry()),
		recordingDaemon(spawns), WithStartTimeout(2*time.Minute), // it exits: not waited out
		WithAutoStartPolicy(AutoStartPolicy{MaxStarts: 2, Window: time.Hour}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 2 {
		_, err = c.GetServerInfo(ctxT(t), &pb.GetServerInfoRequest{})
		var pe *Error
		if !errors.As(err, &pe) || pe.Reason != ReasonDaemonStartFailed || !pe.Transport ||
			!strings.Contains(pe.Message, "exited with status 0 before serving: postcompact: not today") {
			t.Fatalf("a daemon that exits before serving: %v", err)
		}
	}
	_, err = c.GetServerInfo(ctxT(t), &pb.GetServerInfoRequest{})
	if !IsReason(err, ReasonDaemonUnavailable) || !strings.Contains(err.Error(), "2 starts in the last 3600 s") {
		t.Fatalf("third call: %v", err)
	}
	if b, err := os.ReadFile(spawns); err != nil || string(b) != "x\nx\n" {
		t.Fatalf("spawned %q (%v), want twice", b, err)
	}
}

func TestAutoStartWaitsOutTheBackOff(t *testing.T) {
	isolate(t)
	dir := shortTempDir(t)
	spawns := filepath.Join(dir, "spawns")
	c, err := New(WithAddress("unix://"+filepath.Join(dir, "none.sock")), WithAutoStart(true), WithRetry(NoRetry()),
		recordingDaemon(spawns), WithAutoStartPolicy(AutoStartPolicy{MaxStarts: 3, Window: time.Minute,
			InitialBackoff: time.Hour, MaxBackoff: time.Hour}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err = c.GetServerInfo(ctxT(t), &pb.GetServerInfoRequest{}); !IsReason(err, ReasonDaemonStartFailed) {
		t.Fatalf("first call: %v", err)
	}
	_, err = c.GetServerInfo(ctxT(t), &pb.GetServerInfoRequest{})
	if !IsReason(err, ReasonDaemonUnavailable) || !strings.Contains(err.Error(), "the last start failed (") ||
		!strings.Contains(err.Error(), "postcompact: not today") {
		t.Fatalf("second call: %v", err)
	}
	if b, err := os.ReadFile(spawns); err != nil || string(b) != "x\n" {
		t.Fatalf("spawned %q (%v), want once", b, err)
	}
}

// slowServer answers GetStats only once the call's context ends.
type slowServer struct{ *fakeServer }

func (slowServer) GetStats(ctx context.Context, _ *pb.GetStatsRequest) (*pb.GetStatsResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestFailuresNoDaemonAnsweredAreNamed: a call past its deadline, and one its caller cancelled,
// carry the client's reason (the same names in every client), not "".
func TestFailuresNoDaemonAnsweredAreNamed(t *testing.T) {
	isolate(t)
	sock := filepath.Join(shortTempDir(t), "slow.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	pb.RegisterPostcompactServiceServer(srv, slowServer{&fakeServer{socket: sock}})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	c, err := New(WithAddress("unix://" + sock))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctxT(t), 300*time.Millisecond)
	defer cancel()
	_, err = c.GetStats(ctx, &pb.GetStatsRequest{})
	var pe *Error
	if !errors.As(err, &pe) || pe.Code != codes.DeadlineExceeded || pe.Reason != ReasonDeadlineExceeded || !pe.Transport {
		t.Fatalf("past its deadline: %#v", err)
	}
	ctx, cancel = context.WithCancel(ctxT(t))
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err = c.GetStats(ctx, &pb.GetStatsRequest{})
	if !errors.As(err, &pe) || pe.Code != codes.Canceled || pe.Reason != ReasonAborted || !pe.Transport {
		t.Fatalf("cancelled by its caller: %#v", err)
	}
}

func getsid(pid int) (int, error) {
	sid, _, errno := syscall.RawSyscall(syscall.SYS_GETSID, uintptr(pid), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(sid), nil
}
