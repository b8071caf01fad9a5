// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { SessionInfo as _postcompact_v1_SessionInfo, SessionInfo__Output as _postcompact_v1_SessionInfo__Output } from '../../postcompact/v1/SessionInfo.js';
import type { TranscriptBoundary as _postcompact_v1_TranscriptBoundary, TranscriptBoundary__Output as _postcompact_v1_TranscriptBoundary__Output } from '../../postcompact/v1/TranscriptBoundary.js';
import type { Long } from '@grpc/proto-loader';

export interface ImportTranscriptResponse {
  'sessionId'?: (string);
  'session'?: (_postcompact_v1_SessionInfo | null);
  /**
   * JSONL records read
   */
  'records'?: (number | string | Long);
  /**
   * reads, edits, writes, skills, plan, mode and task events applied
   */
  'events'?: (number | string | Long);
  'boundaries'?: (_postcompact_v1_TranscriptBoundary)[];
  /**
   * what was skipped and why (bounded)
   */
  'warnings'?: (string)[];
}

export interface ImportTranscriptResponse__Output {
  'sessionId': (string);
  'session': (_postcompact_v1_SessionInfo__Output | null);
  /**
   * JSONL records read
   */
  'records': (number);
  /**
   * reads, edits, writes, skills, plan, mode and task events applied
   */
  'events': (number);
  'boundaries': (_postcompact_v1_TranscriptBoundary__Output)[];
  /**
   * what was skipped and why (bounded)
   */
  'warnings': (string)[];
}
