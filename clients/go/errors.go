package postcompact

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// ErrorDomain is the google.rpc.ErrorInfo domain of every daemon error.
const ErrorDomain = "postcompact"

// ReasonMetadataKey is the trailing metadata key carrying the error reason.
const ReasonMetadataKey = "postcompact-error-reason"

// The reasons the client gives a failure no daemon answered (Error.Transport is true), the same
// in every client (docs/clients.md, "Errors"); ReasonDaemonUnavailable (retry.go) and
// ReasonDaemonStartFailed (autostart.go) are the others.
const (
	// ReasonConnectionLost: the connection broke during a call that is not retried (the daemon
	// may have applied it).
	ReasonConnectionLost = "CONNECTION_LOST"
	// ReasonDeadlineExceeded: the call's deadline (its context's) passed without an answer.
	ReasonDeadlineExceeded = "DEADLINE_EXCEEDED"
	// ReasonAborted: the caller cancelled the call's context.
	ReasonAborted = "ABORTED"
	// ReasonTransportError: any other status gRPC produced itself, without a daemon reason.
	ReasonTransportError = "TRANSPORT_ERROR"
)

// Error is a failed call: the gRPC status code, the daemon's machine-readable reason (from the
// trailing metadata and/or the google.rpc.ErrorInfo detail) and its message. Every error returned
// by a call of this package that carries a gRPC status is an *Error; use errors.As, or the helpers
// ReasonOf, CodeOf and IsReason.
type Error struct {
	Code codes.Code
	// Reason is the daemon's reason, or, when no daemon answered (Transport), the client's:
	// ReasonDaemonUnavailable, ReasonDaemonStartFailed, ReasonConnectionLost,
	// ReasonDeadlineExceeded, ReasonAborted, ReasonTransportError.
	Reason string
	// Transport is true when gRPC (or the kernel), not the daemon, produced the failure.
	Transport bool
	Message   string            // the status message
	Domain    string            // the ErrorInfo domain ("postcompact"), "" when absent
	Metadata  map[string]string // the ErrorInfo metadata, nil when absent
	// RetryAfter is the delay of the daemon's google.rpc.RetryInfo detail, 0 when it sent none.
	// A RetryInfo (the daemon's OVERLOADED) means the call was refused before anything was
	// applied: the client retries it within its RetryPolicy, so a caller sees one only when the
	// policy was spent (or is NoRetry()).
	RetryAfter time.Duration
	retryInfo  bool // a RetryInfo was sent (even one of 0 s): what makes the call retryable
	status     *status.Status
}

func (e *Error) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("postcompact: %s (%s): %s", e.Code, e.Reason, e.Message)
	}
	return fmt.Sprintf("postcompact: %s: %s", e.Code, e.Message)
}

// GRPCStatus lets status.FromError and status.Code see the original status.
func (e *Error) GRPCStatus() *status.Status { return e.status }

// Is matches another *Error by code and, when the target has one, by reason:
// errors.Is(err, &postcompact.Error{Code: codes.NotFound, Reason: "SESSION_NOT_FOUND"}).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	return t.Code == e.Code && (t.Reason == "" || t.Reason == e.Reason)
}

// FromError converts a gRPC error and its trailing metadata (may be nil) into an *Error. Errors
// without a gRPC status (and nil) are returned unchanged.
func FromError(err error, trailer metadata.MD) error {
	if err == nil {
		return nil
	}
	var pe *Error
	if errors.As(err, &pe) {
		return err
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	e := &Error{Code: st.Code(), Message: st.Message(), status: st}
	for _, d := range st.Details() {
		switch info := d.(type) {
		case *errdetails.ErrorInfo:
			if e.Domain == "" || info.GetDomain() == ErrorDomain {
				e.Domain = info.GetDomain()
				e.Reason = info.GetReason()
				e.Metadata = info.GetMetadata()
			}
		case *errdetails.RetryInfo:
			e.retryInfo = true
			e.RetryAfter = max(info.GetRetryDelay().AsDuration(), 0)
		}
	}
	if vals := trailer.Get(ReasonMetadataKey); len(vals) > 0 && vals[0] != "" {
		e.Reason = vals[0]
	}
	return e
}

// named returns err with the client's reason when it is an *Error no daemon answered (no reason):
// what every call of the client returns. ctx is the call's (its cancellation is the caller's).
func named(ctx context.Context, err error) error {
	var pe *Error
	if !errors.As(err, &pe) || pe.Reason != "" {
		return err
	}
	n := *pe
	n.Transport = true
	switch {
	case pe.Code == codes.DeadlineExceeded:
		n.Reason = ReasonDeadlineExceeded
	case pe.Code == codes.Canceled && ctx.Err() != nil:
		n.Reason = ReasonAborted
	case pe.Code == codes.Unavailable || pe.Code == codes.Canceled:
		n.Reason = ReasonConnectionLost
	default:
		n.Reason = ReasonTransportError
	}
	return &n
}

// ReasonOf returns the daemon's reason for err, or "" when err is not an *Error.
func ReasonOf(err error) string {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Reason
	}
	return ""
}

// CodeOf returns the gRPC code of err: codes.OK for nil, codes.Unknown for a non-gRPC error.
func CodeOf(err error) codes.Code {
	if err == nil {
		return codes.OK
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Code
	}
	return status.Code(err)
}

// IsReason reports whether err is an *Error with that reason.
func IsReason(err error, reason string) bool {
	var pe *Error
	return errors.As(err, &pe) && pe.Reason == reason
}
