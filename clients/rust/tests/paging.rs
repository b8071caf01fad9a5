//! ListSessions is paged (100 a page by default): `list_sessions()` walks every page,
//! `list_sessions_page()` returns one, against the real daemon.

mod common;

use common::{short_private_dir, Daemon};
use postcompact_client::pb;

fn ids(infos: &[pb::SessionInfo]) -> Vec<String> {
    infos.iter().map(|s| s.session_id.clone()).collect()
}

#[tokio::test]
async fn list_sessions_walks_every_page_in_id_order() {
    let dir = short_private_dir("page");
    let project = dir.join("project");
    std::fs::create_dir(&project).unwrap();
    let state = dir.join("state");
    let mut daemon = Daemon::start_in(dir, &["--state-dir", state.to_str().unwrap()], &[]);
    let client = daemon.wait_healthy().await;

    const N: usize = 130; // more than the daemon's default page of 100
    let mut want = Vec::new();
    for i in (0..N).rev() {
        // opened out of order: the list sorts them
        let id = format!("page-{i:03}");
        client
            .open_session_with(pb::OpenSessionRequest {
                session_id: id.clone(),
                cwd: project.display().to_string(),
                ..Default::default()
            })
            .await
            .unwrap();
        want.push(id);
    }
    want.sort();

    assert_eq!(ids(&client.list_sessions().await.unwrap()), want);

    let first = client.list_sessions_page(0, "").await.unwrap();
    assert_eq!(ids(&first.sessions), want[..100]);
    assert!(!first.next_page_token.is_empty());
    assert_eq!(first.total_sessions, N as i32);

    let (mut sizes, mut walked, mut token) = (Vec::new(), Vec::new(), String::new());
    loop {
        let page = client.list_sessions_page(50, token).await.unwrap();
        sizes.push(page.sessions.len());
        walked.extend(ids(&page.sessions));
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
    }
    assert_eq!(sizes, [50, 50, 30]);
    assert_eq!(walked, want);
}
