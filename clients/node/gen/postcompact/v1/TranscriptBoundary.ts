// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { RestoredItem as _postcompact_v1_RestoredItem, RestoredItem__Output as _postcompact_v1_RestoredItem__Output } from '../../postcompact/v1/RestoredItem.js';
import type { Long } from '@grpc/proto-loader';

/**
 * One compaction found in the transcript, and what Claude Code recorded after it.
 */
export interface TranscriptBoundary {
  /**
   * the compact_boundary record's uuid
   */
  'uuid'?: (string);
  /**
   * 1-based line of the record
   */
  'line'?: (number | string | Long);
  /**
   * "auto" or "manual"
   */
  'trigger'?: (string);
  'timestampMs'?: (number | string | Long);
  /**
   * messages kept verbatim (the preserved segment)
   */
  'preservedMessages'?: (number);
  /**
   * attachment records follow the boundary (Claude Code >= 2.1.92)
   */
  'hasRecordedRestore'?: (boolean);
  /**
   * the files and notes recorded, in order
   */
  'recorded'?: (_postcompact_v1_RestoredItem)[];
  /**
   * what postcompact restored when the import reached it
   */
  'restored'?: (_postcompact_v1_RestoredItem)[];
}

/**
 * One compaction found in the transcript, and what Claude Code recorded after it.
 */
export interface TranscriptBoundary__Output {
  /**
   * the compact_boundary record's uuid
   */
  'uuid': (string);
  /**
   * 1-based line of the record
   */
  'line': (number);
  /**
   * "auto" or "manual"
   */
  'trigger': (string);
  'timestampMs': (number);
  /**
   * messages kept verbatim (the preserved segment)
   */
  'preservedMessages': (number);
  /**
   * attachment records follow the boundary (Claude Code >= 2.1.92)
   */
  'hasRecordedRestore': (boolean);
  /**
   * the files and notes recorded, in order
   */
  'recorded': (_postcompact_v1_RestoredItem__Output)[];
  /**
   * what postcompact restored when the import reached it
   */
  'restored': (_postcompact_v1_RestoredItem__Output)[];
}
