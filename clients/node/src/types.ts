// The API's types, generated from the proto (gen/, `make protos`), under friendly names:
// `Attachment` is a decoded response message, `AttachmentInput` the request side (bytes fields take
// a string, UTF-8, or a Uint8Array; int64 fields a number), enums are const objects of names.
export * from "../gen/index.js";
import type {
  AgentMode__Output,
  CompactKind__Output,
  FileRanking__Output,
  HarnessRule__Output,
  OversizePolicy__Output,
  PermissionMode__Output,
  Profile__Output,
  Role__Output,
  TaskStatus__Output,
  TokenCounter__Output,
} from "../gen/index.js";

/** An enum value by its full name or without its prefix: "PLAN" or "PERMISSION_MODE_PLAN". */
export type Short<E extends string, P extends string> = E | (E extends `${P}${infer R}` ? R : never);

export type PermissionModeName = Short<PermissionMode__Output, "PERMISSION_MODE_">;
export type TaskStatusName = Short<TaskStatus__Output, "TASK_STATUS_">;
export type TokenCounterName = Short<TokenCounter__Output, "TOKEN_COUNTER_">;
export type OversizePolicyName = Short<OversizePolicy__Output, "OVERSIZE_POLICY_">;
export type FileRankingName = Short<FileRanking__Output, "FILE_RANKING_">;
export type HarnessRuleName = Short<HarnessRule__Output, "HARNESS_RULE_">;
export type AgentModeName = Short<AgentMode__Output, "AGENT_MODE_">;
export type CompactKindName = Short<CompactKind__Output, "COMPACT_KIND_">;
/** A profile by its config/CLI name ("claude-code-2.1.88") or its enum name ("CLAUDE_CODE_2_1_88"). */
export type ProfileName = Short<Profile__Output, "PROFILE_"> | "default" | "claude-code" | "claude-code-2.1.88";
export type RoleName = Short<Role__Output, "ROLE_">;

/** Text for a `bytes` field: a string is sent as UTF-8. */
export type Bytes = string | Uint8Array;
