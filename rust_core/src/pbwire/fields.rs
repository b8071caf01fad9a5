//! Generated from proto/postcompact/v1/postcompact.proto by `make protos`
//! (scripts/gen_protos.py, `gen_rust_core`); do not edit. Every message as a module
//! of its fields' numbers, typed by how each is keyed on the wire; every enum as a
//! module of its values, the enum's prefix left out.

/// `Profile`'s values.
pub mod profile {
    pub const UNSPECIFIED: i32 = 0;
    pub const DEFAULT: i32 = 1;
    pub const CLAUDE_CODE: i32 = 2;
    pub const CLAUDE_CODE_2_1_88: i32 = 3;
}

/// `Placement`'s values.
pub mod placement {
    pub const UNSPECIFIED: i32 = 0;
    pub const USER: i32 = 1;
    pub const SYSTEM: i32 = 2;
}

/// `OversizePolicy`'s values.
pub mod oversize_policy {
    pub const UNSPECIFIED: i32 = 0;
    pub const TRUNCATE_HEAD: i32 = 1;
    pub const REFERENCE: i32 = 2;
    pub const SKIP: i32 = 3;
}

/// `FileRanking`'s values.
pub mod file_ranking {
    pub const UNSPECIFIED: i32 = 0;
    pub const RECENCY: i32 = 1;
    pub const EDITS_FIRST: i32 = 2;
    pub const MTIME: i32 = 3;
    pub const CLAUDE_CODE_FIRST: i32 = 4;
    pub const SCORED: i32 = 5;
}

/// `HarnessRule`'s values.
pub mod harness_rule {
    pub const UNSPECIFIED: i32 = 0;
    pub const NONE: i32 = 1;
    pub const CLAUDE_CODE: i32 = 2;
}

/// `TokenCounter`'s values.
pub mod token_counter {
    pub const UNSPECIFIED: i32 = 0;
    pub const ROUGH: i32 = 1;
    pub const EXACT: i32 = 2;
}

/// `PermissionMode`'s values.
pub mod permission_mode {
    pub const UNSPECIFIED: i32 = 0;
    pub const DEFAULT: i32 = 1;
    pub const PLAN: i32 = 2;
    pub const ACCEPT_EDITS: i32 = 3;
    pub const BYPASS_PERMISSIONS: i32 = 4;
}

/// `AgentMode`'s values.
pub mod agent_mode {
    pub const UNSPECIFIED: i32 = 0;
    pub const FRESH: i32 = 1;
    pub const CLONE_PARENT: i32 = 2;
}

/// `WriteCheck`'s values.
pub mod write_check {
    pub const UNSPECIFIED: i32 = 0;
    pub const ALLOWED: i32 = 1;
    pub const NOT_READ: i32 = 2;
    pub const MODIFIED: i32 = 3;
}

/// `TaskStatus`'s values.
pub mod task_status {
    pub const UNSPECIFIED: i32 = 0;
    pub const PENDING: i32 = 1;
    pub const RUNNING: i32 = 2;
    pub const COMPLETED: i32 = 3;
    pub const FAILED: i32 = 4;
    pub const KILLED: i32 = 5;
}

/// `CompactKind`'s values.
pub mod compact_kind {
    pub const UNSPECIFIED: i32 = 0;
    pub const FULL: i32 = 1;
    pub const PARTIAL: i32 = 2;
}

/// `Role`'s values.
pub mod role {
    pub const UNSPECIFIED: i32 = 0;
    pub const USER: i32 = 1;
    pub const ASSISTANT: i32 = 2;
}

/// `AttachmentKind`'s values.
pub mod attachment_kind {
    pub const UNSPECIFIED: i32 = 0;
    pub const FILE: i32 = 1;
    pub const COMPACT_FILE_REFERENCE: i32 = 2;
    pub const TASK_STATUS: i32 = 3;
    pub const PLAN_FILE_REFERENCE: i32 = 4;
    pub const PLAN_MODE: i32 = 5;
    pub const INVOKED_SKILLS: i32 = 6;
    pub const DEFERRED_TOOLS_DELTA: i32 = 7;
    pub const AGENT_LISTING_DELTA: i32 = 8;
    pub const MCP_INSTRUCTIONS_DELTA: i32 = 9;
    pub const HOOK_ADDITIONAL_CONTEXT: i32 = 10;
    pub const SKILL_LISTING: i32 = 11;
    pub const LEFT_OUT_FILES: i32 = 12;
}

/// `Subject`'s values.
pub mod subject {
    pub const UNSPECIFIED: i32 = 0;
    pub const FILE: i32 = 1;
    pub const SKILL: i32 = 2;
    pub const HOOK: i32 = 3;
}

/// `Outcome`'s values.
pub mod outcome {
    pub const UNSPECIFIED: i32 = 0;
    pub const RESTORED: i32 = 1;
    pub const TRUNCATED: i32 = 2;
    pub const REFERENCED: i32 = 3;
    pub const EXCLUDED_PLAN_FILE: i32 = 4;
    pub const EXCLUDED_MEMORY_FILE: i32 = 5;
    pub const EXCLUDED_VISIBLE_IN_TAIL: i32 = 6;
    pub const DROPPED_BY_RANK: i32 = 7;
    pub const DROPPED_BY_BUDGET: i32 = 8;
    pub const UNREADABLE: i32 = 9;
    pub const DENIED: i32 = 10;
    pub const BINARY: i32 = 11;
    pub const HOOK_OK: i32 = 12;
    pub const HOOK_FAILED: i32 = 13;
    pub const HOOK_TIMED_OUT: i32 = 14;
    pub const EXCLUDED_ARTIFACT: i32 = 15;
    pub const DROPPED_OVER_CAP: i32 = 16;
    pub const RESTORED_BY_HARNESS: i32 = 17;
}

/// `RestorePolicy`'s fields.
pub mod restore_policy {
    use crate::pbwire::{Len, Varint};
    pub const MAX_FILES: Varint = Varint(1);
    pub const FILE_TOKEN_BUDGET: Varint = Varint(2);
    pub const MAX_TOKENS_PER_FILE: Varint = Varint(3);
    pub const MAX_TOKENS_PER_SKILL: Varint = Varint(4);
    pub const SKILLS_TOKEN_BUDGET: Varint = Varint(5);
    pub const OVERSIZE: Varint = Varint(6);
    pub const SKILL_TRUNCATION_MARKER: Len = Len(7);
    pub const FILE_TRUNCATION_MARKER: Len = Len(8);
    pub const COUNTER: Varint = Varint(9);
    pub const ENCODING: Len = Len(10);
    pub const MAX_FILE_SIZE_BYTES: Varint = Varint(11);
    pub const MALWARE_REMINDER: Varint = Varint(12);
    pub const CARRY_READ_STATE: Varint = Varint(13);
    pub const MAX_READ_TOKENS: Varint = Varint(14);
    pub const RESTORE_SEEN: Varint = Varint(15);
    pub const RANKING: Varint = Varint(16);
    pub const LEFT_OUT_INDEX: Varint = Varint(17);
    pub const COMPLEMENT: Varint = Varint(18);
    pub const MATCH_BUDGET: Varint = Varint(19);
}

/// `GetServerInfoRequest`'s fields.
pub mod get_server_info_request {}

/// `GetServerInfoResponse`'s fields.
pub mod get_server_info_response {
    use crate::pbwire::{Len, Varint};
    pub const VERSION: Len = Len(1);
    pub const API_VERSION: Len = Len(2);
    pub const CAPABILITIES: Len = Len(3);
    pub const PID: Varint = Varint(4);
    pub const SOCKET_PATH: Len = Len(5);
    pub const TCP_PORT: Varint = Varint(6);
    pub const STARTED_AT_MS: Varint = Varint(7);
    pub const TCP_ADDRESS: Len = Len(8);
}

/// `GetStatsRequest`'s fields.
pub mod get_stats_request {}

/// `GetStatsResponse`'s fields.
pub mod get_stats_response {
    use crate::pbwire::Varint;
    pub const SESSIONS: Varint = Varint(1);
    pub const AGENTS: Varint = Varint(2);
    pub const CACHED_ENTRIES: Varint = Varint(3);
    pub const CACHED_BYTES: Varint = Varint(4);
    pub const COMPACTIONS: Varint = Varint(5);
    pub const EVICTIONS: Varint = Varint(6);
    pub const UPTIME_MS: Varint = Varint(7);
    pub const CONTENT_BYTES: Varint = Varint(9);
    pub const MAX_CONTENT_BYTES: Varint = Varint(10);
    pub const CALLS_IN_FLIGHT: Varint = Varint(11);
    pub const ANSWER_BYTES_IN_FLIGHT: Varint = Varint(12);
    pub const SESSIONS_IN_MEMORY: Varint = Varint(13);
    pub const SESSIONS_READ: Varint = Varint(14);
    pub const SESSIONS_EVICTED: Varint = Varint(15);
}

/// `MemoryFiles`'s fields.
pub mod memory_files {
    use crate::pbwire::Len;
    pub const FILE_NAMES: Len = Len(1);
    pub const PATHS: Len = Len(2);
}

/// `OpenSessionRequest`'s fields.
pub mod open_session_request {
    use crate::pbwire::{Len, Varint};
    pub const SESSION_ID: Len = Len(1);
    pub const CWD: Len = Len(2);
    pub const ROOTS: Len = Len(3);
    pub const MEMORY: Len = Len(4);
    pub const PLANS_DIRECTORY: Len = Len(5);
    pub const POLICY: Len = Len(6);
    pub const PROFILE: Varint = Varint(7);
    pub const HOME: Len = Len(8);
    pub const TEMPLATES: Len = Len(9);
}

/// `TemplateSpec`'s fields.
pub mod template_spec {
    use crate::pbwire::Len;
    pub const PRESET: Len = Len(1);
    pub const STRINGS: Len = Len(2);
}

/// `OpenSessionResponse`'s fields.
pub mod open_session_response {
    use crate::pbwire::{Len, Varint};
    pub const SESSION_ID: Len = Len(1);
    pub const RESUMED: Varint = Varint(2);
    pub const SESSION: Len = Len(3);
}

/// `CloseSessionRequest`'s fields.
pub mod close_session_request {
    use crate::pbwire::Len;
    pub const SESSION_ID: Len = Len(1);
}

/// `CloseSessionResponse`'s fields.
pub mod close_session_response {}

/// `ListSessionsRequest`'s fields.
pub mod list_sessions_request {
    use crate::pbwire::{Len, Varint};
    pub const PAGE_SIZE: Varint = Varint(1);
    pub const PAGE_TOKEN: Len = Len(2);
}

/// `ListSessionsResponse`'s fields.
pub mod list_sessions_response {
    use crate::pbwire::{Len, Varint};
    pub const SESSIONS: Len = Len(1);
    pub const NEXT_PAGE_TOKEN: Len = Len(2);
    pub const TOTAL_SESSIONS: Varint = Varint(3);
}

/// `SessionInfo`'s fields.
pub mod session_info {
    use crate::pbwire::{Len, Varint};
    pub const SESSION_ID: Len = Len(1);
    pub const CWD: Len = Len(2);
    pub const ROOTS: Len = Len(3);
    pub const AGENT_IDS: Len = Len(4);
    pub const CACHED_ENTRIES: Varint = Varint(5);
    pub const CACHED_BYTES: Varint = Varint(6);
    pub const COMPACTIONS: Varint = Varint(7);
    pub const CREATED_AT_MS: Varint = Varint(8);
    pub const LAST_ACTIVE_MS: Varint = Varint(9);
    pub const PROFILE: Varint = Varint(10);
    pub const PARTIAL: Varint = Varint(11);
}

/// `StartAgentRequest`'s fields.
pub mod start_agent_request {
    use crate::pbwire::{Len, Varint};
    pub const SESSION_ID: Len = Len(1);
    pub const AGENT_ID: Len = Len(2);
    pub const PARENT_AGENT_ID: Len = Len(3);
    pub const MODE: Varint = Varint(4);
}

/// `StartAgentResponse`'s fields.
pub mod start_agent_response {
    use crate::pbwire::{Len, Varint};
    pub const AGENT_ID: Len = Len(1);
    pub const CACHED_ENTRIES: Varint = Varint(2);
}

/// `EndAgentRequest`'s fields.
pub mod end_agent_request {
    use crate::pbwire::Len;
    pub const SESSION_ID: Len = Len(1);
    pub const AGENT_ID: Len = Len(2);
}

/// `EndAgentResponse`'s fields.
pub mod end_agent_response {
    use crate::pbwire::Varint;
    pub const CACHED_ENTRIES: Varint = Varint(1);
    pub const AGENTS: Varint = Varint(2);
}

/// `MergeFileStateRequest`'s fields.
pub mod merge_file_state_request {
    use crate::pbwire::Len;
    pub const SESSION_ID: Len = Len(1);
    pub const FROM_AGENT_ID: Len = Len(2);
    pub const INTO_AGENT_ID: Len = Len(3);
}

/// `MergeFileStateResponse`'s fields.
pub mod merge_file_state_response {
    use crate::pbwire::Varint;
    pub const MERGED: Varint = Varint(1);
    pub const KEPT: Varint = Varint(2);
}

/// `ReadFileRequest`'s fields.
pub mod read_file_request {
    use crate::pbwire::{Len, Varint};
    pub const SESSION_ID: Len = Len(1);
    pub const AGENT_ID: Len = Len(2);
    pub const PATH: Len = Len(3);
    pub const OFFSET: Varint = Varint(4);
    pub const LIMIT: Varint = Varint(5);
}

/// `ReadFileResponse`'s fields.
pub mod read_file_response {
    use crate::pbwire::{Len, Varint};
    pub const PATH: Len = Len(1);
    pub const UNCHANGED: Varint = Varint(2);
    pub const TEXT: Len = Len(3);
    pub const CONTENT: Len = Len(4);
    pub const TIMESTAMP_MS: Varint = Varint(5);
    pub const START_LINE: Varint = Varint(6);
    pub const NUM_LINES: Varint = Varint(7);
    pub const TOTAL_LINES: Varint = Varint(8);
    pub const TOKENS: Varint = Varint(9);
    pub const PARTIAL: Varint = Varint(10);
}

/// `RecordReadRequest`'s fields.
pub mod record_read_request {
    use crate::pbwire::{Len, Varint};
    pub const SESSION_ID: Len = Len(1);
    pub const AGENT_ID: Len = Len(2);
    pub const PATH: Len = Len(3);
    pub const CONTENT: Len = Len(4);
    pub const TIMESTAMP_MS: Varint = Varint(5);
    pub const OFFSET: Varint = Varint(6);
    pub const LIMIT: Varint = Varint(7);
    pub const PARTIAL_VIEW: Varint = Varint(8);
    pub const NESTED_MEMORY: Varint = Varint(9);
}

/// `RecordReadResponse`'s fields.
pub mod record_read_response {
    use crate::pbwire::Len;
    pub const PATH: Len = Len(1);
}

/// `RecordWriteRequest`'s fields.
pub mod record_write_request {
    use crate::pbwire::{Len, Varint};
    pub const SESSION_ID: Len = Len(1);
    pub const AGENT_ID: Len = Len(2);
    pub const PATH: Len = Len(3);
    pub const CONTENT: Len = Len(4);
    pub const TIMESTAMP_MS: Varint = Varint(5);
    pub const IF_ENTRY_TIMESTAMP_MS: Varint = Varint(6);
    pub const CHANGED_LINES: Len = Len(7);
}

/// `LineRange`'s fields.
pub mod line_range {
    use crate::pbwire::Varint;
    pub const FIRST: Varint = Varint(1);
    pub const LAST: Varint = Varint(2);
}

/// `ChangedLines`'s fields.
pub mod changed_lines {
    use crate::pbwire::Len;
    pub const RANGES: Len = Len(1);
}

/// `RecordWriteResponse`'s fields.
pub mod record_write_response {
    use crate::pbwire::Len;
    pub const PATH: Len = Len(1);
}

/// `CheckWriteRequest`'s fields.
pub mod check_write_request {
    use crate::pbwire::Len;
    pub const SESSION_ID: Len = Len(1);
    pub const AGENT_ID: Len = Len(2);
    pub const PATH: Len = Len(3);
}

/// `CheckWriteResponse`'s fields.
pub mod check_write_response {
    use crate::pbwire::{Len, Varint};
    pub const RESULT: Varint = Varint(1);
    pub const MESSAGE: Len = Len(2);
    pub const ERROR_CODE: Varint = Varint(3);
    pub const PATH: Len = Len(4);
    pub const ENTRY_TIMESTAMP_MS: Varint = Varint(5);
}

/// `CheckStaleRequest`'s fields.
pub mod check_stale_request {
    use crate::pbwire::{Len, Varint};
    pub const SESSION_ID: Len = Len(1);
    pub const AGENT_ID: Len = Len(2);
    pub const COMMAND: Len = Len(3);
    pub const STARTED_AT_MS: Varint = Varint(4);
}

/// `CheckStaleResponse`'s fields.
pub mod check_stale_response {
    use crate::pbwire::Len;
    pub const STALE_PATHS: Len = Len(1);
    pub const HINT: Len = Len(2);
}

/// `RecordSkillRequest`'s fields.
pub mod record_skill_request {
    use crate::pbwire::{Len, Varint};
    pub const SESSION_ID: Len = Len(1);
    pub const AGENT_ID: Len = Len(2);
    pub const NAME: Len = Len(3);
    pub const PATH: Len = Len(4);
    pub const CONTENT: Len = Len(5);
    pub const INVOKED_AT_MS: Varint = Varint(6);
}

/// `RecordSkillResponse`'s fields.
pub mod record_skill_response {
    use crate::pbwire::Varint;
    pub const SKILLS: Varint = Varint(1);
}

/// `SetPlanRequest`'s fields.
pub mod set_plan_request {
    use crate::pbwire::Len;
    pub const SESSION_ID: Len = Len(1);
    pub const AGENT_ID: Len = Len(2);
    pub const PLAN_FILE_PATH: Len = Len(3);
}

/// `SetPlanResponse`'s fields.
pub mod set_plan_response {
    use crate::pbwire::Len;
    pub const PLAN_FILE_PATH: Len = Len(1);
}

/// `SetModeRequest`'s fields.
pub mod set_mode_request {
    use crate::pbwire::{Len, Varint};
    pub const SESSION_ID: Len = Len(1);
    pub const AGENT_ID: Len = Len(2);
    pub const MODE: Varint = Varint(3);
}

/// `SetModeResponse`'s fields.
pub mod set_mode_response {}

/// `Task`'s fields.
pub mod task {
    use crate::pbwire::{Len, Varint};
    pub const TASK_ID: Len = Len(1);
    pub const TASK_TYPE: Len = Len(2);
    pub const DESCRIPTION: Len = Len(3);
    pub const STATUS: Varint = Varint(4);
    pub const PROGRESS_SUMMARY: Len = Len(5);
    pub const ERROR: Len = Len(6);
    pub const RETRIEVED: Varint = Varint(7);
    pub const OUTPUT_FILE_PATH: Len = Len(8);
    pub const AGENT_ID: Len = Len(9);
    pub const COMMAND: Len = Len(10);
    pub const MONITOR: Varint = Varint(11);
}

/// `UpsertTaskRequest`'s fields.
pub mod upsert_task_request {
    use crate::pbwire::Len;
    pub const SESSION_ID: Len = Len(1);
    pub const TASK: Len = Len(2);
}

/// `UpsertTaskResponse`'s fields.
pub mod upsert_task_response {}

/// `DeferredTools`'s fields.
pub mod deferred_tools {
    use crate::pbwire::Len;
    pub const NAMES: Len = Len(1);
}

/// `AgentType`'s fields.
pub mod agent_type {
    use crate::pbwire::Len;
    pub const AGENT_TYPE: Len = Len(1);
    pub const WHEN_TO_USE: Len = Len(2);
    pub const TOOLS: Len = Len(3);
}

/// `AgentTypes`'s fields.
pub mod agent_types {
    use crate::pbwire::{Len, Varint};
    pub const AGENT_TYPES: Len = Len(1);
    pub const SHOW_CONCURRENCY_NOTE: Varint = Varint(2);
}

/// `McpServer`'s fields.
pub mod mcp_server {
    use crate::pbwire::Len;
    pub const NAME: Len = Len(1);
    pub const INSTRUCTIONS: Len = Len(2);
}

/// `McpServers`'s fields.
pub mod mcp_servers {
    use crate::pbwire::Len;
    pub const SERVERS: Len = Len(1);
}

/// `SkillListingEntry`'s fields.
pub mod skill_listing_entry {
    use crate::pbwire::Len;
    pub const NAME: Len = Len(1);
    pub const DESCRIPTION: Len = Len(2);
}

/// `SkillListing`'s fields.
pub mod skill_listing {
    use crate::pbwire::Len;
    pub const SKILLS: Len = Len(1);
}

/// `SetCatalogRequest`'s fields.
pub mod set_catalog_request {
    use crate::pbwire::Len;
    pub const SESSION_ID: Len = Len(1);
    pub const AGENT_ID: Len = Len(2);
    pub const DEFERRED_TOOLS: Len = Len(3);
    pub const AGENT_TYPES: Len = Len(4);
    pub const MCP_SERVERS: Len = Len(5);
    pub const SKILL_LISTING: Len = Len(6);
}

/// `SetCatalogResponse`'s fields.
pub mod set_catalog_response {
    use crate::pbwire::Len;
    pub const ATTACHMENTS: Len = Len(1);
}

/// `ToolUse`'s fields.
pub mod tool_use {
    use crate::pbwire::Len;
    pub const ID: Len = Len(1);
    pub const NAME: Len = Len(2);
    pub const INPUT_JSON: Len = Len(3);
}

/// `ToolResult`'s fields.
pub mod tool_result {
    use crate::pbwire::{Len, Varint};
    pub const TOOL_USE_ID: Len = Len(1);
    pub const CONTENT: Len = Len(2);
    pub const IS_ERROR: Varint = Varint(3);
}

/// `ContentBlock`'s fields.
pub mod content_block {
    use crate::pbwire::Len;
    pub const TEXT: Len = Len(1);
    pub const TOOL_USE: Len = Len(2);
    pub const TOOL_RESULT: Len = Len(3);
    pub const ATTACHMENT: Len = Len(4);
}

/// `ConversationMessage`'s fields.
pub mod conversation_message {
    use crate::pbwire::{Len, Varint};
    pub const ROLE: Varint = Varint(1);
    pub const CONTENT: Len = Len(2);
}

/// `CompactRequest`'s fields.
pub mod compact_request {
    use crate::pbwire::{Len, Varint};
    pub const SESSION_ID: Len = Len(1);
    pub const AGENT_ID: Len = Len(2);
    pub const KIND: Varint = Varint(3);
    pub const PRESERVED_MESSAGES: Len = Len(4);
    pub const POLICY: Len = Len(5);
    pub const ADDITIONAL_CONTEXT: Len = Len(6);
    pub const SKIP_HOOKS: Varint = Varint(7);
    pub const INCLUDE_CONTENT: Varint = Varint(8);
}

/// `CompactResponse`'s fields.
pub mod compact_response {
    use crate::pbwire::{Len, Varint};
    pub const ATTACHMENTS: Len = Len(1);
    pub const DECISIONS: Len = Len(2);
    pub const TOTALS: Len = Len(3);
    pub const COMPACTION: Varint = Varint(5);
}

/// `PreviewCompactRequest`'s fields.
pub mod preview_compact_request {
    use crate::pbwire::{Len, Varint};
    pub const SESSION_ID: Len = Len(1);
    pub const AGENT_ID: Len = Len(2);
    pub const KIND: Varint = Varint(3);
    pub const PRESERVED_MESSAGES: Len = Len(4);
    pub const POLICY: Len = Len(5);
    pub const ADDITIONAL_CONTEXT: Len = Len(6);
    pub const SKIP_HOOKS: Varint = Varint(7);
    pub const INCLUDE_CONTENT: Varint = Varint(8);
}

/// `PreviewCompactResponse`'s fields.
pub mod preview_compact_response {
    use crate::pbwire::{Len, Varint};
    pub const ATTACHMENTS: Len = Len(1);
    pub const DECISIONS: Len = Len(2);
    pub const TOTALS: Len = Len(3);
    pub const COMPACTION: Varint = Varint(5);
}

/// `FileAttachment`'s fields.
pub mod file_attachment {
    use crate::pbwire::{Len, Varint};
    pub const PATH: Len = Len(1);
    pub const DISPLAY_PATH: Len = Len(2);
    pub const CONTENT: Len = Len(3);
    pub const TRUNCATED: Varint = Varint(4);
    pub const TOTAL_LINES: Varint = Varint(5);
    pub const NUM_LINES: Varint = Varint(6);
    pub const START_LINE: Varint = Varint(7);
}

/// `CompactFileReference`'s fields.
pub mod compact_file_reference {
    use crate::pbwire::Len;
    pub const PATH: Len = Len(1);
    pub const DISPLAY_PATH: Len = Len(2);
}

/// `LeftOutFiles`'s fields.
pub mod left_out_files {
    use crate::pbwire::Len;
    pub const FILES: Len = Len(1);
}

/// `LeftOutFile`'s fields.
pub mod left_out_file {
    use crate::pbwire::{Len, Varint};
    pub const PATH: Len = Len(1);
    pub const DISPLAY_PATH: Len = Len(2);
    pub const FIRST_LINE: Varint = Varint(3);
    pub const LAST_LINE: Varint = Varint(4);
    pub const EDITED: Varint = Varint(5);
}

/// `TaskStatusAttachment`'s fields.
pub mod task_status_attachment {
    use crate::pbwire::{Len, Varint};
    pub const TASK_ID: Len = Len(1);
    pub const TASK_TYPE: Len = Len(2);
    pub const DESCRIPTION: Len = Len(3);
    pub const STATUS: Varint = Varint(4);
    pub const DELTA_SUMMARY: Len = Len(5);
    pub const OUTPUT_FILE_PATH: Len = Len(6);
}

/// `PlanFileReference`'s fields.
pub mod plan_file_reference {
    use crate::pbwire::Len;
    pub const PLAN_FILE_PATH: Len = Len(1);
    pub const PLAN_CONTENT: Len = Len(2);
}

/// `PlanModeAttachment`'s fields.
pub mod plan_mode_attachment {
    use crate::pbwire::{Len, Varint};
    pub const PLAN_FILE_PATH: Len = Len(1);
    pub const PLAN_EXISTS: Varint = Varint(2);
    pub const IS_SUB_AGENT: Varint = Varint(3);
}

/// `InvokedSkill`'s fields.
pub mod invoked_skill {
    use crate::pbwire::{Len, Varint};
    pub const NAME: Len = Len(1);
    pub const PATH: Len = Len(2);
    pub const CONTENT: Len = Len(3);
    pub const TRUNCATED: Varint = Varint(4);
}

/// `InvokedSkills`'s fields.
pub mod invoked_skills {
    use crate::pbwire::Len;
    pub const SKILLS: Len = Len(1);
}

/// `DeferredToolsDelta`'s fields.
pub mod deferred_tools_delta {
    use crate::pbwire::Len;
    pub const ADDED_NAMES: Len = Len(1);
    pub const ADDED_LINES: Len = Len(2);
    pub const REMOVED_NAMES: Len = Len(3);
}

/// `AgentListingDelta`'s fields.
pub mod agent_listing_delta {
    use crate::pbwire::{Len, Varint};
    pub const ADDED_TYPES: Len = Len(1);
    pub const ADDED_LINES: Len = Len(2);
    pub const REMOVED_TYPES: Len = Len(3);
    pub const IS_INITIAL: Varint = Varint(4);
    pub const SHOW_CONCURRENCY_NOTE: Varint = Varint(5);
}

/// `McpInstructionsDelta`'s fields.
pub mod mcp_instructions_delta {
    use crate::pbwire::Len;
    pub const ADDED_NAMES: Len = Len(1);
    pub const ADDED_BLOCKS: Len = Len(2);
    pub const REMOVED_NAMES: Len = Len(3);
}

/// `HookAdditionalContext`'s fields.
pub mod hook_additional_context {
    use crate::pbwire::Len;
    pub const CONTENT: Len = Len(1);
}

/// `SkillListingAttachment`'s fields.
pub mod skill_listing_attachment {
    use crate::pbwire::Len;
    pub const SKILLS: Len = Len(1);
}

/// `Attachment`'s fields.
pub mod attachment {
    use crate::pbwire::{Len, Varint};
    pub const KIND: Varint = Varint(1);
    pub const TOKENS: Varint = Varint(3);
    pub const PLACEMENT: Varint = Varint(4);
    pub const BLOCKS: Len = Len(5);
    pub const FILE: Len = Len(10);
    pub const FILE_REFERENCE: Len = Len(11);
    pub const TASK_STATUS: Len = Len(12);
    pub const PLAN_FILE_REFERENCE: Len = Len(13);
    pub const PLAN_MODE: Len = Len(14);
    pub const INVOKED_SKILLS: Len = Len(15);
    pub const DEFERRED_TOOLS_DELTA: Len = Len(16);
    pub const AGENT_LISTING_DELTA: Len = Len(17);
    pub const MCP_INSTRUCTIONS_DELTA: Len = Len(18);
    pub const HOOK_ADDITIONAL_CONTEXT: Len = Len(19);
    pub const SKILL_LISTING: Len = Len(20);
    pub const LEFT_OUT_FILES: Len = Len(21);
}

/// `Decision`'s fields.
pub mod decision {
    use crate::pbwire::{Len, Varint};
    pub const SUBJECT: Varint = Varint(1);
    pub const NAME: Len = Len(2);
    pub const OUTCOME: Varint = Varint(3);
    pub const TOKENS: Varint = Varint(4);
    pub const RANK: Varint = Varint(5);
    pub const DETAIL: Len = Len(6);
    pub const CONTENT_TOKENS: Varint = Varint(7);
}

/// `CategoryTotals`'s fields.
pub mod category_totals {
    use crate::pbwire::{Len, Varint};
    pub const CATEGORY: Len = Len(1);
    pub const ATTACHMENTS: Varint = Varint(2);
    pub const DROPPED: Varint = Varint(3);
    pub const TOKENS: Varint = Varint(4);
}

/// `EstimateTokensRequest`'s fields.
pub mod estimate_tokens_request {
    use crate::pbwire::Len;
    pub const TEXT: Len = Len(1);
    pub const EXT: Len = Len(2);
}

/// `EstimateTokensResponse`'s fields.
pub mod estimate_tokens_response {
    use crate::pbwire::Varint;
    pub const TOKENS: Varint = Varint(1);
}

/// `EstimateTokensBatchRequest`'s fields.
pub mod estimate_tokens_batch_request {
    use crate::pbwire::Len;
    pub const TEXTS: Len = Len(1);
    pub const EXT: Len = Len(2);
}

/// `EstimateTokensBatchResponse`'s fields.
pub mod estimate_tokens_batch_response {
    use crate::pbwire::Packed;
    pub const TOKENS: Packed = Packed(1);
}

/// `CountTokensRequest`'s fields.
pub mod count_tokens_request {
    use crate::pbwire::Len;
    pub const TEXT: Len = Len(1);
    pub const ENCODING: Len = Len(2);
}

/// `CountTokensResponse`'s fields.
pub mod count_tokens_response {
    use crate::pbwire::Varint;
    pub const TOKENS: Varint = Varint(1);
}

/// `CountTokensBatchRequest`'s fields.
pub mod count_tokens_batch_request {
    use crate::pbwire::Len;
    pub const TEXTS: Len = Len(1);
    pub const ENCODING: Len = Len(2);
}

/// `CountTokensBatchResponse`'s fields.
pub mod count_tokens_batch_response {
    use crate::pbwire::Packed;
    pub const TOKENS: Packed = Packed(1);
}

/// `TruncateTokensRequest`'s fields.
pub mod truncate_tokens_request {
    use crate::pbwire::{Len, Varint};
    pub const TEXT: Len = Len(1);
    pub const MAX_TOKENS: Varint = Varint(2);
    pub const MARKER: Len = Len(3);
    pub const COUNTER: Varint = Varint(4);
    pub const ENCODING: Len = Len(5);
}

/// `TruncateTokensResponse`'s fields.
pub mod truncate_tokens_response {
    use crate::pbwire::{Len, Varint};
    pub const TEXT: Len = Len(1);
    pub const TRUNCATED: Varint = Varint(2);
    pub const TOKENS: Varint = Varint(3);
}

/// `TruncateTokensBatchRequest`'s fields.
pub mod truncate_tokens_batch_request {
    use crate::pbwire::{Len, Varint};
    pub const TEXTS: Len = Len(1);
    pub const MAX_TOKENS: Varint = Varint(2);
    pub const MARKER: Len = Len(3);
    pub const COUNTER: Varint = Varint(4);
    pub const ENCODING: Len = Len(5);
}

/// `TruncateTokensBatchResponse`'s fields.
pub mod truncate_tokens_batch_response {
    use crate::pbwire::Len;
    pub const RESULTS: Len = Len(1);
}

/// `PathMapping`'s fields.
pub mod path_mapping {
    use crate::pbwire::Len;
    pub const SOURCE: Len = Len(1);
    pub const TARGET: Len = Len(2);
}

/// `ImportTranscriptRequest`'s fields.
pub mod import_transcript_request {
    use crate::pbwire::{Len, Varint};
    pub const TRANSCRIPT: Len = Len(1);
    pub const SESSION_ID: Len = Len(2);
    pub const CWD: Len = Len(3);
    pub const PATH_MAP: Len = Len(4);
    pub const PROFILE: Varint = Varint(5);
    pub const POLICY: Len = Len(6);
    pub const HOME: Len = Len(7);
    pub const REPLACE: Varint = Varint(8);
    pub const FILE_MTIMES: Varint = Varint(9);
}

/// `TranscriptBoundary`'s fields.
pub mod transcript_boundary {
    use crate::pbwire::{Len, Varint};
    pub const UUID: Len = Len(1);
    pub const LINE: Varint = Varint(2);
    pub const TRIGGER: Len = Len(3);
    pub const TIMESTAMP_MS: Varint = Varint(4);
    pub const PRESERVED_MESSAGES: Varint = Varint(5);
    pub const HAS_RECORDED_RESTORE: Varint = Varint(6);
    pub const RECORDED: Len = Len(7);
    pub const RESTORED: Len = Len(8);
}

/// `RestoredItem`'s fields.
pub mod restored_item {
    use crate::pbwire::Len;
    pub const KIND: Len = Len(1);
    pub const PATH: Len = Len(2);
}

/// `ImportTranscriptResponse`'s fields.
pub mod import_transcript_response {
    use crate::pbwire::{Len, Varint};
    pub const SESSION_ID: Len = Len(1);
    pub const SESSION: Len = Len(2);
    pub const RECORDS: Varint = Varint(3);
    pub const EVENTS: Varint = Varint(4);
    pub const BOUNDARIES: Len = Len(5);
    pub const WARNINGS: Len = Len(6);
}
