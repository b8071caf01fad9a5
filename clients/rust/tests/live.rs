//! The client's own behaviour against a live daemon: auto-start (detached, own session, health
//! wait), TCP with the bearer token, typed errors with reasons, and the Session flow.

mod common;

use std::fs;
use std::time::Duration;

use common::{alive, short_private_dir, terminate, venv_bin, Daemon};
use postcompact_client::pb;
use postcompact_client::{
    join, AutoStartPolicy, Client, Code, Error, ImportOptions, Options, RetryPolicy,
};

#[tokio::test]
async fn auto_start_spawns_a_detached_daemon_and_waits_for_health() {
    let bin = venv_bin("postcompact");
    let dir = short_private_dir("auto");
    let address = format!("unix://{}/d.sock", dir.display());
    let client = Client::connect_with(
        Options::default()
            .address(&address)
            .auto_start(true)
            .daemon_bin(&bin)
            .start_timeout(Duration::from_secs(60)),
    )
    .await
    .unwrap_or_else(|e| panic!("auto-start of {} failed: {e}", bin.display()));
    assert!(client.health().await.unwrap());
    let info = client.get_server_info(Default::default()).await.unwrap();
    let pid = info.pid as i32;
    assert_eq!(info.api_version, "postcompact.v1");
    // Detached: its own session, not our process group.
    // SAFETY: getsid has no memory-safety preconditions.
    let sid = unsafe { libc::getsid(pid) };
    assert_eq!(sid, pid, "the daemon should lead its own session");

    // A second client finds it running and does not start another.
    let again = Client::connect_with(Options::default().address(&address).auto_start(true))
        .await
        .unwrap();
    let info2 = again.get_server_info(Default::default()).await.unwrap();
    assert_eq!(info2.pid, info.pid);

    terminate(pid);
    for _ in 0..200 {
        if !alive(pid) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!alive(pid), "the daemon did not stop on SIGTERM");
    let _ = fs::remove_dir_all(&dir);
}

/// A daemon executable in `dir`: the real one, with its state (and log) and configuration
/// directories in `dir` (the test process's environment is shared by every test thread).
fn daemon_in(dir: &std::path::Path) -> std::path::PathBuf {
    let bin = dir.join("postcompact");
    fs::write(
        &bin,
        format!(
            "#!/bin/sh\nXDG_STATE_HOME='{d}/state' XDG_CONFIG_HOME='{d}/config' exec '{py}' -m postcompact \"$@\"\n",
            d = dir.display(),
            py = venv_bin("python").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// The lines of the daemon logs in `dir`'s state directory.
fn state_logs(dir: &std::path::Path) -> String {
    let mut out = String::new();
    for entry in fs::read_dir(dir.join("state/postcompact"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("daemon") && name.ends_with(".log") {
            out += &fs::read_to_string(entry.path()).unwrap_or_default();
        }
    }
    out
}

async fn wait_gone(pid: i32) {
    for _ in 0..400 {
        if !alive(pid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the daemon {pid} did not stop");
}

#[tokio::test]
async fn a_long_lived_client_starts_its_daemon_again() {
    let dir = short_private_dir("again");
    let address = format!("unix://{}/d.sock", dir.display());
    let client = Client::connect_with(
        Options::default()
            .address(&address)
            .auto_start(true)
            .daemon_bin(daemon_in(&dir))
            .start_timeout(Duration::from_secs(60)),
    )
    .await
    .unwrap();
    let first = client
        .get_server_info(Default::default())
        .await
        .unwrap()
        .pid as i32;
    terminate(first);
    wait_gone(first).await;
    // Found gone: started again (after the back-off that follows a start), by this client and
    // its clones, not DAEMON_UNAVAILABLE.
    let second = client
        .clone()
        .get_server_info(Default::default())
        .await
        .unwrap()
        .pid as i32;
    assert_ne!(second, first);
    terminate(second);
    wait_gone(second).await;
    // Both logged to a file in the state directory.
    let serving = state_logs(&dir).matches("\"msg\": \"serving\"").count();
    assert_eq!(serving, 2, "{}", state_logs(&dir));
    let _ = fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_daemon_that_cannot_start_fails_at_once_with_its_first_error_line() {
    let dir = short_private_dir("broken");
    fs::create_dir_all(dir.join("config/postcompact")).unwrap();
    fs::write(
        dir.join("config/postcompact/config.toml"),
        "[policy]\nfoo = 1\n",
    )
    .unwrap();
    let err = Client::connect_with(
        Options::default()
            .address(format!("unix://{}/d.sock", dir.display()))
            .auto_start(true)
            .daemon_bin(daemon_in(&dir))
            .start_timeout(Duration::from_secs(120)), // it exits: not waited out
    )
    .await
    .unwrap_err();
    let msg = err.to_string();
    assert_eq!(err.reason(), Some("DAEMON_START_FAILED"), "{msg}");
    assert!(
        msg.contains("exited with status 2 before serving: postcompact: configuration error:"),
        "{msg}"
    );
    assert!(msg.contains("unknown key policy.foo"), "{msg}");
    assert!(state_logs(&dir).contains("unknown key policy.foo"));
    let _ = fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn starts_are_bounded_by_the_auto_start_policy() {
    // A client connected to a daemon that then goes for good; each "daemon" it starts records
    // its start, says why it will not serve and exits.
    let mut daemon = Daemon::start("bounded", &[]);
    daemon.wait_healthy().await;
    let spawns = daemon.dir.join("spawns");
    let bin = daemon.dir.join("record-spawn");
    fs::write(
        &bin,
        format!(
            "#!/bin/sh\necho x >> '{}'\necho 'postcompact: not today' >&2\n",
            spawns.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
    let client = |policy: AutoStartPolicy| {
        Client::connect_with(
            Options::default()
                .address(daemon.address())
                .auto_start(true)
                .daemon_bin(&bin)
                .retry(RetryPolicy::none())
                .auto_start_policy(policy),
        )
    };
    let window = client(AutoStartPolicy {
        max_starts: 2,
        window: Duration::from_secs(3600),
        initial_backoff: Duration::ZERO,
        max_backoff: Duration::ZERO,
    })
    .await
    .unwrap();
    let backoff = client(AutoStartPolicy {
        initial_backoff: Duration::from_secs(3600),
        max_backoff: Duration::from_secs(3600),
        ..AutoStartPolicy::default()
    })
    .await
    .unwrap();
    daemon.stop();
    for _ in 0..2 {
        let err = window.get_stats(Default::default()).await.unwrap_err();
        assert_eq!(err.reason(), Some("DAEMON_START_FAILED"), "{err}");
        assert!(
            err.to_string()
                .contains("exited with status 0 before serving: postcompact: not today"),
            "{err}"
        );
    }
    let err = window.get_stats(Default::default()).await.unwrap_err();
    assert_eq!(err.reason(), Some("DAEMON_UNAVAILABLE"), "{err}");
    assert!(
        err.to_string().contains("2 starts in the last 3600 s"),
        "{err}"
    );
    assert_eq!(fs::read_to_string(&spawns).unwrap(), "x\nx\n");

    let err = backoff.get_stats(Default::default()).await.unwrap_err();
    assert_eq!(err.reason(), Some("DAEMON_START_FAILED"), "{err}");
    let err = backoff.get_stats(Default::default()).await.unwrap_err();
    assert_eq!(err.reason(), Some("DAEMON_UNAVAILABLE"), "{err}");
    assert!(
        err.to_string().contains(
            "the last start failed (cannot start the postcompact daemon: the postcompact daemon"
        ),
        "{err}"
    );
    assert_eq!(fs::read_to_string(&spawns).unwrap(), "x\nx\nx\n");
}

#[tokio::test]
async fn without_auto_start_a_missing_daemon_is_a_connect_error() {
    let dir = short_private_dir("noauto");
    let err = Client::connect_to(format!("unix://{}/d.sock", dir.display()))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Connect { .. }), "{err}");
    assert_eq!(err.code(), Code::Unavailable);
    let _ = fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn tcp_needs_the_bearer_token() {
    let mut daemon = Daemon::start("tcp", &["--tcp-port", "0"]);
    let unix = daemon.wait_healthy().await;
    let info = unix.get_server_info(Default::default()).await.unwrap();
    assert!(info.tcp_port > 0, "the daemon reports no TCP port");
    let server_json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(daemon.dir.join("server.json")).unwrap()).unwrap();
    let token_file = server_json["token_file"]
        .as_str()
        .expect("server.json names the token file");
    let token = fs::read_to_string(token_file).unwrap().trim().to_owned();
    let tcp = format!("127.0.0.1:{}", info.tcp_port);

    let with_token = Client::connect_with(Options::default().address(&tcp).token(&token))
        .await
        .unwrap();
    let r = with_token
        .estimate_tokens(pb::EstimateTokensRequest {
            text: b"abcdefgh".to_vec(),
            ext: String::new(),
        })
        .await
        .unwrap();
    assert_eq!(r.tokens, 2);
    assert!(with_token.health().await.unwrap());

    let without = Client::connect_with(Options::default().address(&tcp).token(""))
        .await
        .unwrap();
    let err = without
        .get_server_info(Default::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Unauthenticated, "{err}");
    assert_eq!(err.reason(), Some("UNAUTHENTICATED"), "{err}");

    let wrong = Client::connect_with(Options::default().address(&tcp).token("nope"))
        .await
        .unwrap();
    let err = wrong.get_stats(Default::default()).await.unwrap_err();
    assert_eq!(err.code(), Code::Unauthenticated, "{err}");
    daemon.stop();
}

#[tokio::test]
async fn errors_carry_code_reason_and_error_info() {
    let mut daemon = Daemon::start("err", &[]);
    let client = daemon.wait_healthy().await;
    let project = short_private_dir("errp");
    let session = client.open_session(&project).await.unwrap();

    let err = session.read_file("missing.txt").await.unwrap_err();
    let rpc = err.as_rpc().expect("an RPC error");
    assert_eq!(rpc.code, Code::NotFound, "{err}");
    assert!(
        rpc.reason.as_deref().is_some_and(|r| !r.is_empty()),
        "{err}"
    );
    assert_eq!(rpc.domain.as_deref(), Some("postcompact"), "{err}");

    let err = client
        .open_session_with(pb::OpenSessionRequest {
            cwd: "relative/dir".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.reason().is_some(), "{err}");

    let err = client
        .session("no-such-session")
        .compact()
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err}");
    assert!(err.reason().is_some(), "{err}");
    daemon.stop();
    let _ = fs::remove_dir_all(&project);
}

#[tokio::test]
async fn session_flow_reads_and_compacts() {
    let mut daemon = Daemon::start("flow", &[]);
    let client = daemon.wait_healthy().await;
    let project = short_private_dir("flowp").canonicalize().unwrap();
    fs::write(project.join("a.txt"), "alpha\nbeta\n").unwrap();
    fs::write(project.join("b.txt"), "gamma\n").unwrap();
    let session = client.open_session(&project).await.unwrap();
    assert!(!session.resumed());

    let r = session.read_file("a.txt").await.unwrap();
    assert_eq!(r.path, project.join("a.txt").to_string_lossy());
    assert!(!r.unchanged);
    assert!(String::from_utf8_lossy(&r.text).starts_with("1\talpha\n2\tbeta"));
    let again = session.read_file("a.txt").await.unwrap();
    assert!(again.unchanged, "a second read is the unchanged stub");
    session
        .record_read(project.join("b.txt"), "gamma\n", 0)
        .await
        .unwrap();
    assert_eq!(
        session.check_write("b.txt").await.unwrap().result(),
        pb::WriteCheck::Allowed
    );

    let preview = session.preview_compact().await.unwrap();
    let compaction = session.compact().await.unwrap();
    assert_eq!(preview.attachments, compaction.attachments);
    assert_eq!(compaction.compaction, 1);
    let files: Vec<&str> = compaction
        .attachments
        .iter()
        .filter(|a| a.kind() == pb::AttachmentKind::File)
        .filter_map(|a| match &a.payload {
            Some(pb::attachment::Payload::File(f)) => Some(f.display_path.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(files.len(), 2, "{compaction:#?}");
    assert_eq!(
        compaction.rendered_text,
        compaction.rendered().collect::<Vec<_>>().join("\n")
    );
    assert_eq!(
        compaction.rendered_text,
        compaction.blocks().collect::<Vec<_>>().join("\n")
    );
    // The default profile places everything in the user message.
    let injection = compaction.injection();
    assert_eq!(injection.system_text, "");
    assert_eq!(
        injection.user_blocks,
        compaction.blocks().map(str::to_owned).collect::<Vec<_>>()
    );
    assert!(compaction
        .file_decisions()
        .all(|d| d.outcome() == pb::Outcome::Restored));

    // The raw copies come only with include_content: by default the text is in the blocks.
    let contents = |c: &postcompact_client::Compaction| -> Vec<Vec<u8>> {
        c.attachments
            .iter()
            .filter_map(|a| match &a.payload {
                Some(pb::attachment::Payload::File(f)) => Some(f.content.clone()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(contents(&compaction), vec![Vec::<u8>::new(); 2]);
    let full = session
        .preview_compact_with(pb::PreviewCompactRequest {
            include_content: true,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(full.rendered_text, compaction.rendered_text);
    let mut got = contents(&full);
    got.sort();
    assert_eq!(got, vec![b"alpha\nbeta\n".to_vec(), b"gamma\n".to_vec()]);

    // A sub-agent starts with an empty file state.
    let sub = session
        .start_agent("sub", pb::AgentMode::Fresh)
        .await
        .unwrap();
    assert_eq!(sub.agent_id(), "sub");
    let c = sub.compact().await.unwrap();
    assert!(c
        .attachments
        .iter()
        .all(|a| a.kind() != pb::AttachmentKind::File));

    session.close().await.unwrap();
    daemon.stop();
    let _ = fs::remove_dir_all(&project);
}

/// Under claude-code, restored files are user-placed blocks and every other attachment one
/// system section: `join` gives the blocks in order and the sections joined by a blank line.
#[tokio::test]
async fn join_splits_the_injection_by_placement() {
    let mut daemon = Daemon::start("join", &[]);
    let client = daemon.wait_healthy().await;
    let project = short_private_dir("joinp").canonicalize().unwrap();
    fs::write(project.join("a.txt"), "alpha\n").unwrap();
    fs::write(project.join("b.txt"), "beta\n").unwrap();
    let session = client
        .open_session_with(pb::OpenSessionRequest {
            cwd: project.to_string_lossy().into_owned(),
            profile: postcompact_client::parse_profile("claude-code").unwrap() as i32,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(session.info().unwrap().profile(), pb::Profile::ClaudeCode);
    session.record_read("a.txt", "alpha\n", 1000).await.unwrap();
    session.record_read("b.txt", "beta\n", 2000).await.unwrap();
    session
        .upsert_task(pb::Task {
            task_id: "sh1".into(),
            task_type: "local_bash".into(),
            description: "dev server".into(),
            status: pb::TaskStatus::Running as i32,
            command: "npm run dev".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    session
        .record_skill("review", "userSettings:review", "Check every diff.", 5)
        .await
        .unwrap();
    let c = session
        .compact_with(pb::CompactRequest {
            skip_hooks: true,
            ..Default::default()
        })
        .await
        .unwrap();

    let (files, others): (Vec<&pb::Attachment>, Vec<&pb::Attachment>) = c
        .attachments
        .iter()
        .partition(|a| a.kind() == pb::AttachmentKind::File);
    assert_eq!(files.len(), 2, "{c:#?}");
    assert!(others.len() >= 2, "{c:#?}");
    for a in &files {
        assert_eq!(a.placement(), pb::Placement::User);
        assert!(
            a.blocks.len() >= 2,
            "a restored file is the Read call and result: {a:#?}"
        );
        assert!(!a.is_system());
    }
    for a in &others {
        assert_eq!(a.placement(), pb::Placement::System, "{a:#?}");
        assert_eq!(
            a.blocks.len(),
            1,
            "a system attachment is one section: {a:#?}"
        );
    }

    let injection = join(&c.attachments);
    assert_eq!(injection, c.injection());
    let want_user: Vec<String> = files.iter().flat_map(|a| a.blocks.clone()).collect();
    assert_eq!(injection.user_blocks, want_user);
    let sections: Vec<&str> = others.iter().map(|a| a.blocks[0].as_str()).collect();
    assert_eq!(injection.system_text, sections.join("\n\n"));
    assert!(injection.system_text.contains("Check every diff."));
    assert!(injection.system_text.contains("npm run dev"));
    // rendered_text keeps every block, in attachment order, placement aside.
    assert_eq!(
        c.rendered_text,
        c.attachments
            .iter()
            .map(pb::Attachment::rendered_text)
            .collect::<Vec<_>>()
            .join("\n")
    );
    session.close().await.unwrap();
    daemon.stop();
    let _ = fs::remove_dir_all(&project);
}

/// ImportTranscript builds a session from a Claude Code transcript; a repeat answers
/// ALREADY_EXISTS unless it replaces.
#[tokio::test]
async fn import_transcript_builds_a_session() {
    let mut daemon = Daemon::start("imp", &[]);
    let client = daemon.wait_healthy().await;
    let project = short_private_dir("impp").canonicalize().unwrap();
    let lib = short_private_dir("impl").canonicalize().unwrap();
    fs::write(project.join("a.ts"), "export const a = 1;\n").unwrap();
    fs::write(lib.join("l.ts"), "export const l = 2;\n").unwrap();

    let record = |uuid: &str, kind: &str, extra: serde_json::Value| {
        let mut r = serde_json::json!({
            "sessionId": "orig", "cwd": "/orig/app", "version": "2.1.220",
            "isSidechain": false, "type": kind, "uuid": uuid,
            "timestamp": "2026-01-01T00:00:00.000Z",
        });
        r.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        r
    };
    let read = |n: u32, path: &str, content: &str| {
        [
            record(
                &format!("a{n}"),
                "assistant",
                serde_json::json!({"message": {"role": "assistant", "content": [
                    {"type": "tool_use", "id": format!("t{n}"), "name": "Read",
                     "input": {"file_path": path}}]}}),
            ),
            record(
                &format!("u{n}"),
                "user",
                serde_json::json!({
                    "message": {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": format!("t{n}"),
                         "content": format!("1\t{}", content.trim_end())}]},
                    "toolUseResult": {"type": "text", "file": {
                        "filePath": path, "content": content,
                        "numLines": 2, "startLine": 1, "totalLines": 2}}}),
            ),
        ]
    };
    let mut records = vec![record(
        "u0",
        "user",
        serde_json::json!({"message": {"role": "user", "content": "go"}}),
    )];
    records.extend(read(1, "/orig/app/a.ts", "export const a = 1;\n"));
    records.extend(read(2, "/orig/lib/l.ts", "export const l = 2;\n"));
    let jsonl: String = records.iter().map(|r| format!("{r}\n")).collect();

    let opts = ImportOptions::new(&project)
        .session_id("imported-1")
        .map_path("/orig/lib", &lib)
        .profile(pb::Profile::ClaudeCode2188);
    let r = client
        .import_transcript(jsonl.clone(), opts.clone())
        .await
        .unwrap();
    assert_eq!(r.session_id, "imported-1");
    assert_eq!(r.records, 5);
    assert_eq!(r.events, 2, "{r:#?}");
    assert!(r.boundaries.is_empty());
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let info = r.session.as_ref().expect("the session's info");
    assert_eq!(info.profile(), pb::Profile::ClaudeCode2188);
    assert_eq!(info.cwd, project.to_string_lossy());

    // The imported reads are the session's state: a compaction restores both files.
    let session = client.session(&r.session_id);
    let c = session.preview_compact().await.unwrap();
    let mut paths: Vec<String> = c
        .attachments
        .iter()
        .filter_map(|a| match &a.payload {
            Some(pb::attachment::Payload::File(f)) => Some(f.path.clone()),
            _ => None,
        })
        .collect();
    paths.sort();
    let mut want = vec![
        project.join("a.ts").to_string_lossy().into_owned(),
        lib.join("l.ts").to_string_lossy().into_owned(),
    ];
    want.sort();
    assert_eq!(paths, want, "{c:#?}");

    // Not idempotent: a repeat answers ALREADY_EXISTS; `replace` imports over it.
    let err = client
        .import_transcript(jsonl.clone(), opts.clone())
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::AlreadyExists, "{err}");
    assert!(err.reason().is_some(), "{err}");
    let again = client
        .import_transcript(jsonl, opts.replace(true))
        .await
        .unwrap();
    assert_eq!(again.records, 5);

    // cwd is required.
    let err = client
        .import_transcript("", ImportOptions::new(""))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");

    session.close().await.unwrap();
    daemon.stop();
    let _ = fs::remove_dir_all(&project);
    let _ = fs::remove_dir_all(&lib);
}

#[tokio::test]
async fn a_call_that_finds_the_daemon_gone_restarts_it_and_retries_once() {
    let bin = venv_bin("postcompact");
    let dir = short_private_dir("again");
    let client = Client::connect_with(
        Options::default()
            .address(format!("unix://{}/d.sock", dir.display()))
            .auto_start(true)
            .daemon_bin(&bin)
            .start_timeout(Duration::from_secs(60)),
    )
    .await
    .unwrap();
    let first = client
        .get_server_info(Default::default())
        .await
        .unwrap()
        .pid as i32;
    terminate(first);
    for _ in 0..200 {
        if !alive(first) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!alive(first), "the first daemon did not stop");

    // The same client: the call fails at the transport, the daemon is started again, the call
    // is retried.
    let second = client
        .get_server_info(Default::default())
        .await
        .unwrap()
        .pid as i32;
    assert_ne!(first, second);
    terminate(second);
    for _ in 0..200 {
        if !alive(second) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = fs::remove_dir_all(&dir);
}

/// Answers over tonic's default 4 MiB decode limit arrive (the daemon allows 32 MiB): a 5 MiB
/// text under a huge budget comes back whole.
#[tokio::test]
async fn answers_over_4_mib_are_received() {
    let mut daemon = Daemon::start("big", &[]);
    let client = daemon.wait_healthy().await;
    let text = vec![b'a'; 5 << 20];
    let r = client
        .truncate_tokens(pb::TruncateTokensRequest {
            text: text.clone(),
            max_tokens: 1 << 30,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(!r.truncated);
    assert!(r.text == text, "{} bytes back", r.text.len());
    daemon.stop();
}

/// A hung daemon (SIGSTOP) fails a call with DEADLINE_EXCEEDED at `Options::timeout`, not
/// retried, instead of blocking the caller forever.
#[tokio::test]
async fn a_hung_daemon_fails_the_call_at_its_deadline() {
    let mut daemon = Daemon::start("hang", &[]);
    daemon.wait_healthy().await;
    let client = Client::connect_with(
        Options::default()
            .address(daemon.address())
            .timeout(Duration::from_secs(1)),
    )
    .await
    .unwrap();
    client.get_stats(Default::default()).await.unwrap();
    let pid = daemon.child.id() as libc::pid_t;
    // SAFETY: kill(2) has no memory-safety preconditions; the pid is our own child.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    // Only a guard against hanging the test run: the deadline is 1 s.
    let r = tokio::time::timeout(
        Duration::from_secs(60),
        client.get_stats(Default::default()),
    )
    .await;
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let err = r.expect("the call outlived its deadline").unwrap_err();
    assert_eq!(err.code(), Code::DeadlineExceeded, "{err}");
    // No daemon answered: the client's reason, as every client names it.
    assert_eq!(err.reason(), Some("DEADLINE_EXCEEDED"), "{err}");
    assert!(err.as_rpc().is_some_and(|e| e.is_transport()), "{err}");
    daemon.stop();
}
