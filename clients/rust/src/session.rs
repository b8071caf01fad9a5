//! The common flow in a few calls: open a session, record what the agent reads and does, and
//! compact.

use std::path::Path;

use crate::client::Client;
use crate::error::Error;
use crate::pb;

/// One conversation on the daemon, seen as one agent (`""` is the main thread).
///
/// Cheap to clone. [`Session::agent`] gives the view of a sub-agent of the same session.
#[derive(Debug, Clone)]
pub struct Session {
    client: Client,
    session_id: String,
    agent_id: String,
    info: Option<pb::SessionInfo>,
    resumed: bool,
}

/// The result of [`Session::compact`] or [`Session::preview_compact`]: the attachments in
/// injection order (each with its placement and text `blocks`), a decision for every candidate
/// file, skill and hook, the per-category totals, and all the text joined by `"\n"` (joined by
/// the client: the daemon does not send the joined copy).
///
/// Where each attachment goes is its placement: [`Compaction::injection`] (the same as
/// [`join`]) gives the user-placed blocks, in order, and the system-placed sections joined by
/// `"\n\n"`, as Claude Code lays out the request after a compaction. [`Compaction::rendered_text`]
/// is everything as one string, for logs or a harness that puts all of it in one place.
///
/// The raw copies (`FileAttachment::content`, `PlanFileReference::plan_content`,
/// `InvokedSkill::content`) are empty unless the request sets `include_content`: the same text
/// is in each attachment's `blocks`, so by default it crosses the socket once.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Compaction {
    pub attachments: Vec<pb::Attachment>,
    pub decisions: Vec<pb::Decision>,
    pub totals: Vec<pb::CategoryTotals>,
    /// Every attachment's blocks, in attachment order, flattened and joined by `"\n"`
    /// ([`join_rendered_text`]). Under the `default` and `claude-code-2.1.88` profiles, where
    /// every attachment is user-placed, this is the text of the user message; otherwise use
    /// [`Compaction::injection`], which keeps the placement.
    pub rendered_text: String,
    /// This agent's compaction count after the call (unchanged by a preview).
    pub compaction: i64,
}

/// Where a harness puts the attachments' text, as Claude Code lays out the request after a
/// compaction: [`join`] computes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Injection {
    /// The blocks of the user-placed attachments (every placement but `PLACEMENT_SYSTEM`), in
    /// order: the text blocks of the user message after the summary.
    pub user_blocks: Vec<String>,
    /// The blocks of the system-placed attachments, in order, joined by `"\n\n"`: one system
    /// message at the end (`""` when no attachment is system-placed).
    pub system_text: String,
}

impl Injection {
    /// True when there is nothing to inject.
    pub fn is_empty(&self) -> bool {
        self.user_blocks.is_empty() && self.system_text.is_empty()
    }
}

/// Splits the attachments by placement: the blocks of those not `PLACEMENT_SYSTEM` in order,
/// and the blocks of the `PLACEMENT_SYSTEM` ones (each exactly one block, its section) joined
/// by `"\n\n"`.
pub fn join(attachments: &[pb::Attachment]) -> Injection {
    let mut user_blocks = Vec::new();
    let mut sections: Vec<&str> = Vec::new();
    for a in attachments {
        if a.placement() == pb::Placement::System {
            sections.extend(a.blocks.iter().map(String::as_str));
        } else {
            user_blocks.extend(a.blocks.iter().cloned());
        }
    }
    Injection {
        user_blocks,
        system_text: sections.join("\n\n"),
    }
}

/// All the text as one string: every attachment's blocks, in attachment order, flattened and
/// joined by `"\n"` (placement aside: see [`join`]).
pub fn join_rendered_text(attachments: &[pb::Attachment]) -> String {
    let len = attachments
        .iter()
        .flat_map(|a| &a.blocks)
        .map(|b| b.len() + 1)
        .sum::<usize>();
    let mut out = String::with_capacity(len);
    for (i, b) in attachments.iter().flat_map(|a| &a.blocks).enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(b);
    }
    out
}

impl pb::Attachment {
    /// This attachment's text: its blocks joined by `"\n"` (the text its `tokens` estimate
    /// counts).
    pub fn rendered_text(&self) -> String {
        self.blocks.join("\n")
    }

    /// True when a harness puts this attachment in the system message (`PLACEMENT_SYSTEM`);
    /// any other placement is user-placed.
    pub fn is_system(&self) -> bool {
        self.placement() == pb::Placement::System
    }
}

impl From<pb::CompactResponse> for Compaction {
    fn from(r: pb::CompactResponse) -> Self {
        Compaction {
            rendered_text: join_rendered_text(&r.attachments),
            attachments: r.attachments,
            decisions: r.decisions,
            totals: r.totals,
            compaction: r.compaction,
        }
    }
}

impl From<pb::PreviewCompactResponse> for Compaction {
    fn from(r: pb::PreviewCompactResponse) -> Self {
        Compaction {
            rendered_text: join_rendered_text(&r.attachments),
            attachments: r.attachments,
            decisions: r.decisions,
            totals: r.totals,
            compaction: r.compaction,
        }
    }
}

impl Compaction {
    /// What to inject where: the user-placed blocks in order and the system-placed sections
    /// joined by `"\n\n"` ([`join`] of the attachments).
    pub fn injection(&self) -> Injection {
        join(&self.attachments)
    }

    /// Every text block of every attachment, in order (placement aside).
    pub fn blocks(&self) -> impl Iterator<Item = &str> {
        self.attachments
            .iter()
            .flat_map(|a| &a.blocks)
            .map(String::as_str)
    }

    /// Each attachment's text, in order: its blocks joined by `"\n"`
    /// ([`pb::Attachment::rendered_text`]). Joined by `"\n"` they make
    /// [`Compaction::rendered_text`].
    pub fn rendered(&self) -> impl Iterator<Item = String> + '_ {
        self.attachments.iter().map(pb::Attachment::rendered_text)
    }

    /// The decisions about files (path and outcome).
    pub fn file_decisions(&self) -> impl Iterator<Item = &pb::Decision> {
        self.decisions
            .iter()
            .filter(|d| d.subject() == pb::Subject::File)
    }

    /// Total rough tokens of the attachments.
    pub fn tokens(&self) -> i64 {
        self.attachments.iter().map(|a| a.tokens).sum()
    }
}

/// Request messages that belong to a session and an agent: the session fills both ids in.
pub trait Scoped {
    fn scope(&mut self, session_id: &str, agent_id: &str);
}

macro_rules! scoped {
    ($($t:ident),*) => {
        $(impl Scoped for pb::$t {
            fn scope(&mut self, session_id: &str, agent_id: &str) {
                self.session_id = session_id.to_owned();
                self.agent_id = agent_id.to_owned();
            }
        })*
    };
}

scoped!(
    ReadFileRequest,
    RecordReadRequest,
    RecordWriteRequest,
    CheckWriteRequest,
    CheckStaleRequest,
    RecordSkillRequest,
    SetPlanRequest,
    SetModeRequest,
    SetCatalogRequest,
    CompactRequest,
    PreviewCompactRequest
);

fn path_str(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

impl Client {
    /// Opens a session rooted at `cwd` (absolute) with the daemon's defaults.
    pub async fn open_session(&self, cwd: impl AsRef<Path>) -> Result<Session, Error> {
        self.open_session_with(pb::OpenSessionRequest {
            cwd: path_str(cwd.as_ref()),
            ..Default::default()
        })
        .await
    }

    /// Opens (or resumes, when `session_id` names an open one) a session with every option of
    /// the request: roots, memory files, plans directory, restore policy, profile, home.
    pub async fn open_session_with(&self, req: pb::OpenSessionRequest) -> Result<Session, Error> {
        let r = self
            .call(req, |mut c, r| async move { c.open_session(r).await })
            .await?;
        Ok(Session {
            client: self.clone(),
            session_id: r.session_id,
            agent_id: String::new(),
            info: r.session,
            resumed: r.resumed,
        })
    }

    /// Joins the existing session `session_id` as it is, without restating its settings (its
    /// cwd, roots, policy... are the session's); `NOT_FOUND` `SESSION_NOT_FOUND` when there is
    /// none. [`Client::open_session_with`] with the id and settings that differ is refused
    /// instead (`SESSION_SETTINGS_MISMATCH`): settings are never silently dropped.
    pub async fn attach_session(&self, session_id: impl Into<String>) -> Result<Session, Error> {
        self.open_session_with(pb::OpenSessionRequest {
            session_id: session_id.into(),
            ..Default::default()
        })
        .await
    }

    /// A handle on an existing session without a call (e.g. one opened by another process).
    pub fn session(&self, session_id: impl Into<String>) -> Session {
        Session {
            client: self.clone(),
            session_id: session_id.into(),
            agent_id: String::new(),
            info: None,
            resumed: true,
        }
    }
}

impl Session {
    pub fn id(&self) -> &str {
        &self.session_id
    }

    /// The agent this handle acts as (`""` = the main thread).
    pub fn agent_id(&self) -> &str {
        &self.agent_id
    }

    /// What OpenSession returned about the session.
    pub fn info(&self) -> Option<&pb::SessionInfo> {
        self.info.as_ref()
    }

    /// True when OpenSession found the session already open.
    pub fn resumed(&self) -> bool {
        self.resumed
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The same session seen as another agent (no call: see [`Session::start_agent`]).
    pub fn agent(&self, agent_id: impl Into<String>) -> Session {
        Session {
            agent_id: agent_id.into(),
            ..self.clone()
        }
    }

    /// Starts a sub-agent of this handle's agent: `Fresh` (empty file state) or `CloneParent`.
    pub async fn start_agent(
        &self,
        agent_id: impl Into<String>,
        mode: pb::AgentMode,
    ) -> Result<Session, Error> {
        let agent_id = agent_id.into();
        self.client
            .start_agent(pb::StartAgentRequest {
                session_id: self.session_id.clone(),
                agent_id: agent_id.clone(),
                parent_agent_id: self.agent_id.clone(),
                mode: mode as i32,
            })
            .await?;
        Ok(self.agent(agent_id))
    }

    /// Ends this sub-agent: its file state, skills and catalogue are forgotten and its slot in
    /// the session (`limits.max_agents_per_session`) is free. The main thread cannot end
    /// (`INVALID_ARGUMENT` `MAIN_AGENT`): close the session.
    pub async fn end_agent(&self) -> Result<pb::EndAgentResponse, Error> {
        self.client
            .end_agent(pb::EndAgentRequest {
                session_id: self.session_id.clone(),
                agent_id: self.agent_id.clone(),
            })
            .await
    }

    /// Merges the file state of agent `from` into this handle's agent.
    pub async fn merge_file_state_from(
        &self,
        from: &str,
    ) -> Result<pb::MergeFileStateResponse, Error> {
        self.client
            .merge_file_state(pb::MergeFileStateRequest {
                session_id: self.session_id.clone(),
                from_agent_id: from.to_owned(),
                into_agent_id: self.agent_id.clone(),
            })
            .await
    }

    fn scoped<R: Scoped>(&self, mut req: R) -> R {
        req.scope(&self.session_id, &self.agent_id);
        req
    }

    /// Reads a whole file through the daemon (numbered text, or the unchanged stub).
    pub async fn read_file(&self, path: impl AsRef<Path>) -> Result<pb::ReadFileResponse, Error> {
        self.read_file_with(pb::ReadFileRequest {
            path: path_str(path.as_ref()),
            ..Default::default()
        })
        .await
    }

    /// Reads `limit` lines from the 1-based line `offset`.
    pub async fn read_file_range(
        &self,
        path: impl AsRef<Path>,
        offset: Option<i64>,
        limit: Option<i64>,
    ) -> Result<pb::ReadFileResponse, Error> {
        self.read_file_with(pb::ReadFileRequest {
            path: path_str(path.as_ref()),
            offset,
            limit,
            ..Default::default()
        })
        .await
    }

    pub async fn read_file_with(
        &self,
        req: pb::ReadFileRequest,
    ) -> Result<pb::ReadFileResponse, Error> {
        self.client.read_file(self.scoped(req)).await
    }

    /// Records a full read the harness made itself (`timestamp_ms` 0 = now). Returns the
    /// normalised path.
    pub async fn record_read(
        &self,
        path: impl AsRef<Path>,
        content: impl Into<Vec<u8>>,
        timestamp_ms: i64,
    ) -> Result<String, Error> {
        self.record_read_with(pb::RecordReadRequest {
            path: path_str(path.as_ref()),
            content: content.into(),
            timestamp_ms,
            ..Default::default()
        })
        .await
    }

    /// Records a read with every field (ranges, partial views, nested memory).
    pub async fn record_read_with(&self, req: pb::RecordReadRequest) -> Result<String, Error> {
        Ok(self.client.record_read(self.scoped(req)).await?.path)
    }

    /// Records an Edit/Write: the content after it and the file's mtime (0 = stat the file).
    pub async fn record_write(
        &self,
        path: impl AsRef<Path>,
        content: impl Into<Vec<u8>>,
        timestamp_ms: i64,
    ) -> Result<String, Error> {
        let req = pb::RecordWriteRequest {
            path: path_str(path.as_ref()),
            content: content.into(),
            timestamp_ms,
            ..Default::default()
        };
        Ok(self.client.record_write(self.scoped(req)).await?.path)
    }

    /// Records an Edit/Write naming the lines of the new content it added or changed (an Edit's
    /// hunks, `(first, last)`, 1-based and inclusive; none: it only deleted lines). They widen
    /// the span of lines the agent saw of the file (docs/eval.md §2); `record_write` leaves
    /// them to the daemon's diff of the content against what the agent held.
    pub async fn record_write_changed(
        &self,
        path: impl AsRef<Path>,
        content: impl Into<Vec<u8>>,
        timestamp_ms: i64,
        changed_lines: impl IntoIterator<Item = (i64, i64)>,
    ) -> Result<String, Error> {
        let ranges = changed_lines
            .into_iter()
            .map(|(first, last)| pb::LineRange { first, last })
            .collect();
        self.record_write_with(pb::RecordWriteRequest {
            path: path_str(path.as_ref()),
            content: content.into(),
            timestamp_ms,
            changed_lines: Some(pb::ChangedLines { ranges }),
            ..Default::default()
        })
        .await
    }

    /// Records a write with every field (the condition, the changed lines).
    pub async fn record_write_with(&self, req: pb::RecordWriteRequest) -> Result<String, Error> {
        Ok(self.client.record_write(self.scoped(req)).await?.path)
    }

    /// Records a write only if no other read or write of `path` was recorded since the
    /// CheckWrite that allowed it (`if_entry_timestamp_ms`: its `entry_timestamp_ms`):
    /// `FAILED_PRECONDITION` `WRITE_CONFLICT` otherwise, and nothing changes.
    pub async fn record_write_if(
        &self,
        path: impl AsRef<Path>,
        content: impl Into<Vec<u8>>,
        timestamp_ms: i64,
        if_entry_timestamp_ms: i64,
    ) -> Result<String, Error> {
        let req = pb::RecordWriteRequest {
            path: path_str(path.as_ref()),
            content: content.into(),
            timestamp_ms,
            if_entry_timestamp_ms: Some(if_entry_timestamp_ms),
            ..Default::default()
        };
        Ok(self.client.record_write(self.scoped(req)).await?.path)
    }

    /// The write precondition: ALLOWED, NOT_READ (error code 6) or MODIFIED (7).
    pub async fn check_write(
        &self,
        path: impl AsRef<Path>,
    ) -> Result<pb::CheckWriteResponse, Error> {
        let req = pb::CheckWriteRequest {
            path: path_str(path.as_ref()),
            ..Default::default()
        };
        self.client.check_write(self.scoped(req)).await
    }

    /// Read files modified since they were read; `command` (may be empty) gates the hint.
    pub async fn check_stale(
        &self,
        command: &str,
        started_at_ms: i64,
    ) -> Result<pb::CheckStaleResponse, Error> {
        let req = pb::CheckStaleRequest {
            command: command.to_owned(),
            started_at_ms,
            ..Default::default()
        };
        self.client.check_stale(self.scoped(req)).await
    }

    /// Records an invoked skill (`invoked_at_ms` 0 = now). Returns how many skills are held.
    pub async fn record_skill(
        &self,
        name: &str,
        path: impl AsRef<Path>,
        content: impl Into<Vec<u8>>,
        invoked_at_ms: i64,
    ) -> Result<i32, Error> {
        let req = pb::RecordSkillRequest {
            name: name.to_owned(),
            path: path_str(path.as_ref()),
            content: content.into(),
            invoked_at_ms,
            ..Default::default()
        };
        Ok(self.client.record_skill(self.scoped(req)).await?.skills)
    }

    /// Sets the plan file (`""` = the default, in the plans directory). Returns the path the
    /// daemon will use, normalised.
    pub async fn set_plan(&self, plan_file_path: impl AsRef<Path>) -> Result<String, Error> {
        let req = pb::SetPlanRequest {
            plan_file_path: path_str(plan_file_path.as_ref()),
            ..Default::default()
        };
        Ok(self.client.set_plan(self.scoped(req)).await?.plan_file_path)
    }

    /// Sets the permission mode (plan mode produces the plan-mode attachment).
    pub async fn set_mode(&self, mode: pb::PermissionMode) -> Result<(), Error> {
        let req = pb::SetModeRequest {
            mode: mode as i32,
            ..Default::default()
        };
        self.client.set_mode(self.scoped(req)).await?;
        Ok(())
    }

    /// Adds or updates a background task of this session.
    pub async fn upsert_task(&self, task: pb::Task) -> Result<(), Error> {
        self.client
            .upsert_task(pb::UpsertTaskRequest {
                session_id: self.session_id.clone(),
                task: Some(task),
            })
            .await?;
        Ok(())
    }

    /// Updates the catalogue (absent parts stay) and returns the delta attachments to announce.
    pub async fn set_catalog(
        &self,
        req: pb::SetCatalogRequest,
    ) -> Result<Vec<pb::Attachment>, Error> {
        Ok(self.client.set_catalog(self.scoped(req)).await?.attachments)
    }

    /// A full compaction with the session's policy.
    pub async fn compact(&self) -> Result<Compaction, Error> {
        self.compact_with(pb::CompactRequest::default()).await
    }

    /// A full compaction that also fills the raw copies of the restored text
    /// (`include_content`: file, plan and skill content besides the attachments' `blocks`).
    pub async fn compact_with_content(&self) -> Result<Compaction, Error> {
        self.compact_with(pb::CompactRequest {
            include_content: true,
            ..Default::default()
        })
        .await
    }

    /// A compaction with every option (kind, preserved tail, policy overrides, hook context,
    /// `include_content`).
    pub async fn compact_with(&self, req: pb::CompactRequest) -> Result<Compaction, Error> {
        Ok(self.client.compact(self.scoped(req)).await?.into())
    }

    /// What [`Session::compact`] would return, without changing any state.
    pub async fn preview_compact(&self) -> Result<Compaction, Error> {
        self.preview_compact_with(pb::PreviewCompactRequest::default())
            .await
    }

    pub async fn preview_compact_with(
        &self,
        req: pb::PreviewCompactRequest,
    ) -> Result<Compaction, Error> {
        Ok(self.client.preview_compact(self.scoped(req)).await?.into())
    }

    /// Closes what this handle stands for: the session on the daemon (every agent's state goes)
    /// for the main thread, only this agent ([`Session::end_agent`]) for a sub-agent.
    pub async fn close(self) -> Result<(), Error> {
        if !self.agent_id.is_empty() {
            self.end_agent().await?;
            return Ok(());
        }
        self.client
            .close_session(pb::CloseSessionRequest {
                session_id: self.session_id,
            })
            .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn att(kind: pb::AttachmentKind, placement: pb::Placement, blocks: &[&str]) -> pb::Attachment {
        pb::Attachment {
            kind: kind as i32,
            placement: placement as i32,
            blocks: blocks.iter().map(|b| (*b).to_owned()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn join_splits_by_placement() {
        use pb::{AttachmentKind as K, Placement as P};
        let atts = [
            att(K::File, P::User, &["call a", "result a"]),
            att(K::TaskStatus, P::System, &["task"]),
            att(K::File, P::User, &["call b", "result b", "note b"]),
            // Anything not PLACEMENT_SYSTEM is user-placed.
            att(K::PlanMode, P::Unspecified, &["plan mode"]),
            att(K::InvokedSkills, P::System, &["skills\n\nbody"]),
        ];
        let inj = join(&atts);
        assert_eq!(
            inj.user_blocks,
            [
                "call a",
                "result a",
                "call b",
                "result b",
                "note b",
                "plan mode"
            ]
        );
        assert_eq!(inj.system_text, "task\n\nskills\n\nbody");
        assert!(!inj.is_empty());
        assert!(atts[1].is_system() && !atts[0].is_system() && !atts[3].is_system());

        assert_eq!(
            join_rendered_text(&atts),
            "call a\nresult a\ntask\ncall b\nresult b\nnote b\nplan mode\nskills\n\nbody"
        );
        assert_eq!(atts[2].rendered_text(), "call b\nresult b\nnote b");

        let c = Compaction::from(pb::CompactResponse {
            attachments: atts.to_vec(),
            ..Default::default()
        });
        assert_eq!(c.injection(), inj);
        assert_eq!(c.rendered_text, join_rendered_text(&atts));
        assert_eq!(c.rendered().collect::<Vec<_>>().join("\n"), c.rendered_text);
        assert_eq!(c.blocks().collect::<Vec<_>>().join("\n"), c.rendered_text);
        assert_eq!(c.blocks().count(), 8);
    }

    #[test]
    fn join_of_nothing_is_empty() {
        let inj = join(&[]);
        assert!(inj.is_empty());
        assert_eq!(inj, Injection::default());
        assert_eq!(join_rendered_text(&[]), "");
        // Only user-placed: no system text; only system-placed: no user blocks.
        let user = [att(pb::AttachmentKind::File, pb::Placement::User, &["x"])];
        assert_eq!(join(&user).system_text, "");
        let sys = [att(
            pb::AttachmentKind::TaskStatus,
            pb::Placement::System,
            &["s"],
        )];
        assert_eq!(
            join(&sys),
            Injection {
                user_blocks: vec![],
                system_text: "s".into()
            }
        );
    }
}
