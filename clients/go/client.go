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
}

// Option configures New.
type Option func(*options)

// WithAddress sets the daemon address explicitly ("unix:///path" or "127.0.0.1:PORT"); it wins over
// POSTCOMPACT_ADDRESS and server.json, and disables auto-start unless WithAutoStart(true) is given.
func WithAddress(addr string) Option { return func(o *options) { o.address = addr } }

// WithAutoStart turns auto-start on or off. It is on by default, off with an explicit address.
func WithAutoStart(on bool) Option { return func(o *options) { o.autoStart = &on } }

// WithDaemonBin sets the daemon executable used by auto-start (default: POSTCOMPACT_BIN, else
// `postcompact` on PATH).
func WithDaemonBin(path string) Option { return func(o *options) { o.bin = path } }

// WithDaemonCommand sets the whole command auto-start runs before `serve`, e.g.
// WithDaemonCommand(".venv/bin/python", "-m", "postcompact"). It wins over WithDaemonBin.
func WithDaemonCommand(argv ...string) Option {
	return func(o *options) { o.command = append([]string(nil), argv...) }
}

// WithServeArgs adds arguments after `serve` when auto-starting (e.g. "--log-level", "debug").
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

	// The client's one auto-start (docs/clients.md: at most once per client): startDone is
	// closed when it is over, startErr holds its outcome.
	autoMu    sync.Mutex
	startDone chan struct{}
	startErr  error

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

func (c *Client) waitHealthy(ctx context.Context, exited <-chan error) error {
	var last error
	for {
		attempt, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
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
			return fmt.Errorf("postcompact: daemon at %s not healthy: %w (last: %v)", c.addr.Target, ctx.Err(), last)
		case e := <-exited:
			return fmt.Errorf("postcompact: the auto-started daemon exited before serving: %v", e)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// EnsureServing returns once the daemon reports SERVING: it checks health and, when the daemon
// is absent and auto-start is on, starts it and waits (at most the start timeout). With
// auto-start off it only checks. Calls do this on their own; a harness may call it up front.
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
	return c.ensureStarted(ctx)
}

func isHealthMethod(method string) bool { return strings.HasPrefix(method, "/grpc.health.v1.Health/") }

// intercept maps errors to *Error, auto-starts the daemon once when a call finds it absent, and
// retries within the policy what may be retried (retry.go).
func (c *Client) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if isHealthMethod(method) {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	var trailer metadata.MD
	call := append(opts[:len(opts):len(opts)], grpc.Trailer(&trailer))
	err := invoker(ctx, method, req, reply, cc, call...)
	// UNAVAILABLE with a reason comes from a live daemon (e.g. one shutting down): no auto-start.
	if err != nil && c.auto && status.Code(err) == codes.Unavailable && ReasonOf(FromError(err, trailer)) == "" {
		started, serr := c.autoStart(ctx)
		if serr != nil {
			st, _ := status.FromError(err)
			return &Error{Code: codes.Unavailable, Message: st.Message() + "; auto-start: " + serr.Error(), status: st}
		}
		// Re-send at once only what cannot be applied twice: an idempotent call, or one that never
		// reached a daemon. Any other call may have been applied before the connection broke: the
		// retry below reports it as not retried, as without auto-start.
		if started && (IsIdempotent(method, req) || notSent(err)) {
			trailer = nil
			err = invoker(ctx, method, req, reply, cc, call...)
		}
	}
	// The daemon restarting or overloaded: retry what is safe to retry (retry.go).
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
	return FromError(err, trailer)
}

// autoStart runs the client's one auto-start, on its first transport failure. Calls that fail
// while it runs wait for it and share its outcome (started is true); a failure after it is left to
// the retry policy (started is false): a daemon restarted by someone else is ridden out, not
// started again.
func (c *Client) autoStart(ctx context.Context) (started bool, err error) {
	c.autoMu.Lock()
	done, first := c.startDone, c.startDone == nil
	if first {
		done = make(chan struct{})
		c.startDone = done
	}
	c.autoMu.Unlock()
	if first {
		c.startErr = c.ensureStarted(ctx)
		close(done)
		return true, c.startErr
	}
	select {
	case <-done:
		return false, nil // over before this call failed
	default:
	}
	select {
	case <-done:
		return true, c.startErr
	case <-ctx.Done():
		return true, ctx.Err()
	}
}

// ensureStarted starts the daemon unless a health check finds it serving, then waits for health.
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
	exited, err := c.spawn()
	if err != nil {
		return err
	}
	c.conn.ResetConnectBackoff()
	wait, cancel := context.WithTimeout(ctx, c.opts.startTimeout)
	defer cancel()
	return c.waitHealthy(wait, exited)
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
