// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { WriteCheck as _postcompact_v1_WriteCheck, WriteCheck__Output as _postcompact_v1_WriteCheck__Output } from '../../postcompact/v1/WriteCheck.js';
import type { Long } from '@grpc/proto-loader';

export interface CheckWriteResponse {
  'result'?: (_postcompact_v1_WriteCheck);
  /**
   * Claude Code's exact error text; empty when allowed
   */
  'message'?: (string);
  /**
   * 6 or 7; 0 when allowed
   */
  'errorCode'?: (number);
  'path'?: (string);
  /**
   * The timestamp of the agent's entry the answer is based on (0: none, e.g. a new file): pass
   * it as RecordWrite's if_entry_timestamp_ms to record the write only if nothing came between.
   */
  'entryTimestampMs'?: (number | string | Long);
}

export interface CheckWriteResponse__Output {
  'result': (_postcompact_v1_WriteCheck__Output);
  /**
   * Claude Code's exact error text; empty when allowed
   */
  'message': (string);
  /**
   * 6 or 7; 0 when allowed
   */
  'errorCode': (number);
  'path': (string);
  /**
   * The timestamp of the agent's entry the answer is based on (0: none, e.g. a new file): pass
   * it as RecordWrite's if_entry_timestamp_ms to record the write only if nothing came between.
   */
  'entryTimestampMs': (number);
}
