//! Recovering across a daemon restart or an overload (docs/clients.md, "Retries"). An answer
//! with a `google.rpc.RetryInfo` ([`crate::Error::retry_after`], the daemon's `OVERLOADED`) is
//! retried for any call, after at least the delay it names: the daemon refused it before
//! applying anything. No other daemon answer is retried. Besides those, only a transport failure
//! is ([`is_transport_failure`]: UNAVAILABLE, CANCELLED or tonic's transport UNKNOWN, with no
//! daemon reason; every answer of a live daemon carries one, e.g. `STATE_WRITE_FAILED`). An
//! idempotent call ([`Rpc::is_idempotent`]) is retried whatever happened to the connection; any
//! other call only when the connection could not be established ([`not_sent`]: tonic's
//! `ConnectError` in the status's source chain), so the request was never written and the
//! daemon cannot have acted on it.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use tonic::Code;

use crate::error::REASON_METADATA_KEY;
use crate::pb;

/// The reason of the error returned when no daemon answered within the [`RetryPolicy`]; its
/// metadata holds `address`, `attempts` and `elapsed_ms`.
pub const REASON_DAEMON_UNAVAILABLE: &str = "DAEMON_UNAVAILABLE";

/// Bounded retries with exponential backoff and jitter: the first retry waits `initial_backoff`,
/// each next one `multiplier` times longer, at most `max_backoff`, each wait scaled by a random
/// factor in `[1 - jitter, 1 + jitter]` (and, for an answer with a RetryInfo, at least its
/// delay). Retrying stops after `max_attempts` attempts or `max_elapsed` since the first one.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    pub max_elapsed: Duration,
    pub max_attempts: u32,
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    pub multiplier: f64,
    pub jitter: f64,
}

impl Default for RetryPolicy {
    /// About 10 s: 50 ms, 100 ms, ... 1 s, 1 s, ... (±20 %).
    fn default() -> Self {
        RetryPolicy {
            max_elapsed: Duration::from_secs(10),
            max_attempts: 40,
            initial_backoff: Duration::from_millis(50),
            max_backoff: Duration::from_secs(1),
            multiplier: 2.0,
            jitter: 0.2,
        }
    }
}

impl RetryPolicy {
    /// One attempt per call (an `OVERLOADED` answer is returned as is, too).
    pub fn none() -> Self {
        RetryPolicy {
            max_elapsed: Duration::ZERO,
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// The wait before retry number `n` (1-based).
    pub fn backoff(&self, n: u32) -> Duration {
        let exp = i32::try_from(n.saturating_sub(1)).unwrap_or(i32::MAX);
        let base = (self.initial_backoff.as_secs_f64() * self.multiplier.max(1.0).powi(exp))
            .min(self.max_backoff.as_secs_f64());
        let unit = (RandomState::new().build_hasher().finish() >> 11) as f64 / (1u64 << 53) as f64;
        Duration::from_secs_f64((base * (1.0 + self.jitter * (2.0 * unit - 1.0))).max(0.0))
    }
}

/// A request of `postcompact.v1`: its RPC's name and whether repeating it is harmless.
pub trait Rpc {
    /// The RPC's name, e.g. `"CheckWrite"`.
    const METHOD: &'static str;
    /// True when repeating this request after the daemon may already have applied it leaves the
    /// same state and the same answer.
    fn is_idempotent(&self) -> bool;
}

macro_rules! rpcs {
    (|$r:ident| $idem:expr; $($req:ident => $name:literal),* $(,)?) => {
        $(impl Rpc for pb::$req {
            const METHOD: &'static str = $name;
            fn is_idempotent(&self) -> bool {
                let $r = self;
                $idem
            }
        })*
    };
}

rpcs! { |_r| true;
    GetServerInfoRequest => "GetServerInfo", GetStatsRequest => "GetStats",
    ListSessionsRequest => "ListSessions", CheckWriteRequest => "CheckWrite",
    CheckStaleRequest => "CheckStale", PreviewCompactRequest => "PreviewCompact",
    SetPlanRequest => "SetPlan", SetModeRequest => "SetMode", UpsertTaskRequest => "UpsertTask",
    EstimateTokensRequest => "EstimateTokens", EstimateTokensBatchRequest => "EstimateTokensBatch",
    CountTokensRequest => "CountTokens", CountTokensBatchRequest => "CountTokensBatch",
    TruncateTokensRequest => "TruncateTokens", TruncateTokensBatchRequest => "TruncateTokensBatch",
}

// ReadFile (a repeat answers the "unchanged" stub), Compact, SetCatalog (the delta is announced
// once), StartAgent, EndAgent, MergeFileState, CloseSession, ImportTranscript (a repeat of an import that
// succeeded answers ALREADY_EXISTS, or with `replace` imports over what happened since): retried
// only when not sent.
rpcs! { |_r| false;
    ReadFileRequest => "ReadFile", CompactRequest => "Compact", SetCatalogRequest => "SetCatalog",
    StartAgentRequest => "StartAgent", EndAgentRequest => "EndAgent",
    MergeFileStateRequest => "MergeFileState",
    CloseSessionRequest => "CloseSession", ImportTranscriptRequest => "ImportTranscript",
}

rpcs! { |r| !r.session_id.is_empty(); OpenSessionRequest => "OpenSession" }
rpcs! { |r| r.timestamp_ms != 0; RecordReadRequest => "RecordRead" }
// Conditional: a repeat of one that was recorded finds its own entry (WRITE_CONFLICT).
rpcs! { |r| r.timestamp_ms != 0 && r.if_entry_timestamp_ms.is_none(); RecordWriteRequest => "RecordWrite" }
rpcs! { |r| r.invoked_at_ms != 0; RecordSkillRequest => "RecordSkill" }

fn source_chain_has<T: std::error::Error + 'static>(s: &tonic::Status) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(s);
    while let Some(e) = cur {
        if e.is::<T>() {
            return true;
        }
        cur = e.source();
    }
    false
}

/// UNAVAILABLE, CANCELLED not caused by a client-side timeout (gRPC's answer to a call that
/// reached a daemon as it stopped), or UNKNOWN raised by the transport (tonic's "transport
/// error": the connection broke mid-call, e.g. the daemon was killed), with no daemon reason:
/// the daemon went away.
pub fn is_transport_failure(s: &tonic::Status) -> bool {
    let code = s.code();
    (code == Code::Unavailable
        || (code == Code::Cancelled && !source_chain_has::<tonic::TimeoutExpired>(s))
        || (code == Code::Unknown && source_chain_has::<tonic::transport::Error>(s)))
        && s.metadata().get(REASON_METADATA_KEY).is_none()
        && s.details().is_empty()
}

/// The call ran out of its deadline (tonic's CANCELLED "Timeout expired").
pub(crate) fn timed_out(s: &tonic::Status) -> bool {
    s.code() == Code::Cancelled && source_chain_has::<tonic::TimeoutExpired>(s)
}

/// The connection could not be established: the request was never sent.
pub fn not_sent(s: &tonic::Status) -> bool {
    source_chain_has::<tonic::ConnectError>(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idempotence_table() {
        assert!(pb::CheckWriteRequest::default().is_idempotent());
        assert!(pb::TruncateTokensRequest::default().is_idempotent());
        assert!(!pb::ReadFileRequest::default().is_idempotent());
        assert!(!pb::CompactRequest::default().is_idempotent());
        assert!(!pb::SetCatalogRequest::default().is_idempotent());
        let import = pb::ImportTranscriptRequest {
            session_id: "s".into(),
            replace: true,
            ..Default::default()
        };
        assert!(!import.is_idempotent());
        assert!(!pb::ImportTranscriptRequest::default().is_idempotent());
        assert_eq!(
            <pb::ImportTranscriptRequest as Rpc>::METHOD,
            "ImportTranscript"
        );
        let named = pb::OpenSessionRequest {
            session_id: "s".into(),
            ..Default::default()
        };
        assert!(named.is_idempotent());
        assert!(!pb::OpenSessionRequest::default().is_idempotent());
        let read = pb::RecordReadRequest {
            timestamp_ms: 5,
            ..Default::default()
        };
        assert!(read.is_idempotent());
        assert!(!pb::RecordReadRequest::default().is_idempotent());
        let skill = pb::RecordSkillRequest {
            invoked_at_ms: 5,
            ..Default::default()
        };
        assert!(skill.is_idempotent());
        assert_eq!(<pb::CheckStaleRequest as Rpc>::METHOD, "CheckStale");
    }

    #[test]
    fn backoff_grows_to_the_cap() {
        let p = RetryPolicy {
            jitter: 0.0,
            ..RetryPolicy::default()
        };
        let ms: Vec<u128> = (1..=7).map(|n| p.backoff(n).as_millis()).collect();
        assert_eq!(ms, [50, 100, 200, 400, 800, 1000, 1000]);
        let j = RetryPolicy::default().backoff(1).as_millis();
        assert!((40..=60).contains(&j), "{j}");
    }

    #[test]
    fn a_daemon_reason_is_not_a_transport_failure() {
        let mut md = tonic::metadata::MetadataMap::new();
        md.insert(REASON_METADATA_KEY, "STATE_WRITE_FAILED".parse().unwrap());
        assert!(!is_transport_failure(&tonic::Status::with_metadata(
            Code::Unavailable,
            "x",
            md
        )));
        assert!(is_transport_failure(&tonic::Status::unavailable("gone")));
        assert!(is_transport_failure(&tonic::Status::cancelled("stopped")));
        assert!(!is_transport_failure(&tonic::Status::not_found("x")));
        assert!(!is_transport_failure(&tonic::Status::deadline_exceeded(
            "x"
        )));
        assert!(!not_sent(&tonic::Status::unavailable("no source")));
    }
}
