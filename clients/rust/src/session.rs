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
/// injection order (each with its `rendered_text`), a decision for every candidate file, skill
/// and hook, the per-category totals and all the rendered text joined by `"\n"` (joined by the
/// client: the daemon does not send the joined copy).
///
/// The raw copies (`FileAttachment::content`, `PlanFileReference::plan_content`,
/// `InvokedSkill::content`) are empty unless the request sets `include_content`: the same text
/// is in each attachment's `rendered_text`, so by default it crosses the socket once.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Compaction {
    pub attachments: Vec<pb::Attachment>,
    pub decisions: Vec<pb::Decision>,
    pub totals: Vec<pb::CategoryTotals>,
    /// Every attachment's `rendered_text`, in order, joined by `"\n"`: the text to inject.
    pub rendered_text: String,
    /// This agent's compaction count after the call (unchanged by a preview).
    pub compaction: i64,
}

/// The text to inject: every attachment's `rendered_text`, in order, joined by `"\n"`.
pub fn join_rendered_text(attachments: &[pb::Attachment]) -> String {
    let len = attachments
        .iter()
        .map(|a| a.rendered_text.len() + 1)
        .sum::<usize>();
    let mut out = String::with_capacity(len);
    for (i, a) in attachments.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&a.rendered_text);
    }
    out
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
    /// The rendered text of each attachment, in order: what the harness injects.
    pub fn rendered(&self) -> impl Iterator<Item = &str> {
        self.attachments.iter().map(|a| a.rendered_text.as_str())
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
            offset: Some(1),
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

    /// Sets the plan file (`""` = none). Returns the normalised path.
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
    /// (`include_content`: file, plan and skill content besides `rendered_text`).
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

    /// Closes the session on the daemon (every agent's state goes).
    pub async fn close(self) -> Result<(), Error> {
        self.client
            .close_session(pb::CloseSessionRequest {
                session_id: self.session_id,
            })
            .await?;
        Ok(())
    }
}
