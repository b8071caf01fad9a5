//! ImportTranscript: a new session on the daemon built from a Claude Code transcript (its JSONL
//! bytes; docs/transcripts.md).

use std::path::{Path, PathBuf};

use crate::client::Client;
use crate::error::Error;
use crate::pb;

/// The options of [`Client::import_transcript`]: where the transcript's paths are on this
/// machine, and the imported session's id, profile, policy and home.
///
/// `cwd` is required: [`ImportOptions::new`] takes it, the rest is set with the builder methods
/// (or the public fields).
#[derive(Debug, Clone, PartialEq)]
pub struct ImportOptions {
    /// Where the transcript's working directory is on this machine (absolute; required): paths
    /// under the transcript's cwd are mapped under it.
    pub cwd: PathBuf,
    /// The imported session's id; `""` = the transcript's own session id.
    pub session_id: String,
    /// Further transcript path prefixes (POSIX or Windows form, as in the transcript) and the
    /// absolute local directory each lives in; the longest matching prefix wins.
    pub path_map: Vec<(String, PathBuf)>,
    /// The imported session's profile; `Profile::Unspecified` = the daemon's default.
    pub profile: pb::Profile,
    /// The imported session's restore policy; `None` = the daemon's.
    pub policy: Option<pb::RestorePolicy>,
    /// The imported session's home (for `~` expansion); `None` = the daemon user's.
    pub home: Option<PathBuf>,
    /// Replace a session that has this id already (else the daemon answers `ALREADY_EXISTS`).
    pub replace: bool,
    /// Stamp reads and writes with the files' mtimes here (as a running Claude Code does), not
    /// with the records' times (as its `--resume` does).
    pub file_mtimes: bool,
}

impl ImportOptions {
    /// Imports with the transcript's working directory at `cwd` (absolute) and every other
    /// option at its default.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        ImportOptions {
            cwd: cwd.into(),
            session_id: String::new(),
            path_map: Vec::new(),
            profile: pb::Profile::Unspecified,
            policy: None,
            home: None,
            replace: false,
            file_mtimes: false,
        }
    }

    /// The imported session's id (default: the transcript's own).
    pub fn session_id(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = session_id.into();
        self
    }

    /// Maps the transcript path prefix `source` to the local directory `target` (absolute).
    pub fn map_path(mut self, source: impl Into<String>, target: impl Into<PathBuf>) -> Self {
        self.path_map.push((source.into(), target.into()));
        self
    }

    /// The imported session's profile (see [`crate::parse_profile`] for the names).
    pub fn profile(mut self, profile: pb::Profile) -> Self {
        self.profile = profile;
        self
    }

    pub fn policy(mut self, policy: pb::RestorePolicy) -> Self {
        self.policy = Some(policy);
        self
    }

    pub fn home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }

    /// Replace an existing session with the same id instead of failing with `ALREADY_EXISTS`.
    pub fn replace(mut self, on: bool) -> Self {
        self.replace = on;
        self
    }

    /// Stamp reads and writes with the files' mtimes on this machine.
    pub fn file_mtimes(mut self, on: bool) -> Self {
        self.file_mtimes = on;
        self
    }

    /// The request that imports `transcript` (the JSONL bytes) with these options.
    pub fn into_request(self, transcript: impl Into<Vec<u8>>) -> pb::ImportTranscriptRequest {
        let path_str = |p: &Path| p.to_string_lossy().into_owned();
        pb::ImportTranscriptRequest {
            transcript: transcript.into(),
            session_id: self.session_id,
            cwd: path_str(&self.cwd),
            path_map: self
                .path_map
                .iter()
                .map(|(source, target)| pb::PathMapping {
                    source: source.clone(),
                    target: path_str(target),
                })
                .collect(),
            profile: self.profile as i32,
            policy: self.policy,
            home: self.home.as_deref().map(path_str).unwrap_or_default(),
            replace: self.replace,
            file_mtimes: self.file_mtimes,
        }
    }
}

impl Client {
    /// Builds a new session on the daemon from a Claude Code transcript (`transcript`: its JSONL
    /// bytes): its reads, edits, writes, skills, plan, mode, tasks and catalogue, each
    /// compaction replayed through the pipeline (the response's `boundaries` hold what Claude
    /// Code recorded after each and what postcompact restored). The response names the session
    /// ([`Client::session`] gives a handle on it), counts the records read and the events
    /// applied, and lists what was skipped (`warnings`).
    ///
    /// Not idempotent (a repeat of an import that succeeded answers `ALREADY_EXISTS`, or with
    /// `replace` imports again over what happened since): after a transport failure it is
    /// retried only when it was never sent.
    pub async fn import_transcript(
        &self,
        transcript: impl Into<Vec<u8>>,
        opts: ImportOptions,
    ) -> Result<pb::ImportTranscriptResponse, Error> {
        self.import_transcript_with(opts.into_request(transcript))
            .await
    }

    /// ImportTranscript with the request spelled out.
    pub async fn import_transcript_with(
        &self,
        req: pb::ImportTranscriptRequest,
    ) -> Result<pb::ImportTranscriptResponse, Error> {
        self.call(req, |mut c, r| async move { c.import_transcript(r).await })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_build_the_request() {
        let req = ImportOptions::new("/work/app")
            .session_id("s1")
            .map_path("C:\\Users\\me\\lib", "/work/lib")
            .map_path("/orig/other", "/work/other")
            .profile(pb::Profile::ClaudeCode2188)
            .policy(pb::RestorePolicy {
                carry_read_state: Some(false),
                ..Default::default()
            })
            .home("/home/me")
            .replace(true)
            .into_request(&b"{}\n"[..]);
        assert_eq!(req.transcript, b"{}\n");
        assert_eq!(req.cwd, "/work/app");
        assert_eq!(req.session_id, "s1");
        assert_eq!(
            req.path_map,
            vec![
                pb::PathMapping {
                    source: "C:\\Users\\me\\lib".into(),
                    target: "/work/lib".into()
                },
                pb::PathMapping {
                    source: "/orig/other".into(),
                    target: "/work/other".into()
                },
            ]
        );
        assert_eq!(req.profile(), pb::Profile::ClaudeCode2188);
        assert_eq!(req.policy.unwrap().carry_read_state, Some(false));
        assert_eq!(req.home, "/home/me");
        assert!(req.replace);

        let plain = ImportOptions::new("/w").into_request(Vec::new());
        assert_eq!(plain.profile(), pb::Profile::Unspecified);
        assert!(plain.policy.is_none());
        assert_eq!(plain.home, "");
        assert!(plain.session_id.is_empty() && plain.path_map.is_empty() && !plain.replace);
    }
}
