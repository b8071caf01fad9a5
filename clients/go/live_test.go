package postcompact_test

// docs/clients.md end to end against the real daemon: auto-start on the default socket, then
// discovery through server.json; TCP with the token from server.json's token_file.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	postcompact "github.com/postcompact/postcompact/clients/go"
	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
	"google.golang.org/grpc/codes"
)

// hermetic points the client's and any spawned daemon's HOME and XDG directories into dir.
func hermetic(t *testing.T, dir string) {
	home := filepath.Join(dir, "home")
	t.Setenv("HOME", home)
	t.Setenv("XDG_RUNTIME_DIR", dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	t.Setenv(postcompact.EnvAddress, "")
	t.Setenv(postcompact.EnvToken, "")
	t.Setenv(postcompact.EnvBin, "")
}

// terminate sends SIGTERM to pid and waits (at most 15 s) until it is gone.
func terminate(t *testing.T, pid int) {
	if pid <= 0 || pid == os.Getpid() {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("daemon %d did not exit within 15 s of SIGTERM", pid)
}

func TestLiveAutoStartAndServerJSON(t *testing.T) {
	repo := repoRoot(t)
	bin := filepath.Join(repo, ".venv", "bin", "postcompact")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no daemon executable at %s (run `make build`): %v", bin, err)
	}
	dir := runtimeDir(t)
	hermetic(t, dir)
	t.Setenv(postcompact.EnvBin, bin)

	c, err := postcompact.New() // nothing configured: the default socket, auto-start on
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := "unix://" + filepath.Join(dir, "postcompact", "daemon.sock")
	if a := c.Address(); a.Source != postcompact.SourceDefault || a.Target != want {
		t.Fatalf("address %+v, want the default %s", a, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	info, err := c.GetServerInfo(ctx, &pb.GetServerInfoRequest{})
	if err != nil {
		t.Fatalf("auto-start: %v", err)
	}
	t.Cleanup(func() { terminate(t, int(info.GetPid())) })
	if info.GetApiVersion() != "postcompact.v1" || info.GetSocketPath() != filepath.Join(dir, "postcompact", "daemon.sock") {
		t.Fatalf("server info %v", info)
	}
	// detached: its own session
	if sid, err := getsid(int(info.GetPid())); err != nil || sid != int(info.GetPid()) {
		t.Errorf("the auto-started daemon's session id is %d (%v), want its pid %d", sid, err, info.GetPid())
	}

	// A second client finds it through server.json, with auto-start off.
	c2, err := postcompact.New(postcompact.WithAutoStart(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if a := c2.Address(); a.Source != postcompact.SourceServerJSON || a.Target != want || a.ServerJSON.PID != info.GetPid() {
		t.Fatalf("second client: %+v (server.json %+v)", a, a.ServerJSON)
	}
	if _, err := c2.ListSessions(ctx); err != nil {
		t.Fatalf("ListSessions via server.json: %v", err)
	}
}

func TestLiveTCPToken(t *testing.T) {
	repo := repoRoot(t)
	dir := runtimeDir(t)
	hermetic(t, dir)
	rt := filepath.Join(dir, "postcompact")
	d := launchDaemon(t, repo, dir, filepath.Join(rt, "daemon.sock"), "--tcp-port", "0")
	sj, err := postcompact.ReadServerJSON(filepath.Join(rt, "server.json"))
	if err != nil {
		t.Fatalf("server.json: %v\n%s", err, d.log.String())
	}
	if sj.TCPPort == 0 || sj.TokenFile == nil {
		t.Fatalf("server.json has no TCP port or token file: %+v", sj)
	}
	tcp := fmt.Sprintf("127.0.0.1:%d", sj.TCPPort)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// POSTCOMPACT_ADDRESS names the TCP port; the token comes from server.json's token_file.
	t.Setenv(postcompact.EnvAddress, tcp)
	c, err := postcompact.New(postcompact.WithAutoStart(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if a := c.Address(); a.Source != postcompact.SourceEnv || !a.IsTCP() {
		t.Fatalf("address %+v", a)
	}
	info, err := c.GetServerInfo(ctx, &pb.GetServerInfoRequest{})
	if err != nil {
		t.Fatalf("GetServerInfo over TCP with the token: %v", err)
	}
	if int(info.GetTcpPort()) != sj.TCPPort {
		t.Fatalf("tcp_port %d, want %d", info.GetTcpPort(), sj.TCPPort)
	}
	s, err := c.OpenSession(ctx, &pb.OpenSessionRequest{Cwd: dir})
	if err != nil {
		t.Fatalf("OpenSession over TCP: %v", err)
	}
	if _, err := s.Compact(ctx); err != nil {
		t.Fatalf("Compact over TCP: %v", err)
	}
	_ = s.Close(ctx)

	// A wrong token is refused with a reason.
	bad, err := postcompact.New(postcompact.WithAddress(tcp), postcompact.WithToken("not-the-token"))
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	_, err = bad.GetServerInfo(ctx, &pb.GetServerInfoRequest{})
	var pe *postcompact.Error
	if !errors.As(err, &pe) || pe.Code != codes.Unauthenticated {
		t.Fatalf("wrong token: %v, want Unauthenticated", err)
	}
	if pe.Reason == "" {
		t.Errorf("wrong token: no reason in %v", pe)
	}
	// POSTCOMPACT_TOKEN wins over the token file.
	t.Setenv(postcompact.EnvToken, "also-wrong")
	c3, err := postcompact.New(postcompact.WithAutoStart(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if _, err := c3.GetServerInfo(ctx, &pb.GetServerInfoRequest{}); postcompact.CodeOf(err) != codes.Unauthenticated {
		t.Fatalf("POSTCOMPACT_TOKEN not used: %v", err)
	}
}

func getsid(pid int) (int, error) {
	sid, _, errno := syscall.RawSyscall(syscall.SYS_GETSID, uintptr(pid), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(sid), nil
}

// TestLiveAutoStartOfADaemonThatCannotStart: a real daemon with a bad config.toml, auto-started,
// fails the call at once (not after the start timeout) with its first error line, which its log
// in the state directory has too.
func TestLiveAutoStartOfADaemonThatCannotStart(t *testing.T) {
	repo := repoRoot(t)
	bin := filepath.Join(repo, ".venv", "bin", "postcompact")
	dir := runtimeDir(t)
	hermetic(t, dir)
	t.Setenv(postcompact.EnvBin, bin)
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	cfg := filepath.Join(dir, "home", ".config", "postcompact", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("[policy]\nfoo = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := postcompact.New(postcompact.WithStartTimeout(2 * time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err = c.GetServerInfo(ctx, &pb.GetServerInfoRequest{})
	var pe *postcompact.Error
	if !errors.As(err, &pe) || pe.Reason != postcompact.ReasonDaemonStartFailed ||
		!strings.Contains(pe.Message, "exited with status 2 before serving: postcompact: configuration error:") ||
		!strings.Contains(pe.Message, "unknown key policy.foo") {
		t.Fatalf("a daemon with a bad config: %v", err)
	}
	log, err := os.ReadFile(filepath.Join(dir, "state", "postcompact", "daemon.log"))
	if err != nil || !strings.Contains(string(log), "unknown key policy.foo") {
		t.Fatalf("its log: %q (%v)", log, err)
	}
}
