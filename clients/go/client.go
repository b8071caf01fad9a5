// Package postcompact is the Go client of the postcompact daemon: address resolution, auto-start,
// the TCP token, typed errors (*Error), every RPC of postcompact.v1 and the common flow in a few
// calls (OpenSession → *Session → Compact → Join).
//
//	c, err := postcompact.New()
//	defer c.Close()
//	s, err := c.OpenSession(ctx, &postcompactv1.OpenSessionRequest{Cwd: dir})
//	_, err = s.ReadFile(ctx, "src/a.go")
//	res, err := s.Compact(ctx)
//	inj := res.Injection() // postcompact.Join(res.Attachments)
//	// inj.UserBlocks: the text blocks of the user message after the summary, in order;
//	// inj.SystemText: the system message at the end ("" when no attachment is system-placed).
//	fmt.Println(strings.Join(inj.UserBlocks, "\n"))
//	fmt.Println(inj.SystemText)
package postcompact

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// DefaultStartTimeout is how long auto-start waits for the daemon to report SERVING.
const DefaultStartTimeout = 10 * time.Second

type options struct {
	address      string
	autoStart    *bool
	bin          string
	command      []string
	serveArgs    []string
	startTimeout time.Duration
	token        string
	dialOptions  []grpc.DialOption
	retry        *RetryPolicy
	// how often auto-start may start the daemon (nil: DefaultAutoStartPolicy())
	autoStartPolicy *AutoStartPolicy
}

// Option configures New.
type Option func(*options)

// WithAddress sets the daemon address explicitly ("unix:///path" or "127.0.0.1:PORT"); it wins over
// POSTCOMPACT_ADDRESS and server.json, and disables auto-start unless WithAutoStart(true) is given.
func WithAddress(addr string) Option { return func(o *options) { o.address = addr } }

// WithAutoStart turns auto-start on or off. It is on by default, off with an explicit address.
// On, the client starts `postcompact serve --detached` whenever a call finds no daemon, over its
// whole life, within its AutoStartPolicy (WithAutoStartPolicy).
func WithAutoStart(on bool) Option { return func(o *options) { o.autoStart = &on } }

// WithDaemonBin sets the daemon executable used by auto-start (default: POSTCOMPACT_BIN, else
// `postcompact` on PATH).
func WithDaemonBin(path string) Option { return func(o *options) { o.bin = path } }

// WithDaemonCommand sets the whole command auto-start runs before `serve`, e.g.
// WithDaemonCommand(".venv/bin/python", "-m", "postcompact"). It wins over WithDaemonBin.
func WithDaemonCommand(argv ...string) Option {
	return func(o *options) { o.command = append([]string(nil), argv...) }
}

// WithServeArgs adds arguments after `serve --detached` when auto-starting (e.g. "--log-level",
// "debug").
func WithServeArgs(args ...string) Option {
	return func(o *options) { o.serveArgs = append(o.serveArgs, args...) }
}

// WithStartTimeout bounds the health wait after auto-start (default 10 s).
func WithStartTimeout(d time.Duration) Option { return func(o *options) { o.startTimeout = d } }

// WithToken sets the TCP bearer token (default: POSTCOMPACT_TOKEN, server.json's token_file,
// D/token).
func WithToken(token string) Option { return func(o *options) { o.token = token } }

// WithDialOptions adds grpc-go dial options.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(o *options) { o.dialOptions = append(o.dialOptions, opts...) }
}

// Client is a connection to the daemon. It is safe for concurrent use. Every RPC of
// postcompact.v1 is a method; errors carrying a gRPC status are *Error.
type Client struct {
	addr    Address
	opts    options
	conn    *grpc.ClientConn
	api     pb.PostcompactServiceClient
	health  grpc_health_v1.HealthClient
	auto    bool
	startMu sync.Mutex

	// How often the daemon is started (docs/clients.md, "Auto-start"), and the start running.
	starter starter

	tokenMu sync.Mutex
	token   string
}

// New resolves the address and prepares a connection (dialing is lazy: the first call connects,
// and auto-starts the daemon when it is absent and auto-start is on).
func New(opts ...Option) (*Client, error) {
	c := &Client{}
	for _, o := range opts {
		o(&c.opts)
	}
	if c.opts.startTimeout <= 0 {
		c.opts.startTimeout = DefaultStartTimeout
	}
	addr, err := ResolveAddress(c.opts.address)
	if err != nil {
		return nil, err
	}
	c.addr = addr
	c.auto = addr.Source != SourceExplicit
	if c.opts.autoStart != nil {
		c.auto = *c.opts.autoStart
	}
	c.token = c.opts.token
	c.starter.policy = DefaultAutoStartPolicy()
	if c.opts.autoStartPolicy != nil {
		c.starter.policy = *c.opts.autoStartPolicy
	}
	dial := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		// A local daemon: reconnect quickly once it is (re)started.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: 2 * time.Second,
		}),
		grpc.WithChainUnaryInterceptor(c.intercept),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64 << 20)),
	}
	if addr.IsTCP() {
		dial = append(dial, grpc.WithPerRPCCredentials(tokenCreds{c}))
	}
	dial = append(dial, c.opts.dialOptions...)
	conn, err := grpc.NewClient(addr.Target, dial...)
	if err != nil {
		return nil, err
	}
	c.conn = conn
	c.api = pb.NewPostcompactServiceClient(conn)
	c.health = grpc_health_v1.NewHealthClient(conn)
	return c, nil
}

// Close closes the connection (the daemon keeps running).
func (c *Client) Close() error { return c.conn.Close() }

// Address returns the resolved address.
func (c *Client) Address() Address { return c.addr }

// Conn returns the underlying grpc-go connection.
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// API returns the generated client on the same connection (with error mapping, token and
// auto-start), for callers that want the raw request and response messages.
func (c *Client) API() pb.PostcompactServiceClient { return c.api }

// Check asks grpc.health.v1.Health/Check for the overall status ("" service), without auto-start.
func (c *Client) Check(ctx context.Context) (grpc_health_v1.HealthCheckResponse_ServingStatus, error) {
	resp, err := c.health.Check(ctx, &grpc_health_v1.HealthCheckRequest{})
	if err != nil {
		return grpc_health_v1.HealthCheckResponse_UNKNOWN, err
	}
	return resp.GetStatus(), nil
}

// WaitHealthy polls the health service until it reports SERVING or ctx ends.
func (c *Client) WaitHealthy(ctx context.Context) error {
	return c.waitHealthy(ctx, nil)
}

// errNotServing is waitHealthy's answer when ctx ended before SERVING.
type errNotServing struct{ last error }

func (e errNotServing) Error() string { return fmt.Sprintf("not SERVING (last: %v)", e.last) }

func (c *Client) waitHealthy(ctx context.Context, sp *spawned) error {
	var last error
	var exited <-chan error
	if sp != nil {
		exited = sp.exited
	}
	for {
		attempt, cancel := context.WithTimeout(ctx, 250*time.Millisecond)
		resp, err := c.health.Check(attempt, &grpc_health_v1.HealthCheckRequest{}, grpc.WaitForReady(true))
		cancel()
		if err == nil && resp.GetStatus() == grpc_health_v1.HealthCheckResponse_SERVING {
			return nil
		}
		if err != nil {
			last = err
		} else {
			last = fmt.Errorf("health status %s", resp.GetStatus())
		}
		select {
		case <-ctx.Done():
			if sp == nil {
				return fmt.Errorf("postcompact: daemon at %s not healthy: %w (last: %v)", c.addr.Target, ctx.Err(), last)
			}
			return errNotServing{last}
		case e := <-exited:
			said := sp.said()
			if said != "" {
				said = ": " + said
			}
			return fmt.Errorf("the postcompact daemon (pid %d) %v before serving%s", sp.pid, e, said)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// EnsureServing returns once the daemon reports SERVING: it checks health and, when the daemon
// is absent and auto-start is on, starts it (within the AutoStartPolicy) and waits (at most the
// start timeout). With auto-start off it only checks. Calls do this on their own; a harness may
// call it up front.
func (c *Client) EnsureServing(ctx context.Context) error {
	probe, cancel := context.WithTimeout(ctx, 2*time.Second)
	st, err := c.Check(probe)
	cancel()
	if err == nil && st == grpc_health_v1.HealthCheckResponse_SERVING {
		return nil
	}
	if !c.auto {
		if err == nil {
			err = fmt.Errorf("health status %s", st)
		}
		return FromError(err, nil)
	}
	started, serr := c.autoStart(ctx)
	if !started {
		return &Error{Code: codes.Unavailable, Reason: ReasonDaemonUnavailable, Domain: ErrorDomain, Transport: true,
			Message: fmt.Sprintf("no postcompact daemon at %s; auto-start: %s", c.addr.Target, c.starter.note())}
	}
	return serr
}

func isHealthMethod(method string) bool { return strings.HasPrefix(method, "/grpc.health.v1.Health/") }

// intercept maps errors to *Error, and retries within the policy what may be retried, starting
// the daemon when a call finds it absent and auto-start is on (retry.go).
func (c *Client) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if isHealthMethod(method) {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	var trailer metadata.MD
	call := append(opts[:len(opts):len(opts)], grpc.Trailer(&trailer))
	err := invoker(ctx, method, req, reply, cc, call...)
	// The daemon absent, restarting or overloaded: start it, retry what is safe to retry.
	if err != nil {
		err = c.retry(ctx, method, req, FromError(err, trailer), func() error {
			trailer = nil
			e := invoker(ctx, method, req, reply, cc, call...)
			return FromError(e, trailer)
		})
	}
	if err != nil && status.Code(err) == codes.Unauthenticated && c.opts.token == "" {
		c.tokenMu.Lock()
		c.token = "" // re-read next time: the daemon may have restarted with a new token
		c.tokenMu.Unlock()
	}
	return named(ctx, FromError(err, trailer))
}

// startRun is one start: done is closed when it is over, err holds its outcome.
type startRun struct {
	done chan struct{}
	err  error
}

// autoStart starts the daemon when the AutoStartPolicy allows it now, or waits for the start
// another call is making and shares its outcome: started is true then. It is false when no
// start was made (the call's retries go on, and ask again at their next failure).
func (c *Client) autoStart(ctx context.Context) (started bool, err error) {
	s := &c.starter
	s.mu.Lock()
	if run := s.run; run != nil {
		s.mu.Unlock()
		select {
		case <-run.done:
			return true, run.err
		case <-ctx.Done():
			return true, ctx.Err()
		}
	}
	if s.whyNot(time.Now()) != "" {
		s.mu.Unlock()
		return false, nil
	}
	run := &startRun{done: make(chan struct{})}
	s.run, s.spawned = run, false
	s.mu.Unlock()
	run.err = c.ensureStarted(ctx)
	s.mu.Lock()
	if s.spawned {
		s.ended = time.Now()
		if run.err != nil {
			s.failures++
			s.lastErr = run.err.Error()
			var pe *Error
			if errors.As(run.err, &pe) {
				s.lastErr = pe.Message
			}
		} else {
			s.failures, s.lastErr = 0, ""
		}
	}
	s.run = nil
	s.mu.Unlock()
	close(run.done)
	return true, run.err
}

// ensureStarted starts the daemon unless a health check finds it serving, then waits for health:
// a *Error with ReasonDaemonStartFailed as soon as the daemon exits before serving (with its
// exit status and first error line), or when it has not reported SERVING within the start
// timeout.
func (c *Client) ensureStarted(ctx context.Context) error {
	c.startMu.Lock()
	defer c.startMu.Unlock()
	c.conn.ResetConnectBackoff()
	probe, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	st, err := c.Check(probe)
	cancel()
	if err == nil && st == grpc_health_v1.HealthCheckResponse_SERVING {
		return nil
	}
	failed := func(msg string) error {
		return &Error{Code: codes.Unavailable, Reason: ReasonDaemonStartFailed, Domain: ErrorDomain, Transport: true,
			Message: fmt.Sprintf("auto-start of the postcompact daemon at %s failed: %s", c.addr.Target, msg)}
	}
	sp, err := c.spawn()
	if err != nil {
		return failed(err.Error())
	}
	defer sp.errors.Close()
	c.starter.recordSpawn()
	c.conn.ResetConnectBackoff()
	wait, cancel := context.WithTimeout(ctx, c.opts.startTimeout)
	defer cancel()
	switch err := c.waitHealthy(wait, sp); {
	case err == nil:
		return nil
	case errors.As(err, new(errNotServing)) && ctx.Err() == nil:
		said := sp.said()
		if said != "" {
			said = " (it said: " + said + ")"
		}
		return failed(fmt.Sprintf("it (pid %d) did not report SERVING within %s%s", sp.pid, c.opts.startTimeout, said))
	default:
		return failed(err.Error())
	}
}

type tokenCreds struct{ c *Client }

func (t tokenCreds) GetRequestMetadata(ctx context.Context, _ ...string) (map[string]string, error) {
	tok, err := t.c.bearer()
	if err != nil {
		return nil, status.Error(codes.Unauthenticated, err.Error())
	}
	return map[string]string{"authorization": "Bearer " + tok}, nil
}

func (tokenCreds) RequireTransportSecurity() bool { return false }

func (c *Client) bearer() (string, error) {
	c.tokenMu.Lock()
	defer c.tokenMu.Unlock()
	if c.token != "" {
		return c.token, nil
	}
	tok, err := ReadToken(nil)
	if err != nil {
		return "", err
	}
	if tok == "" {
		return "", errors.New("postcompact: the token file is empty")
	}
	c.token = tok
	return tok, nil
}
