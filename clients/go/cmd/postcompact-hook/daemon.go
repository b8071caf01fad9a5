package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	postcompact "github.com/postcompact/postcompact/clients/go"
	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health/grpc_health_v1"
)

// What the plugin asks of the daemon (clients/claude-code/plugins/postcompact/README.md).
const (
	// Parts is how many SessionStart(compact) commands hooks.json runs, each printing one part.
	Parts = 3
	// PartChars is the most UTF-16 units a part's text may have: Claude Code inlines a hook's
	// text up to 10,000 characters (counted before it escapes tags) and replaces a longer one by
	// a 2 KB preview; 100 are kept in hand.
	PartChars = 9_900
	// PartTokens is the most a restored file may take (its attachment's rough tokens, UTF-16
	// units / 4): with the part's header it fits one part.
	PartTokens = 2_400
	// Budget is what the files may take in all: two parts' worth, which first-fit-decreasing
	// always packs into three parts (parts.go), so no file is dropped for want of a part.
	Budget = (Parts - 1) * PartTokens
	// SessionPrefix makes the daemon's session id from Claude Code's session_id.
	SessionPrefix = "claude-code-"
)

// SessionPolicy is the policy the plugin opens its sessions with, and passes again with every
// compaction: Claude Code's own files left to it, the others restored within the budget.
func SessionPolicy() *pb.RestorePolicy {
	perFile, budget := int64(PartTokens), int64(Budget)
	return &pb.RestorePolicy{
		Complement:       pb.HarnessRule_HARNESS_RULE_CLAUDE_CODE,
		MaxTokensPerFile: &perFile,
		FileTokenBudget:  &budget,
	}
}

// errDaemonDown: no daemon answers and none could be started; the hook does nothing.
var errDaemonDown = errors.New("postcompact: the daemon is not available")

// Hook is one hook process: the payload, the shared state, the client and the session.
type Hook struct {
	P         *Payload
	St        *State
	C         *postcompact.Client
	SessionID string
	Project   string
	Home      string
	// Down is why the daemon is not available ("" while it is).
	Down string
	// OpenReq, when set, is how the session is opened in place of Claude Code's (another
	// harness: its own prefix, profile and policy).
	OpenReq *pb.OpenSessionRequest
}

func newHook(p *Payload, st *State) (*Hook, error) {
	c, err := postcompact.New(postcompact.WithAutoStart(false), postcompact.WithRetry(postcompact.NoRetry()))
	if err != nil {
		return nil, err
	}
	home, _ := os.UserHomeDir()
	return &Hook{P: p, St: st, C: c, SessionID: SessionPrefix + p.SessionID, Project: projectDir(p), Home: home}, nil
}

func (h *Hook) Close() { h.C.Close() }

// openRequest is the session as the plugin opens it: the project, the default profile (its
// rule restores the lines the agent saw, which keeps more files within a part than whole files;
// Claude Code's own rule is what complement mode predicts either way), the complement policy,
// and no <system-reminder> wrapper (Claude Code escapes the tag in hook text).
func (h *Hook) openRequest() *pb.OpenSessionRequest {
	return &pb.OpenSessionRequest{
		SessionId: h.SessionID,
		Cwd:       h.Project,
		Home:      h.Home,
		Profile:   pb.Profile_PROFILE_DEFAULT,
		Policy:    SessionPolicy(),
		Templates: &pb.TemplateSpec{Strings: map[string]string{"system_reminder": "{content}"}},
	}
}

// Open opens (or resumes) the session. A session stored with other settings (an older version
// of the plugin) is joined as it is: every compaction passes the policy again anyway.
func (h *Hook) Open(ctx context.Context) error {
	req := h.OpenReq
	if req == nil {
		req = h.openRequest()
	}
	_, err := h.C.OpenSession(ctx, req)
	if postcompact.IsReason(err, "SESSION_SETTINGS_MISMATCH") || postcompact.IsReason(err, "SESSION_CWD_MISMATCH") {
		_, err = h.C.AttachSession(ctx, h.SessionID)
	}
	return err
}

// transport reports a failure with no daemon answer (nothing listening, the connection lost):
// the client's DAEMON_UNAVAILABLE, or a transport status with no daemon reason.
func transport(err error) bool {
	if err == nil {
		return false
	}
	if postcompact.IsReason(err, postcompact.ReasonDaemonUnavailable) {
		return true
	}
	code := postcompact.CodeOf(err)
	return postcompact.ReasonOf(err) == "" && (code == codes.Unavailable || code == codes.Canceled)
}

// Call runs one call on the daemon for agent ("" = the main thread), and deals with what it
// may meet once each: no daemon (started unless a recent start failed: errDaemonDown), no
// session (opened), no agent yet (a sub-agent: started fresh, as Claude Code starts it).
func (h *Hook) Call(ctx context.Context, agent string, call func() error) error {
	if h.Down != "" {
		return errDaemonDown
	}
	started, opened, agentStarted := false, false, false
	for {
		err := call()
		switch {
		case err == nil:
			return nil
		case transport(err) && !started:
			started = true
			if !h.EnsureDaemon(ctx) {
				return errDaemonDown
			}
		case postcompact.IsReason(err, "SESSION_NOT_FOUND") && !opened:
			opened = true
			if oerr := h.Open(ctx); oerr != nil {
				return oerr
			}
		case postcompact.IsReason(err, "AGENT_NOT_FOUND") && agent != "" && !agentStarted:
			agentStarted = true
			_, serr := h.C.StartAgent(ctx, &pb.StartAgentRequest{
				SessionId: h.SessionID, AgentId: agent, Mode: pb.AgentMode_AGENT_MODE_FRESH,
			})
			if postcompact.IsReason(serr, "SESSION_NOT_FOUND") && !opened {
				opened = true
				if oerr := h.Open(ctx); oerr != nil {
					return oerr
				}
				_, serr = h.C.StartAgent(ctx, &pb.StartAgentRequest{
					SessionId: h.SessionID, AgentId: agent, Mode: pb.AgentMode_AGENT_MODE_FRESH,
				})
			}
			if serr != nil && !postcompact.IsReason(serr, "AGENT_EXISTS") {
				return serr
			}
		default:
			return err
		}
	}
}

// serving asks the health service, briefly.
func (h *Hook) serving(ctx context.Context, wait time.Duration) bool {
	probe, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	st, err := h.C.Check(probe)
	return err == nil && st == grpc_health_v1.HealthCheckResponse_SERVING
}

// EnsureDaemon makes sure a daemon serves: it starts one (`postcompact start`, once across the
// hook processes: a lock) unless a start failed recently (the back-off marker), in which case no
// hook waits on another try. False, with h.Down saying why, when none serves.
func (h *Hook) EnsureDaemon(ctx context.Context) bool {
	if h.serving(ctx, 300*time.Millisecond) {
		h.St.ClearFailure()
		return true
	}
	addr := h.C.Address()
	if addr.IsTCP() {
		h.Down = fmt.Sprintf("no daemon answers at %s (a TCP address: not started by the plugin)", addr.Target)
		return false
	}
	if f := h.St.InBackoff(); f != nil {
		h.Down = f.Reason
		return false
	}
	unlock, err := lockFile(ctx, h.St.lockPath())
	if err != nil {
		h.Down = fmt.Sprintf("cannot take the start lock %s: %v", h.St.lockPath(), err)
		return false
	}
	defer unlock()
	// Another hook process may have started it, or failed to, while this one waited.
	if h.serving(ctx, 300*time.Millisecond) {
		h.St.ClearFailure()
		return true
	}
	if f := h.St.InBackoff(); f != nil {
		h.Down = f.Reason
		return false
	}
	if reason := startDaemon(ctx, addr); reason != "" {
		h.St.RecordFailure(reason)
		h.Down = reason
		return false
	}
	h.C.Conn().ResetConnectBackoff()
	wait, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := h.C.WaitHealthy(wait); err != nil {
		h.Down = "the daemon started but does not answer: " + err.Error()
		h.St.RecordFailure(h.Down)
		return false
	}
	h.St.ClearFailure()
	return true
}

// DaemonBin is the executable that starts the daemon: POSTCOMPACT_BIN, else `postcompact` beside
// this program (the link `make claude-code-plugin` puts in the plugin's bin/), else on PATH.
func DaemonBin() (string, error) {
	if b := os.Getenv(postcompact.EnvBin); b != "" {
		return b, nil
	}
	if exe, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(exe), "postcompact")
		if st, err := os.Stat(beside); err == nil && !st.IsDir() {
			return beside, nil
		}
	}
	if p, err := exec.LookPath("postcompact"); err == nil {
		return p, nil
	}
	return "", errors.New("no postcompact to start: POSTCOMPACT_BIN is unset, none is beside the hook " +
		"(run `make claude-code-plugin` in the postcompact checkout) and none is on PATH")
}

// startDaemon runs `postcompact start` (detached daemon, health waited for, a lost race to
// another start handled) and returns "" once it serves, else why not, in a line.
func startDaemon(ctx context.Context, addr postcompact.Address) string {
	bin, err := DaemonBin()
	if err != nil {
		return err.Error()
	}
	argv := []string{"start"}
	if addr.SocketPath != "" && filepath.Clean(addr.SocketPath) != filepath.Clean(postcompact.DefaultSocketPath()) {
		argv = append(argv, "--socket", addr.SocketPath)
	}
	run, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(run, bin, argv...)
	cmd.Dir = "/"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		why := lastLines(out.String(), 3, 400)
		if why == "" {
			why = err.Error()
		}
		return fmt.Sprintf("`%s start` failed: %s", bin, why)
	}
	return ""
}

// lastLines is the end of a command's output, on one line, at most max characters.
func lastLines(s string, n, max int) string {
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			keep = append(keep, l)
		}
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	out := strings.Join(keep, " / ")
	if r := []rune(out); len(r) > max {
		out = "…" + string(r[len(r)-max:])
	}
	return out
}

// lockFile takes an exclusive flock on path, waiting while ctx allows.
func lockFile(ctx context.Context, path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// DownMessage is the one message a session gets when the daemon is not available.
func DownMessage(why string) string {
	return "postcompact: the daemon is not running and could not be started, so this session " +
		"goes on without the plugin (Claude Code restores its own files after a compaction as " +
		"usual). Why: " + why + ". Start it with `postcompact start`; `postcompact status` shows it."
}
