//! Overload admission (docs/clients.md, "Overload: retried when the daemon says so") against the
//! real daemon, as tests/daemon/server/test_overload.py does for Python: two ReadFiles held in
//! their worker fill `limits.max_calls_in_flight = 2`; the next call is refused `OVERLOADED` with a
//! RetryInfo of 100 ms, which the error exposes (`RetryPolicy::none()`) and the client retries for
//! any call, Compact included, within its policy; a permanent limit (`TOO_MANY_SESSIONS`) is not
//! retried.

mod common;

use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{short_private_dir, Daemon};
use postcompact_client::{pb, Client, Code, Error, RetryPolicy, Session};
use tokio::task::JoinHandle;

const CONFIG: &str = "[limits]\nmax_calls_in_flight = 2\nmax_sessions = 4\n";
const OVERLOADED: &str = "\"reason\": \"OVERLOADED\"";

/// A daemon with the `readfile.worker` failpoint held at `hold`: a ReadFile reaching its worker
/// appends a line to `hold.reached`, then blocks until `hold` exists.
struct Held {
    daemon: Daemon,
    /// The default retry policy.
    client: Client,
    hold: PathBuf,
    root: PathBuf,
    /// Over 256 KiB: ReadFile reads it in a worker, not inline.
    big: PathBuf,
}

impl Held {
    async fn start(tag: &str) -> Held {
        let dir = short_private_dir(tag);
        let config = dir.join("config.toml");
        fs::write(&config, CONFIG).unwrap();
        let root = dir.join("project");
        fs::create_dir(&root).unwrap();
        let big = root.join("big.txt");
        let mut text = String::new();
        for i in 0..100_000 {
            writeln!(text, "line {i}").unwrap();
        }
        fs::write(&big, text).unwrap();
        let hold = dir.join("hold");
        let failpoints = format!("readfile.worker=hold:{}", hold.display());
        let mut daemon = Daemon::start_in(
            dir,
            // Memory only: with state stored, max_sessions bounds memory and evicts an idle
            // session instead of refusing (docs/persistence.md, "Sessions in memory").
            &["--config", config.to_str().unwrap(), "--no-persist"],
            &[("POSTCOMPACT_FAILPOINTS", &failpoints)],
        );
        let client = daemon.wait_healthy().await;
        Held {
            daemon,
            client,
            hold,
            root,
            big,
        }
    }

    fn count(&self, s: &str) -> usize {
        self.daemon.output().matches(s).count()
    }

    /// Waits until the daemon's output holds `s` at least `n` times.
    async fn wait_log(&self, s: &str, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.count(s) < n {
            assert!(
                Instant::now() < deadline,
                "the daemon's output holds {s} {} time(s), not {n}:\n{}",
                self.count(s),
                self.daemon.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn release(&self) {
        fs::write(&self.hold, "").unwrap();
    }

    /// Two ReadFiles held in the worker, from two agents of one session (one agent's calls wait
    /// for each other): the daemon is at its limit of 2 calls in flight.
    async fn fill(
        &self,
    ) -> (
        Session,
        Vec<JoinHandle<Result<pb::ReadFileResponse, Error>>>,
    ) {
        let session = self
            .client
            .open_session_with(pb::OpenSessionRequest {
                session_id: "ovl-rust".into(),
                cwd: self.root.display().to_string(),
                ..Default::default()
            })
            .await
            .unwrap();
        let second = session
            .start_agent("second", pb::AgentMode::Fresh)
            .await
            .unwrap();
        let reads = [session.clone(), second]
            .into_iter()
            .map(|s| {
                let big = self.big.clone();
                tokio::spawn(async move { s.read_file_range(big, Some(2), Some(3)).await })
            })
            .collect();
        let reached = PathBuf::from(format!("{}.reached", self.hold.display()));
        let deadline = Instant::now() + Duration::from_secs(30);
        while fs::read_to_string(&reached)
            .unwrap_or_default()
            .lines()
            .count()
            < 2
        {
            assert!(
                Instant::now() < deadline,
                "2 workers did not reach the failpoint:\n{}",
                self.daemon.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        (session, reads)
    }

    /// Releases the held reads and checks that they succeeded.
    async fn drain(&self, reads: Vec<JoinHandle<Result<pb::ReadFileResponse, Error>>>) {
        self.release();
        for r in reads {
            r.await.unwrap().expect("a held ReadFile");
        }
    }
}

impl Drop for Held {
    /// Before the daemon's own drop (SIGTERM): no worker may still be held.
    fn drop(&mut self) {
        let _ = fs::write(&self.hold, "");
    }
}

fn assert_overloaded(e: &Error) {
    assert_eq!(e.code(), Code::ResourceExhausted, "{e}");
    assert_eq!(e.reason(), Some("OVERLOADED"), "{e}");
    assert_eq!(e.retry_after(), Some(Duration::from_millis(100)), "{e}");
}

fn batch() -> pb::EstimateTokensBatchRequest {
    pb::EstimateTokensBatchRequest {
        texts: vec![b"a".to_vec(), b"b".to_vec()],
        ext: String::new(),
    }
}

#[tokio::test]
async fn over_the_limit_a_call_is_refused_with_retry_after() {
    let h = Held::start("ovl1").await;
    let (_session, reads) = h.fill().await;

    // Retries off: the daemon's refusal itself, asked once.
    let before = h.count(OVERLOADED);
    let e = h
        .client
        .with_retry(RetryPolicy::none())
        .estimate_tokens_batch(batch())
        .await
        .unwrap_err();
    assert_overloaded(&e);
    assert!(
        e.to_string().contains("limits.max_calls_in_flight (2)"),
        "{e}"
    );
    h.wait_log(OVERLOADED, before + 1).await;

    // A policy spent on refusals ends with the daemon's OVERLOADED, not DAEMON_UNAVAILABLE, after
    // exactly its attempts, each at least the daemon's 100 ms after the last.
    let before = h.count(OVERLOADED);
    let three = RetryPolicy {
        max_attempts: 3,
        ..RetryPolicy::default()
    };
    let begin = Instant::now();
    let e = h
        .client
        .with_retry(three)
        .estimate_tokens_batch(batch())
        .await
        .unwrap_err();
    let took = begin.elapsed();
    assert_overloaded(&e);
    assert!(
        took >= Duration::from_millis(200),
        "3 attempts took {took:?}: the retries did not wait the RetryInfo's 100 ms"
    );
    h.wait_log(OVERLOADED, before + 3).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(h.count(OVERLOADED) - before, 3);

    h.drain(reads).await;
}

#[tokio::test]
async fn an_overloaded_compact_is_retried_and_applied_once() {
    let h = Held::start("ovl2").await;
    let (session, reads) = h.fill().await;
    // Compact is not idempotent, yet an OVERLOADED Compact is retried: it was not applied.
    let compact = tokio::spawn(async move { session.compact().await });
    h.wait_log(OVERLOADED, 2).await; // refused, then refused again on its retry
    h.drain(reads).await;
    let c = compact
        .await
        .unwrap()
        .expect("Compact once the daemon had room");
    assert_eq!(c.compaction, 1);
}

#[tokio::test]
async fn a_permanent_limit_is_not_retried() {
    let h = Held::start("ovl3").await;
    let open = |i: usize| {
        h.client.open_session_with(pb::OpenSessionRequest {
            session_id: format!("full-{i}"),
            cwd: h.root.display().to_string(),
            ..Default::default()
        })
    };
    for i in 0..4 {
        open(i).await.unwrap();
    }
    const REFUSED: &str = "\"reason\": \"TOO_MANY_SESSIONS\"";
    let before = h.count(REFUSED);
    let e = open(4).await.unwrap_err();
    assert_eq!(e.reason(), Some("TOO_MANY_SESSIONS"), "{e}");
    assert_eq!(e.retry_after(), None);
    tokio::time::sleep(Duration::from_millis(300)).await; // a retry would come within a backoff
    assert_eq!(h.count(REFUSED), before + 1, "asked once");
}
