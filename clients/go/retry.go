package postcompact

// Recovering across a daemon restart or an overload (docs/clients.md, "Retries"). An error with a
// google.rpc.RetryInfo (the daemon's OVERLOADED) is retried for any call, after at least the
// delay it names: the daemon refused it before applying anything. No other daemon answer is
// retried. Besides those, only a transport failure is: UNAVAILABLE or CANCELLED without a daemon
// reason (a live daemon's UNAVAILABLE, e.g. STATE_WRITE_FAILED or SHUTTING_DOWN, is an answer).
// An idempotent call (IsIdempotent) is retried whatever happened to the connection; any other
// call only when the connection could not be established, so the request was never written.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	pb "github.com/postcompact/postcompact/clients/go/postcompactv1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ReasonDaemonUnavailable is the reason of the *Error returned when no daemon answered within
// the retry policy; its Metadata holds "address", "attempts" and "elapsed_ms".
const ReasonDaemonUnavailable = "DAEMON_UNAVAILABLE"

// RetryPolicy bounds the retries of a call while the daemon is unreachable or overloaded: the
// first retry waits InitialBackoff, each next one Multiplier times longer, at most MaxBackoff,
// each wait scaled by a random factor in [1-Jitter, 1+Jitter] (and, for an answer with a
// RetryInfo, at least its delay). Retrying stops after MaxAttempts attempts or MaxElapsed since
// the first attempt (or when the call's context ends).
type RetryPolicy struct {
	MaxElapsed     time.Duration
	MaxAttempts    int
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	Multiplier     float64
	Jitter         float64
}

// DefaultRetryPolicy is about 10 s of retries: 50 ms, 100 ms, ... 1 s, 1 s, ... (±20 %).
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxElapsed: 10 * time.Second, MaxAttempts: 40, InitialBackoff: 50 * time.Millisecond,
		MaxBackoff: time.Second, Multiplier: 2, Jitter: 0.2}
}

// NoRetry makes one attempt per call (an OVERLOADED answer is returned as is, too).
func NoRetry() RetryPolicy { return RetryPolicy{MaxAttempts: 1} }

// WithRetry sets the retry policy (default DefaultRetryPolicy()).
func WithRetry(p RetryPolicy) Option { return func(o *options) { o.retry = &p } }

// Backoff is the wait before retry number n (1-based).
func (p RetryPolicy) Backoff(n int) time.Duration {
	d := float64(p.InitialBackoff)
	for i := 1; i < n && d < float64(p.MaxBackoff); i++ {
		d *= p.Multiplier
	}
	d = min(d, float64(p.MaxBackoff))
	d *= 1 + p.Jitter*(2*rand.Float64()-1)
	return time.Duration(max(d, 0))
}

// IsIdempotent reports whether repeating req after the daemon may already have applied it is
// harmless. method is the RPC's name ("CheckWrite") or full method.
func IsIdempotent(method string, req any) bool {
	switch shortMethod(method) {
	case "GetServerInfo", "GetStats", "ListSessions", "CheckWrite", "CheckStale", "PreviewCompact",
		"SetPlan", "SetMode", "UpsertTask", "EstimateTokens", "EstimateTokensBatch", "CountTokens",
		"CountTokensBatch", "TruncateTokens", "TruncateTokensBatch":
		return true
	case "OpenSession": // resumes the named session; an empty id would make a second one
		r, ok := req.(*pb.OpenSessionRequest)
		return ok && r.GetSessionId() != ""
	case "RecordRead": // timestamp 0 = "now": a retry would store another
		r, ok := req.(*pb.RecordReadRequest)
		return ok && r.GetTimestampMs() != 0
	case "RecordWrite": // conditional: a repeat of one that was recorded finds its own entry
		r, ok := req.(*pb.RecordWriteRequest)
		return ok && r.GetTimestampMs() != 0 && r.IfEntryTimestampMs == nil
	case "RecordSkill":
		r, ok := req.(*pb.RecordSkillRequest)
		return ok && r.GetInvokedAtMs() != 0
	// Not idempotent, so retried only when not sent: ReadFile (a repeat answers the "unchanged"
	// stub), Compact (it clears the file state and bumps the count: a repeat restores another
	// set), SetCatalog (the delta is announced once), StartAgent, EndAgent, MergeFileState,
	// CloseSession (a repeat fails or reports other counts), ImportTranscript (it creates the
	// session: a repeat answers ALREADY_EXISTS).
	case "ReadFile", "Compact", "SetCatalog", "StartAgent", "EndAgent", "MergeFileState",
		"CloseSession", "ImportTranscript":
		return false
	}
	// Any other (unknown) call: only when not sent.
	return false
}

// notSent reports whether err is grpc-go's failure to establish a connection (dial refused, no
// socket file...): the request was never written, so the daemon cannot have acted on it.
func notSent(err error) bool {
	msg := status.Convert(err).Message()
	return strings.Contains(msg, "Error while dialing") || strings.Contains(msg, "connection refused") ||
		strings.Contains(msg, "no such file or directory")
}

// transportFailure: UNAVAILABLE, or CANCELLED that the caller did not ask for (gRPC's answer to
// a call that reached a daemon as it stopped), with no daemon reason: the daemon went away.
// Every answer of a live daemon carries a reason.
func transportFailure(ctx context.Context, err error, reason string) bool {
	if err == nil || reason != "" {
		return false
	}
	code := status.Code(err)
	return code == codes.Unavailable || (code == codes.Canceled && ctx.Err() == nil)
}

func shortMethod(method string) string { return method[strings.LastIndexByte(method, '/')+1:] }

// retry re-invokes a call that failed with a RetryInfo or a transport failure while the policy
// allows it. err and invoke's results are mapped (FromError). It returns the last error: for an
// overload the daemon's own, for a transport failure a *Error with ReasonDaemonUnavailable when
// it gave up.
func (c *Client) retry(ctx context.Context, method string, req any, err error, invoke func() error) error {
	p := c.opts.retryPolicy()
	begin := time.Now()
	for attempt := 1; ; attempt++ {
		var pe *Error
		overloaded := errors.As(err, &pe) && pe.retryInfo
		var wait time.Duration
		switch {
		case overloaded:
			// Refused before anything was applied: safe for any call, after the daemon's delay.
			wait = max(pe.RetryAfter, p.Backoff(attempt))
		case transportFailure(ctx, err, ReasonOf(err)):
			// No daemon: start it, within the AutoStartPolicy (autostart.go).
			if c.auto && status.Code(err) == codes.Unavailable {
				started, serr := c.autoStart(ctx)
				if serr != nil {
					return serr
				}
				// Re-send at once only what cannot be applied twice: an idempotent call, or one
				// that never reached a daemon. Any other may have been applied before the
				// connection broke: reported below as not retried, as without auto-start.
				if started && (IsIdempotent(method, req) || notSent(err)) {
					err = invoke()
					continue
				}
			}
			if !IsIdempotent(method, req) && !notSent(err) {
				st := status.Convert(err)
				return &Error{Code: st.Code(), status: st, Reason: ReasonConnectionLost, Domain: ErrorDomain, Transport: true,
					Metadata: map[string]string{"address": c.addr.Target}, Message: fmt.Sprintf(
						"the connection to the postcompact daemon at %s failed during %s, which is not retried: the daemon may have applied it (error: %s)",
						c.addr.Target, shortMethod(method), st.Message())}
			}
			wait = p.Backoff(attempt)
		default:
			return err
		}
		elapsed := time.Since(begin)
		remaining := p.MaxElapsed - elapsed
		if dl, ok := ctx.Deadline(); ok {
			remaining = min(remaining, time.Until(dl))
		}
		if attempt >= p.MaxAttempts || remaining <= 0 {
			if overloaded {
				return err
			}
			return c.gaveUp(method, err, attempt, elapsed)
		}
		select {
		case <-ctx.Done():
			if overloaded {
				return err
			}
			return c.gaveUp(method, err, attempt, time.Since(begin))
		case <-time.After(min(wait, remaining)):
		}
		if !overloaded {
			c.conn.ResetConnectBackoff()
		}
		err = invoke()
	}
}

func (c *Client) gaveUp(method string, err error, attempts int, elapsed time.Duration) error {
	st := status.Convert(err)
	note := ""
	if c.auto {
		if why := c.starter.note(); why != "" {
			note = "; auto-start: " + why
		}
	}
	return &Error{
		Code:      codes.Unavailable,
		Reason:    ReasonDaemonUnavailable,
		Domain:    ErrorDomain,
		Transport: true,
		Message: fmt.Sprintf("no postcompact daemon answered at %s: %s failed %d time(s) over %.1fs (last error: %s)%s",
			c.addr.Target, shortMethod(method), attempts, elapsed.Seconds(), st.Message(), note),
		Metadata: map[string]string{"address": c.addr.Target, "attempts": strconv.Itoa(attempts),
			"elapsed_ms": strconv.FormatInt(elapsed.Milliseconds(), 10)},
		status: st,
	}
}

func (o *options) retryPolicy() RetryPolicy {
	if o.retry == nil {
		return DefaultRetryPolicy()
	}
	p := *o.retry
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 1 << 30
	}
	if p.Multiplier < 1 {
		p.Multiplier = 1
	}
	return p
}
