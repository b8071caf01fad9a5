//! Recovery across a daemon restart (docs/clients.md, "Retries") against the real daemon:
//! idempotent calls made while it is restarted (SIGTERM or kill -9, then a new daemon on the same
//! socket and state directory) succeed with the state intact; a Compact that was never sent is
//! retried; a daemon gone for good is `DAEMON_UNAVAILABLE` within the retry bound.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{repo_root, short_private_dir, venv_bin};
use postcompact_client::pb;
use postcompact_client::{Client, Code, Options, RetryPolicy, REASON_DAEMON_UNAVAILABLE};

const TS: i64 = 1_700_000_000_000;

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// `python -m postcompact serve --socket DIR/d.sock --state-dir DIR/state`, health-waited.
async fn serve(dir: &Path) -> Child {
    let mut child = Command::new(venv_bin("python"))
        .args(["-m", "postcompact", "serve", "--socket"])
        .arg(dir.join("d.sock"))
        .arg("--state-dir")
        .arg(dir.join("state"))
        .current_dir(repo_root())
        .env("XDG_RUNTIME_DIR", dir)
        .env_remove("POSTCOMPACT_ADDRESS")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the daemon");
    let address = format!("unix://{}", dir.join("d.sock").display());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the daemon exited before serving"
        );
        let opts = Options::default()
            .address(&address)
            .retry(RetryPolicy::none());
        if let Ok(c) = Client::connect_with(opts).await {
            if c.health().await.unwrap_or(false) {
                return child;
            }
        }
        assert!(
            Instant::now() < deadline,
            "the daemon did not become healthy"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Sends `sig` and waits (off the runtime's thread) until the daemon is gone.
async fn stop(mut child: Child, sig: i32) {
    // SAFETY: kill(2) has no memory-safety preconditions; the pid is our own child.
    unsafe {
        libc::kill(child.id() as libc::pid_t, sig);
    }
    tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
}

fn project(dir: &Path) -> PathBuf {
    let p = dir.join("project");
    fs::create_dir_all(&p).unwrap();
    fs::write(p.join("a.rs"), "fn a() {}\n").unwrap();
    p.join("a.rs")
}

// The client's futures are not Send: the concurrent caller runs on a LocalSet.
#[tokio::test]
async fn idempotent_calls_go_on_across_restarts_and_a_dead_daemon_is_reported() {
    tokio::task::LocalSet::new().run_until(scenario()).await;
}

async fn scenario() {
    let dir = short_private_dir("recover");
    let file = project(&dir);
    let address = format!("unix://{}", dir.join("d.sock").display());
    let mut daemon = serve(&dir).await;
    let client = Client::connect_to(&address).await.unwrap();
    let session = client
        .open_session_with(pb::OpenSessionRequest {
            session_id: "recover-rust".into(),
            cwd: dir.join("project").display().to_string(),
            ..Default::default()
        })
        .await
        .unwrap();
    let path = file.display().to_string();
    session
        .record_read(&path, "fn a() {}\n", now_ms())
        .await
        .unwrap();
    session.record_skill("review", "", "x", TS).await.unwrap();

    for sig in [libc::SIGTERM, libc::SIGKILL] {
        let calls = Arc::new(AtomicU64::new(0));
        let running = Arc::new(AtomicBool::new(true));
        let worker = {
            let (calls, running, session, client, path) = (
                calls.clone(),
                running.clone(),
                session.clone(),
                client.clone(),
                path.clone(),
            );
            tokio::task::spawn_local(async move {
                let mut n = 0i64;
                while running.load(Ordering::Relaxed) {
                    n += 1;
                    let r = session.check_write(&path).await?;
                    assert_eq!(r.result(), pb::WriteCheck::Allowed);
                    session
                        .record_skill(&format!("k{}", n % 5), "", "x", TS + n)
                        .await?;
                    client.list_sessions().await?;
                    calls.fetch_add(3, Ordering::Relaxed);
                }
                Ok::<(), postcompact_client::Error>(())
            })
        };
        tokio::time::sleep(Duration::from_millis(300)).await;
        let before = calls.load(Ordering::Relaxed);
        stop(daemon, sig).await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        daemon = serve(&dir).await;
        let at_restart = calls.load(Ordering::Relaxed);
        for _ in 0..200 {
            if calls.load(Ordering::Relaxed) >= at_restart + 6 || worker.is_finished() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        running.store(false, Ordering::Relaxed);
        if let Err(e) = worker.await.unwrap() {
            panic!("signal {sig}: a call failed across the restart: {e}");
        }
        let total = calls.load(Ordering::Relaxed);
        assert!(
            before > 0 && total >= at_restart + 6,
            "signal {sig}: {before} {at_restart} {total}"
        );
    }
    let held = session.record_skill("review", "", "x", TS).await.unwrap();
    assert_eq!(held, 6, "skills lost across the restarts");

    // Not idempotent but never sent: a Compact while the daemon is down waits for it.
    session.read_file(&path).await.unwrap();
    stop(daemon, libc::SIGTERM).await;
    let restarter = {
        let dir = dir.clone();
        tokio::task::spawn_local(async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            serve(&dir).await
        })
    };
    let compacted = session.compact().await;
    let daemon = restarter.await.unwrap();
    assert!(!compacted
        .expect("Compact across a restart")
        .decisions
        .is_empty());

    // Gone for good: DAEMON_UNAVAILABLE naming the address, within the bound.
    stop(daemon, libc::SIGTERM).await;
    let short = Client::connect_with(Options::default().address(&address))
        .await
        .err();
    assert!(short.is_some(), "nothing should answer any more");
    let policy = RetryPolicy {
        max_elapsed: Duration::from_secs(2),
        ..RetryPolicy::default()
    };
    let gone = client.with_retry(policy);
    let err = gone
        .check_write(pb::CheckWriteRequest {
            session_id: "recover-rust".into(),
            path,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Unavailable);
    assert_eq!(err.reason(), Some(REASON_DAEMON_UNAVAILABLE), "{err}");
    let text = err.to_string();
    assert!(
        text.contains(&address) && text.contains("CheckWrite"),
        "{text}"
    );
    let rpc = err.as_rpc().unwrap();
    assert_eq!(rpc.metadata.get("address"), Some(&address));
    // It retried before giving up (the bound is 2 s of backoff, far below the attempt cap).
    let attempts: u32 = rpc.metadata["attempts"].parse().unwrap();
    assert!(attempts > 3, "{attempts} attempts");
    let _ = fs::remove_dir_all(&dir);
}
