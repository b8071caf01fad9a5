//! A tiny agent harness: reads a few files through the daemon, compacts, and prints what it
//! would inject into the new context, and where (the `join` helper: user blocks and system text).
//!
//! ```sh
//! cargo run -p postcompact-client --example harness -- [PROJECT_DIR] [FILE...]
//! ```
//!
//! With no files it reads up to five files of PROJECT_DIR (default: the current directory). The
//! daemon is found as every client does (POSTCOMPACT_ADDRESS, server.json, the default socket)
//! and started when it is not running (`postcompact` on PATH or POSTCOMPACT_BIN).

use std::path::{Path, PathBuf};

use postcompact_client::pb::{AttachmentKind, Outcome};
use postcompact_client::{join, Client, Error};

fn pick_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|it| {
            it.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .filter(|p| {
                    !p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files.truncate(5);
    files
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let project = std::path::absolute(args.next().unwrap_or_else(|| ".".into()))?;
    let mut files: Vec<PathBuf> = args.map(PathBuf::from).collect();
    if files.is_empty() {
        files = pick_files(&project);
    }

    let client = Client::connect().await?;
    let info = client.get_server_info(Default::default()).await?;
    eprintln!(
        "daemon {} ({}) at {}",
        info.version,
        info.api_version,
        client.address()
    );

    let session = client.open_session(&project).await?;
    for file in &files {
        match session.read_file(file).await {
            Ok(r) => eprintln!(
                "read {} ({} lines, ~{} tokens)",
                r.path, r.num_lines, r.tokens
            ),
            // Typed errors: the status code and the daemon's reason.
            Err(Error::Rpc(e)) => eprintln!(
                "cannot read {}: {} {}",
                file.display(),
                e.code_name(),
                e.reason.as_deref().unwrap_or("")
            ),
            Err(e) => return Err(e.into()),
        }
    }

    let compaction = session.compact().await?;
    println!(
        "=== {} attachments, ~{} tokens, compaction #{} ===",
        compaction.attachments.len(),
        compaction.tokens(),
        compaction.compaction
    );
    for a in &compaction.attachments {
        let kind = a.kind();
        let label = match kind {
            AttachmentKind::File => "file",
            AttachmentKind::CompactFileReference => "file reference",
            _ => kind.as_str_name(),
        };
        let place = if a.is_system() { "system" } else { "user" };
        println!(
            "--- [{label}, {place}, {} block(s)] ---\n{}",
            a.blocks.len(),
            a.rendered_text()
        );
    }
    // What the harness injects where: the user-placed blocks in order (text blocks of the user
    // message after the summary) and the system-placed sections joined by "\n\n" (one system
    // message at the end).
    let injection = join(&compaction.attachments);
    println!(
        "=== injection: {} user block(s), {} bytes of system text ===",
        injection.user_blocks.len(),
        injection.system_text.len()
    );
    for (i, block) in injection.user_blocks.iter().enumerate() {
        println!("--- user block {} ---\n{block}", i + 1);
    }
    if !injection.system_text.is_empty() {
        println!("--- system message ---\n{}", injection.system_text);
    }
    println!("=== decisions ===");
    for d in &compaction.decisions {
        let outcome = d.outcome();
        let mark = if matches!(outcome, Outcome::Restored | Outcome::Truncated) {
            "+"
        } else {
            "-"
        };
        println!(
            "{mark} {:<10} {} ({} tokens) {}",
            outcome.as_str_name().trim_start_matches("OUTCOME_"),
            d.name,
            d.tokens,
            d.detail
        );
    }
    session.close().await?;
    Ok(())
}
