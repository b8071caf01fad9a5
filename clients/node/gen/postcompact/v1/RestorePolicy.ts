// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { OversizePolicy as _postcompact_v1_OversizePolicy, OversizePolicy__Output as _postcompact_v1_OversizePolicy__Output } from '../../postcompact/v1/OversizePolicy.js';
import type { TokenCounter as _postcompact_v1_TokenCounter, TokenCounter__Output as _postcompact_v1_TokenCounter__Output } from '../../postcompact/v1/TokenCounter.js';
import type { FileRanking as _postcompact_v1_FileRanking, FileRanking__Output as _postcompact_v1_FileRanking__Output } from '../../postcompact/v1/FileRanking.js';
import type { HarnessRule as _postcompact_v1_HarnessRule, HarnessRule__Output as _postcompact_v1_HarnessRule__Output } from '../../postcompact/v1/HarnessRule.js';
import type { Long } from '@grpc/proto-loader';

/**
 * Restoration knobs. Every field is optional: unset inherits (request → session → daemon config
 * → the profile's default). What each field may be set to and its default under each profile:
 * docs/profiles.md, "Policy fields" (the daemon's policy table, restore/policy.py).
 */
export interface RestorePolicy {
  /**
   * files restored at most, after ranking
   */
  'maxFiles'?: (number);
  /**
   * tokens of all restored files together
   */
  'fileTokenBudget'?: (number | string | Long);
  /**
   * tokens of one restored file (the per-file cap)
   */
  'maxTokensPerFile'?: (number | string | Long);
  /**
   * tokens of one restored skill
   */
  'maxTokensPerSkill'?: (number | string | Long);
  /**
   * tokens of all restored skills together
   */
  'skillsTokenBudget'?: (number | string | Long);
  /**
   * a file over the per-file cap
   */
  'oversize'?: (_postcompact_v1_OversizePolicy);
  'skillTruncationMarker'?: (string);
  /**
   * may contain {path}, {shown_lines}, {total_lines} and {next_offset}
   */
  'fileTruncationMarker'?: (string);
  'counter'?: (_postcompact_v1_TokenCounter);
  /**
   * for TOKEN_COUNTER_EXACT: o200k_base or cl100k_base
   */
  'encoding'?: (string);
  /**
   * larger files are not read whole (at most 64 MiB)
   */
  'maxFileSizeBytes'?: (number | string | Long);
  /**
   * the malware reminder after Read results, restored files
   */
  'malwareReminder'?: (boolean);
  /**
   * After a compaction, an Edit/Write check passes for a file fully read before it whose content
   * still matches disk (the harness turns it off for the legacy models that Claude Code keeps
   * strict, docs/claude-code.md §4).
   */
  'carryReadState'?: (boolean);
  /**
   * A whole ReadFile over it is refused (claude-code-2.1.88, Claude Code's message) or answered
   * with its first page, marked partial (claude-code, default). Rough tokens of the file's text,
   * counted as the file cap counts them (docs/claude-code.md §2, §4).
   */
  'maxReadTokens'?: (number | string | Long);
  /**
   * Restore each file as the lines the agent saw of it since the last compaction (from the first
   * to the last line its reads showed and its edits changed) instead of the whole file or the
   * range last read (docs/eval.md).
   */
  'restoreSeen'?: (boolean);
  'ranking'?: (_postcompact_v1_FileRanking);
  /**
   * After the restored files, one attachment naming the candidates left out (path, lines seen,
   * edited): what the agent knew, without the text.
   */
  'leftOutIndex'?: (boolean);
  /**
   * Restore only what the named harness rule leaves out: the daemon computes that rule's own
   * selection over the agent's files, leaves those files to the harness (OUTCOME_RESTORED_BY_HARNESS)
   * and restores from the rest within this policy's budgets; files only (everything else is the
   * harness's own). After the compaction the harness's files are held as restored.
   */
  'complement'?: (_postcompact_v1_HarnessRule);
  /**
   * The file budget at each compaction is what the named harness rule's own restoration would
   * cost there (the rough tokens of its file attachments and notes), in place of
   * file_token_budget: never more tokens than that rule spends (docs/eval.md). A layer that sets
   * file_token_budget and leaves this unset sets it to NONE: the budget given is the one applied.
   */
  'matchBudget'?: (_postcompact_v1_HarnessRule);
  '_maxFiles'?: "maxFiles";
  '_fileTokenBudget'?: "fileTokenBudget";
  '_maxTokensPerFile'?: "maxTokensPerFile";
  '_maxTokensPerSkill'?: "maxTokensPerSkill";
  '_skillsTokenBudget'?: "skillsTokenBudget";
  '_skillTruncationMarker'?: "skillTruncationMarker";
  '_fileTruncationMarker'?: "fileTruncationMarker";
  '_encoding'?: "encoding";
  '_maxFileSizeBytes'?: "maxFileSizeBytes";
  '_malwareReminder'?: "malwareReminder";
  '_carryReadState'?: "carryReadState";
  '_maxReadTokens'?: "maxReadTokens";
  '_restoreSeen'?: "restoreSeen";
  '_leftOutIndex'?: "leftOutIndex";
}

/**
 * Restoration knobs. Every field is optional: unset inherits (request → session → daemon config
 * → the profile's default). What each field may be set to and its default under each profile:
 * docs/profiles.md, "Policy fields" (the daemon's policy table, restore/policy.py).
 */
export interface RestorePolicy__Output {
  /**
   * files restored at most, after ranking
   */
  'maxFiles'?: (number);
  /**
   * tokens of all restored files together
   */
  'fileTokenBudget'?: (number);
  /**
   * tokens of one restored file (the per-file cap)
   */
  'maxTokensPerFile'?: (number);
  /**
   * tokens of one restored skill
   */
  'maxTokensPerSkill'?: (number);
  /**
   * tokens of all restored skills together
   */
  'skillsTokenBudget'?: (number);
  /**
   * a file over the per-file cap
   */
  'oversize': (_postcompact_v1_OversizePolicy__Output);
  'skillTruncationMarker'?: (string);
  /**
   * may contain {path}, {shown_lines}, {total_lines} and {next_offset}
   */
  'fileTruncationMarker'?: (string);
  'counter': (_postcompact_v1_TokenCounter__Output);
  /**
   * for TOKEN_COUNTER_EXACT: o200k_base or cl100k_base
   */
  'encoding'?: (string);
  /**
   * larger files are not read whole (at most 64 MiB)
   */
  'maxFileSizeBytes'?: (number);
  /**
   * the malware reminder after Read results, restored files
   */
  'malwareReminder'?: (boolean);
  /**
   * After a compaction, an Edit/Write check passes for a file fully read before it whose content
   * still matches disk (the harness turns it off for the legacy models that Claude Code keeps
   * strict, docs/claude-code.md §4).
   */
  'carryReadState'?: (boolean);
  /**
   * A whole ReadFile over it is refused (claude-code-2.1.88, Claude Code's message) or answered
   * with its first page, marked partial (claude-code, default). Rough tokens of the file's text,
   * counted as the file cap counts them (docs/claude-code.md §2, §4).
   */
  'maxReadTokens'?: (number);
  /**
   * Restore each file as the lines the agent saw of it since the last compaction (from the first
   * to the last line its reads showed and its edits changed) instead of the whole file or the
   * range last read (docs/eval.md).
   */
  'restoreSeen'?: (boolean);
  'ranking': (_postcompact_v1_FileRanking__Output);
  /**
   * After the restored files, one attachment naming the candidates left out (path, lines seen,
   * edited): what the agent knew, without the text.
   */
  'leftOutIndex'?: (boolean);
  /**
   * Restore only what the named harness rule leaves out: the daemon computes that rule's own
   * selection over the agent's files, leaves those files to the harness (OUTCOME_RESTORED_BY_HARNESS)
   * and restores from the rest within this policy's budgets; files only (everything else is the
   * harness's own). After the compaction the harness's files are held as restored.
   */
  'complement': (_postcompact_v1_HarnessRule__Output);
  /**
   * The file budget at each compaction is what the named harness rule's own restoration would
   * cost there (the rough tokens of its file attachments and notes), in place of
   * file_token_budget: never more tokens than that rule spends (docs/eval.md). A layer that sets
   * file_token_budget and leaves this unset sets it to NONE: the budget given is the one applied.
   */
  'matchBudget': (_postcompact_v1_HarnessRule__Output);
  '_maxFiles'?: "maxFiles";
  '_fileTokenBudget'?: "fileTokenBudget";
  '_maxTokensPerFile'?: "maxTokensPerFile";
  '_maxTokensPerSkill'?: "maxTokensPerSkill";
  '_skillsTokenBudget'?: "skillsTokenBudget";
  '_skillTruncationMarker'?: "skillTruncationMarker";
  '_fileTruncationMarker'?: "fileTruncationMarker";
  '_encoding'?: "encoding";
  '_maxFileSizeBytes'?: "maxFileSizeBytes";
  '_malwareReminder'?: "malwareReminder";
  '_carryReadState'?: "carryReadState";
  '_maxReadTokens'?: "maxReadTokens";
  '_restoreSeen'?: "restoreSeen";
  '_leftOutIndex'?: "leftOutIndex";
}
