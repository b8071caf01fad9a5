//! How often a client starts the daemon (docs/clients.md, "Auto-start"). A client with
//! auto-start on starts `postcompact serve --detached` whenever a call finds no daemon (a
//! transport UNAVAILABLE), over its whole life, within its [`AutoStartPolicy`]: at most
//! `max_starts` starts in any `window`, and after each start a back-off before the next
//! (`initial_backoff`, doubled after each start that did not bring a daemon up, at most
//! `max_backoff`). A start the policy does not allow yet leaves the call to its
//! [`crate::RetryPolicy`], which asks again at each retry.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The reason of the error a failed auto-start gives ([`crate::Error::Start`]): the daemon could
/// not be spawned, exited before serving (the message carries its exit status and first error
/// line; its log is in its state directory), or did not report SERVING in time.
pub const REASON_DAEMON_START_FAILED: &str = "DAEMON_START_FAILED";

/// `postcompact serve`'s exit status when another daemon holds the lock: it lost a race to
/// another starter, whose daemon is coming up (waited for, not reported).
pub const EXIT_ALREADY_RUNNING: i32 = 4;

/// How often a client may start the daemon: at most `max_starts` starts in any `window`; after a
/// start the next waits `initial_backoff`, doubled after each start that failed, at most
/// `max_backoff`. A daemon found serving is not a start.
#[derive(Debug, Clone)]
pub struct AutoStartPolicy {
    pub max_starts: u32,
    pub window: Duration,
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
}

impl Default for AutoStartPolicy {
    /// At most 3 starts a minute, 1 s after each, doubling after each failed one up to 30 s.
    fn default() -> Self {
        AutoStartPolicy {
            max_starts: 3,
            window: Duration::from_secs(60),
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(30),
        }
    }
}

#[derive(Debug, Default)]
struct State {
    starts: VecDeque<Instant>,
    failures: u32,
    ended: Option<Instant>,
    last_error: String,
}

/// One client's starts (shared by its clones): the policy's bookkeeping, and a gate that lets
/// one start run at a time (calls failing meanwhile wait for it, then find the daemon serving).
#[derive(Debug)]
pub(crate) struct Starter {
    policy: AutoStartPolicy,
    state: Mutex<State>,
    pub(crate) gate: tokio::sync::Mutex<()>,
}

impl Starter {
    pub(crate) fn new(policy: AutoStartPolicy) -> Starter {
        Starter {
            policy,
            state: Mutex::new(State::default()),
            gate: tokio::sync::Mutex::new(()),
        }
    }

    /// Why the policy allows no start now (`""` when it does).
    pub(crate) fn why_not(&self) -> String {
        let p = &self.policy;
        let now = Instant::now();
        let mut s = self.state.lock().expect("lock");
        while s
            .starts
            .front()
            .is_some_and(|t| now.duration_since(*t) >= p.window)
        {
            s.starts.pop_front();
        }
        if s.starts.len() >= p.max_starts as usize {
            return format!(
                "not started again: {} starts in the last {} s, the most its AutoStartPolicy allows",
                s.starts.len(),
                p.window.as_secs_f64()
            );
        }
        let Some(ended) = s.ended else {
            return String::new();
        };
        let exp = s.failures.saturating_sub(1).min(30);
        let backoff = p
            .initial_backoff
            .saturating_mul(1u32 << exp)
            .min(p.max_backoff);
        let since = now.duration_since(ended);
        if since >= backoff {
            return String::new();
        }
        let last = if s.last_error.is_empty() {
            format!("the daemon was started {:.1} s ago", since.as_secs_f64())
        } else {
            format!("the last start failed ({})", s.last_error)
        };
        format!(
            "not started again yet: {last}; the next start may come in {:.1} s",
            (backoff - since).as_secs_f64()
        )
    }

    pub(crate) fn spawned(&self) {
        self.state
            .lock()
            .expect("lock")
            .starts
            .push_back(Instant::now());
    }

    /// A start that spawned a daemon is over: `error` says why it failed, `""` when it serves.
    pub(crate) fn end(&self, error: &str) {
        let mut s = self.state.lock().expect("lock");
        s.ended = Some(Instant::now());
        s.failures = if error.is_empty() { 0 } else { s.failures + 1 };
        s.last_error = error.to_owned();
    }
}

/// What a daemon that could not start said, in one line: its first `postcompact: ...` line, else
/// its last non-empty one (a traceback's exception).
pub(crate) fn first_error_line(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines
        .iter()
        .find(|l| l.starts_with("postcompact:"))
        .or(lines.last())
        .map(|l| (*l).to_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_error_line_rules() {
        assert_eq!(
            first_error_line("noise\npostcompact: config.toml: unknown key policy.foo\nmore\n"),
            "postcompact: config.toml: unknown key policy.foo"
        );
        assert_eq!(
            first_error_line("Traceback (most recent call last):\n  x\nValueError: boom\n\n"),
            "ValueError: boom"
        );
        assert_eq!(first_error_line(""), "");
    }

    #[test]
    fn the_window_and_the_back_off() {
        let s = Starter::new(AutoStartPolicy {
            max_starts: 2,
            window: Duration::from_secs(3600),
            initial_backoff: Duration::ZERO,
            max_backoff: Duration::ZERO,
        });
        assert_eq!(s.why_not(), "");
        s.spawned();
        s.end("boom");
        assert_eq!(s.why_not(), "");
        s.spawned();
        s.end("");
        assert!(
            s.why_not().contains("2 starts in the last 3600 s"),
            "{}",
            s.why_not()
        );

        let s = Starter::new(AutoStartPolicy {
            initial_backoff: Duration::from_secs(3600),
            max_backoff: Duration::from_secs(3600),
            ..AutoStartPolicy::default()
        });
        s.spawned();
        s.end("postcompact: not today");
        let why = s.why_not();
        assert!(
            why.contains("the last start failed (postcompact: not today)"),
            "{why}"
        );
    }
}
