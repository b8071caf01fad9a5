//! A live daemon for the integration tests: `<repo>/.venv/bin/python -m postcompact serve
//! --socket <short /tmp path>`, health-waited, SIGTERMed at the end. When `.venv` is missing the
//! tests fail with a clear message; they never pass silently.

#![allow(dead_code)]

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use postcompact_client::{Client, Options};

pub const DAEMON_START_TIMEOUT: Duration = Duration::from_secs(60);

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// `<repo>/.venv/bin/<name>`, or a failing assertion that says how to get it.
pub fn venv_bin(name: &str) -> PathBuf {
    let p = repo_root().join(".venv/bin").join(name);
    assert!(
        p.exists(),
        "the postcompact daemon is not available: {} does not exist. Run `make build` (it \
         creates .venv and installs the daemon) before `cargo test`.",
        p.display()
    );
    p
}

pub fn nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// A fresh private (0700) directory with a short path under /tmp: Unix socket paths are limited
/// to 107 bytes, and the daemon refuses a runtime directory others can read.
pub fn short_private_dir(tag: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = PathBuf::from(format!(
        "/tmp/pcrs-{tag}-{}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed),
        nanos() % 1_000_000
    ));
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

pub struct Daemon {
    pub child: Child,
    pub dir: PathBuf,
    pub socket: PathBuf,
    pub log: PathBuf,
}

impl Daemon {
    /// Starts `python -m postcompact serve --socket DIR/d.sock [extra...]`.
    pub fn start(tag: &str, extra: &[&str]) -> Daemon {
        Daemon::start_in(short_private_dir(tag), extra, &[])
    }

    /// [`Daemon::start`] in `dir` (from [`short_private_dir`], removed on drop), with `env`
    /// added to the daemon's environment.
    pub fn start_in(dir: PathBuf, extra: &[&str], env: &[(&str, &str)]) -> Daemon {
        let repo = repo_root();
        let python = venv_bin("python");
        let socket = dir.join("d.sock");
        let log = dir.join("daemon.log");
        let log_file = fs::File::create(&log).expect("daemon log");
        let child = Command::new(&python)
            .args(["-m", "postcompact", "serve", "--socket"])
            .arg(&socket)
            .args(extra)
            .current_dir(&repo)
            .env_remove("POSTCOMPACT_ADDRESS")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().expect("log"))
            .stderr(log_file)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot run {} -m postcompact serve: {e}", python.display())
            });
        Daemon {
            child,
            dir,
            socket,
            log,
        }
    }

    pub fn address(&self) -> String {
        format!("unix://{}", self.socket.display())
    }

    /// The daemon's whole output so far.
    pub fn output(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn log_tail(&self) -> String {
        let mut s = String::new();
        if let Ok(mut f) = fs::File::open(&self.log) {
            let _ = f.read_to_string(&mut s);
        }
        let lines: Vec<&str> = s.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// Polls health until SERVING; panics with the daemon's output when it exits or times out.
    pub async fn wait_healthy(&mut self) -> Client {
        let deadline = Instant::now() + DAEMON_START_TIMEOUT;
        let mut last;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "the daemon exited with {status} before serving.\n--- daemon output ---\n{}",
                    self.log_tail()
                );
            }
            let opts = Options::default()
                .address(self.address())
                .auto_start(false)
                .connect_timeout(Duration::from_secs(2));
            match Client::connect_with(opts).await {
                Ok(c) => match c.health().await {
                    Ok(true) => return c,
                    Ok(false) => last = "health: not SERVING".to_string(),
                    Err(e) => last = e.to_string(),
                },
                Err(e) => last = e.to_string(),
            }
            if Instant::now() > deadline {
                panic!(
                    "the daemon did not become healthy within {DAEMON_START_TIMEOUT:?} ({last}).\n--- daemon output ---\n{}",
                    self.log_tail()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// SIGTERM, then wait (SIGKILL after 10 s). Says how it ended.
    pub fn stop(&mut self) -> String {
        if let Ok(Some(st)) = self.child.try_wait() {
            return format!("had already exited with {st}");
        }
        terminate(self.child.id() as i32);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(st)) = self.child.try_wait() {
                return format!("exited with {st} after SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        "did not exit within 10 s of SIGTERM: killed".into()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.stop();
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// SIGTERM to a process this test started (directly or through the client's auto-start).
pub fn terminate(pid: i32) {
    // SAFETY: kill(2) has no memory-safety preconditions.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGTERM);
    }
}

pub fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::kill(pid as libc::pid_t, 0) == 0 }
}
