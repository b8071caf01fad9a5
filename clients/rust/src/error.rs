//! Typed errors: every daemon error carries its gRPC status code and the machine-readable reason
//! the daemon sends in the trailing metadata key `postcompact-error-reason` (and in a
//! `google.rpc.ErrorInfo` detail, domain "postcompact").

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use prost::Message;
use tonic::Code;

/// The trailing metadata key holding the reason of a daemon error.
pub const REASON_METADATA_KEY: &str = "postcompact-error-reason";
/// The `google.rpc.ErrorInfo` domain of the daemon's errors.
pub const ERROR_DOMAIN: &str = "postcompact";

// The reasons the client gives a failure no daemon answered ([`RpcError::is_transport`]), the
// same in every client (docs/clients.md, "Errors"); `REASON_DAEMON_UNAVAILABLE` (retry.rs) and
// `REASON_DAEMON_START_FAILED` (autostart.rs) are the others.
/// The connection broke during a call that is not retried: the daemon may have applied it.
pub const REASON_CONNECTION_LOST: &str = "CONNECTION_LOST";
/// The call's deadline ([`crate::Options::timeout`]) passed without an answer.
pub const REASON_DEADLINE_EXCEEDED: &str = "DEADLINE_EXCEEDED";
/// Any other status gRPC (tonic, hyper) produced itself, without a daemon reason.
pub const REASON_TRANSPORT_ERROR: &str = "TRANSPORT_ERROR";

const ERROR_INFO_TYPE_URL: &str = "type.googleapis.com/google.rpc.ErrorInfo";
const RETRY_INFO_TYPE_URL: &str = "type.googleapis.com/google.rpc.RetryInfo";

/// Everything that can go wrong when talking to the daemon.
#[derive(Debug)]
pub enum Error {
    /// The call reached the daemon (or the transport) and failed with a gRPC status.
    Rpc(RpcError),
    /// No connection could be made to the daemon at `address` (it is not running and
    /// auto-start is off, or it did not come up).
    Connect { address: String, message: String },
    /// Auto-start failed: no executable, spawn failure, or no healthy daemon within the timeout.
    Start(String),
    /// A bad address, an unreadable token or another local configuration problem.
    Config(String),
}

impl Error {
    /// The gRPC status code: the daemon's for [`Error::Rpc`], `Unavailable` for connection and
    /// start failures, `InvalidArgument` for local configuration errors.
    pub fn code(&self) -> Code {
        match self {
            Error::Rpc(e) => e.code,
            Error::Connect { .. } | Error::Start(_) => Code::Unavailable,
            Error::Config(_) => Code::InvalidArgument,
        }
    }

    /// The daemon's machine-readable reason (e.g. `"PATH_OUTSIDE_ROOTS"`), or, for a failure no
    /// daemon answered, the client's: `DAEMON_UNAVAILABLE` ([`Error::Connect`], or retries spent),
    /// `DAEMON_START_FAILED` ([`Error::Start`]), `CONNECTION_LOST`, `DEADLINE_EXCEEDED`,
    /// `TRANSPORT_ERROR`. `None` for a local configuration error, or a status converted with
    /// `From<tonic::Status>` that carried none.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Error::Rpc(e) => e.reason.as_deref(),
            Error::Connect { .. } => Some(crate::retry::REASON_DAEMON_UNAVAILABLE),
            Error::Start(_) => Some(crate::autostart::REASON_DAEMON_START_FAILED),
            Error::Config(_) => None,
        }
    }

    /// The delay of the daemon's `google.rpc.RetryInfo` detail, `None` when it sent none. A
    /// RetryInfo (the daemon's `OVERLOADED`) means the call was refused before anything was
    /// applied: the client retries it within its [`crate::RetryPolicy`], so a caller sees one
    /// only when the policy was spent (or is [`crate::RetryPolicy::none`]).
    pub fn retry_after(&self) -> Option<Duration> {
        self.as_rpc().and_then(RpcError::retry_after)
    }

    /// The RPC error, when this is one.
    pub fn as_rpc(&self) -> Option<&RpcError> {
        match self {
            Error::Rpc(e) => Some(e),
            _ => None,
        }
    }

    /// True when the daemon could not be reached at all (the trigger for auto-start).
    pub fn is_unavailable(&self) -> bool {
        self.code() == Code::Unavailable
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Rpc(e) => e.fmt(f),
            Error::Connect { address, message } => {
                write!(
                    f,
                    "cannot connect to the postcompact daemon at {address}: {message}"
                )
            }
            Error::Start(m) => write!(f, "cannot start the postcompact daemon: {m}"),
            Error::Config(m) => write!(f, "postcompact client configuration: {m}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Rpc(e) => Some(&e.status),
            _ => None,
        }
    }
}

impl From<tonic::Status> for Error {
    fn from(status: tonic::Status) -> Self {
        Error::Rpc(RpcError::from_status(status))
    }
}

/// A failed call: the status code, the daemon's message and reason, and the `ErrorInfo`
/// metadata when the daemon attached one.
#[derive(Debug, Clone)]
pub struct RpcError {
    pub code: Code,
    pub message: String,
    /// From the trailing metadata `postcompact-error-reason`, else from the `ErrorInfo` detail.
    pub reason: Option<String>,
    /// The `ErrorInfo` domain ("postcompact" for daemon errors).
    pub domain: Option<String>,
    /// The `ErrorInfo` metadata (e.g. the offending path).
    pub metadata: BTreeMap<String, String>,
    /// The original status.
    pub status: tonic::Status,
}

impl RpcError {
    pub fn from_status(status: tonic::Status) -> Self {
        let info = error_info(status.details());
        let reason = status
            .metadata()
            .get(REASON_METADATA_KEY)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .or_else(|| info.as_ref().map(|i| i.reason.clone()))
            .filter(|r| !r.is_empty());
        let (domain, metadata) = match info {
            Some(i) => (Some(i.domain), i.metadata.into_iter().collect()),
            None => (None, BTreeMap::new()),
        };
        RpcError {
            code: status.code(),
            message: status.message().to_owned(),
            reason,
            domain,
            metadata,
            status,
        }
    }

    /// The delay of the daemon's `google.rpc.RetryInfo` detail ([`Error::retry_after`]), read from
    /// the status details (not kept as a field: it would make every `Result<_, Error>` larger).
    pub fn retry_after(&self) -> Option<Duration> {
        retry_info(self.status.details())
    }

    /// The status code's canonical name, e.g. `"INVALID_ARGUMENT"`.
    pub fn code_name(&self) -> &'static str {
        code_name(self.code)
    }

    /// True when gRPC (or the kernel), not the daemon, produced this failure: its status carries
    /// no daemon reason (its `reason`, if any, is the client's).
    pub fn is_transport(&self) -> bool {
        self.status.metadata().get(REASON_METADATA_KEY).is_none()
            && error_info(self.status.details()).is_none()
    }

    /// This error, or, when no daemon sent a reason, the same with the client's reason for it
    /// (`DEADLINE_EXCEEDED`, `CONNECTION_LOST` for UNAVAILABLE or CANCELLED, else
    /// `TRANSPORT_ERROR`).
    pub(crate) fn named(mut self) -> Self {
        if self.reason.is_none() {
            self.reason = Some(
                match self.code {
                    Code::DeadlineExceeded => REASON_DEADLINE_EXCEEDED,
                    Code::Unavailable | Code::Cancelled => REASON_CONNECTION_LOST,
                    _ => REASON_TRANSPORT_ERROR,
                }
                .to_owned(),
            );
        }
        self
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", code_name(self.code))?;
        if let Some(r) = &self.reason {
            write!(f, " ({r})")?;
        }
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        Ok(())
    }
}

/// The canonical upper-case name of a gRPC status code (`Code::InvalidArgument` →
/// `"INVALID_ARGUMENT"`), as used by the conformance scenarios and every other client.
pub fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

/// The inverse of [`code_name`].
pub fn code_from_name(name: &str) -> Option<Code> {
    (0..=16).map(Code::from_i32).find(|c| code_name(*c) == name)
}

// google.rpc.Status / google.protobuf.Any / google.rpc.ErrorInfo, just what is needed to read the
// `grpc-status-details-bin` trailer.
#[derive(Clone, PartialEq, Message)]
struct RpcStatus {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(string, tag = "2")]
    message: String,
    #[prost(message, repeated, tag = "3")]
    details: Vec<Any>,
}

#[derive(Clone, PartialEq, Message)]
struct Any {
    #[prost(string, tag = "1")]
    type_url: String,
    #[prost(bytes = "vec", tag = "2")]
    value: Vec<u8>,
}

#[derive(Clone, PartialEq, Message)]
struct ErrorInfo {
    #[prost(string, tag = "1")]
    reason: String,
    #[prost(string, tag = "2")]
    domain: String,
    #[prost(map = "string, string", tag = "3")]
    metadata: std::collections::HashMap<String, String>,
}

#[derive(Clone, PartialEq, Message)]
struct RetryInfo {
    #[prost(message, optional, tag = "1")]
    retry_delay: Option<ProtoDuration>,
}

/// google.protobuf.Duration
#[derive(Clone, PartialEq, Message)]
struct ProtoDuration {
    #[prost(int64, tag = "1")]
    seconds: i64,
    #[prost(int32, tag = "2")]
    nanos: i32,
}

/// The first detail of type `type_url` in a `grpc-status-details-bin` value, decoded.
fn detail<M: Message + Default>(details: &[u8], type_url: &str) -> Option<M> {
    if details.is_empty() {
        return None;
    }
    let status = RpcStatus::decode(details).ok()?;
    status
        .details
        .iter()
        .find(|a| a.type_url == type_url)
        .and_then(|a| M::decode(a.value.as_slice()).ok())
}

fn error_info(details: &[u8]) -> Option<ErrorInfo> {
    detail(details, ERROR_INFO_TYPE_URL)
}

/// The RetryInfo's delay (an absent or negative one is no wait: retry at once).
fn retry_info(details: &[u8]) -> Option<Duration> {
    let d = detail::<RetryInfo>(details, RETRY_INFO_TYPE_URL)?
        .retry_delay
        .unwrap_or_default();
    let seconds = u64::try_from(d.seconds).unwrap_or(0);
    Some(Duration::new(seconds, u32::try_from(d.nanos).unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tonic::metadata::MetadataMap;

    fn details(reason: &str, meta: &[(&str, &str)]) -> Vec<u8> {
        let info = ErrorInfo {
            reason: reason.into(),
            domain: ERROR_DOMAIN.into(),
            metadata: meta
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        RpcStatus {
            code: Code::InvalidArgument as i32,
            message: "bad".into(),
            details: vec![
                Any {
                    type_url: "type.googleapis.com/google.rpc.DebugInfo".into(),
                    value: vec![1, 2, 3],
                },
                Any {
                    type_url: ERROR_INFO_TYPE_URL.into(),
                    value: info.encode_to_vec(),
                },
            ],
        }
        .encode_to_vec()
    }

    #[test]
    fn reason_from_trailing_metadata() {
        let mut md = MetadataMap::new();
        md.insert(REASON_METADATA_KEY, "PATH_OUTSIDE_ROOTS".parse().unwrap());
        let status = tonic::Status::with_metadata(Code::InvalidArgument, "outside", md);
        let err = Error::from(status);
        assert_eq!(err.code(), Code::InvalidArgument);
        assert_eq!(err.reason(), Some("PATH_OUTSIDE_ROOTS"));
        assert_eq!(err.as_rpc().unwrap().code_name(), "INVALID_ARGUMENT");
        assert_eq!(
            err.to_string(),
            "INVALID_ARGUMENT (PATH_OUTSIDE_ROOTS): outside"
        );
    }

    #[test]
    fn reason_and_metadata_from_error_info() {
        let status = tonic::Status::with_details(
            Code::NotFound,
            "no such session",
            details("SESSION_NOT_FOUND", &[("session_id", "s1")]).into(),
        );
        let err = RpcError::from_status(status);
        assert_eq!(err.code, Code::NotFound);
        assert_eq!(err.reason.as_deref(), Some("SESSION_NOT_FOUND"));
        assert_eq!(err.domain.as_deref(), Some(ERROR_DOMAIN));
        assert_eq!(
            err.metadata.get("session_id").map(String::as_str),
            Some("s1")
        );
    }

    #[test]
    fn trailing_metadata_wins_over_error_info() {
        let mut md = MetadataMap::new();
        md.insert(REASON_METADATA_KEY, "FROM_TRAILER".parse().unwrap());
        let status = tonic::Status::with_details_and_metadata(
            Code::FailedPrecondition,
            "x",
            details("FROM_DETAIL", &[]).into(),
            md,
        );
        let err = RpcError::from_status(status);
        assert_eq!(err.reason.as_deref(), Some("FROM_TRAILER"));
        assert_eq!(err.domain.as_deref(), Some(ERROR_DOMAIN));
    }

    #[test]
    fn retry_after_from_retry_info() {
        let retry = RetryInfo {
            retry_delay: Some(ProtoDuration {
                seconds: 1,
                nanos: 500_000_000,
            }),
        };
        let mut status = RpcStatus::decode(details("OVERLOADED", &[]).as_slice()).unwrap();
        status.details.push(Any {
            type_url: RETRY_INFO_TYPE_URL.into(),
            value: retry.encode_to_vec(),
        });
        let err = Error::from(tonic::Status::with_details(
            Code::ResourceExhausted,
            "full",
            status.encode_to_vec().into(),
        ));
        assert_eq!(err.reason(), Some("OVERLOADED"));
        assert_eq!(err.retry_after(), Some(Duration::from_millis(1500)));
        let plain = tonic::Status::with_details(
            Code::ResourceExhausted,
            "too many",
            details("TOO_MANY_SESSIONS", &[]).into(),
        );
        assert_eq!(Error::from(plain).retry_after(), None);
        assert_eq!(Error::Config("x".into()).retry_after(), None);
    }

    #[test]
    fn no_reason_and_garbage_details() {
        let status =
            tonic::Status::with_details(Code::Internal, "boom", vec![0xff, 0xff, 0xff].into());
        let err = Error::from(status);
        assert_eq!(err.reason(), None);
        assert_eq!(err.code(), Code::Internal);
        assert_eq!(err.to_string(), "INTERNAL: boom");
    }

    #[test]
    fn local_errors_have_codes() {
        let e = Error::Connect {
            address: "unix:///nope".into(),
            message: "refused".into(),
        };
        assert!(e.is_unavailable());
        assert_eq!(e.reason(), Some("DAEMON_UNAVAILABLE"));
        assert_eq!(
            Error::Start("x".into()).reason(),
            Some("DAEMON_START_FAILED")
        );
        assert_eq!(Error::Config("x".into()).code(), Code::InvalidArgument);
        assert_eq!(Error::Config("x".into()).reason(), None);
    }

    #[test]
    fn code_names_round_trip() {
        for i in 0..=16 {
            let c = Code::from_i32(i);
            assert_eq!(code_from_name(code_name(c)), Some(c));
        }
        assert_eq!(code_from_name("NOPE"), None);
    }
}
