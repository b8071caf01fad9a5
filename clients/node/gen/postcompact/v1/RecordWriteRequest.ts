// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { ChangedLines as _postcompact_v1_ChangedLines, ChangedLines__Output as _postcompact_v1_ChangedLines__Output } from '../../postcompact/v1/ChangedLines.js';
import type { Long } from '@grpc/proto-loader';

export interface RecordWriteRequest {
  'sessionId'?: (string);
  'agentId'?: (string);
  'path'?: (string);
  /**
   * content after the Edit/Write
   */
  'content'?: (Buffer | Uint8Array | string);
  /**
   * mtime after the write; 0 = stat the file
   */
  'timestampMs'?: (number | string | Long);
  /**
   * Check-and-record made atomic: the `entry_timestamp_ms` of the CheckWrite this write was
   * allowed by. The write is recorded only if the agent's entry for the path is still that one
   * (0: there is still none); when another process recorded a read or a write of the path in
   * between, it is refused (FAILED_PRECONDITION WRITE_CONFLICT) and nothing changes.
   */
  'ifEntryTimestampMs'?: (number | string | Long);
  /**
   * The lines of `content` the write added or changed (an Edit's `structuredPatch` hunks, an
   * apply_patch's hunks). Unset: the daemon diffs `content` against the agent's entry for the
   * path; set with no ranges: the write changed no line of the new content (a deletion only).
   * Lines count as a Read counts them (the empty line after a final newline is the last); each
   * range must lie within them, at most 10,000 ranges (INVALID_ARGUMENT BAD_CHANGED_LINES,
   * TOO_MANY_CHANGED_LINES). The daemon carries the span of lines the agent saw of the file over
   * to the new content and widens it by these (docs/eval.md §2).
   */
  'changedLines'?: (_postcompact_v1_ChangedLines | null);
  '_ifEntryTimestampMs'?: "ifEntryTimestampMs";
}

export interface RecordWriteRequest__Output {
  'sessionId': (string);
  'agentId': (string);
  'path': (string);
  /**
   * content after the Edit/Write
   */
  'content': (Buffer);
  /**
   * mtime after the write; 0 = stat the file
   */
  'timestampMs': (number);
  /**
   * Check-and-record made atomic: the `entry_timestamp_ms` of the CheckWrite this write was
   * allowed by. The write is recorded only if the agent's entry for the path is still that one
   * (0: there is still none); when another process recorded a read or a write of the path in
   * between, it is refused (FAILED_PRECONDITION WRITE_CONFLICT) and nothing changes.
   */
  'ifEntryTimestampMs'?: (number);
  /**
   * The lines of `content` the write added or changed (an Edit's `structuredPatch` hunks, an
   * apply_patch's hunks). Unset: the daemon diffs `content` against the agent's entry for the
   * path; set with no ranges: the write changed no line of the new content (a deletion only).
   * Lines count as a Read counts them (the empty line after a final newline is the last); each
   * range must lie within them, at most 10,000 ranges (INVALID_ARGUMENT BAD_CHANGED_LINES,
   * TOO_MANY_CHANGED_LINES). The daemon carries the span of lines the agent saw of the file over
   * to the new content and widens it by these (docs/eval.md §2).
   */
  'changedLines': (_postcompact_v1_ChangedLines__Output | null);
  '_ifEntryTimestampMs'?: "ifEntryTimestampMs";
}
