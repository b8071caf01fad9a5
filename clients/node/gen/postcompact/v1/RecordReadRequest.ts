// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Long } from '@grpc/proto-loader';

export interface RecordReadRequest {
  'sessionId'?: (string);
  'agentId'?: (string);
  'path'?: (string);
  /**
   * the raw text read (no line numbers)
   */
  'content'?: (Buffer | Uint8Array | string);
  /**
   * the harness's timestamp (mtime or read time); 0 = now
   */
  'timestampMs'?: (number | string | Long);
  /**
   * 1 for a Read with the default range
   */
  'offset'?: (number | string | Long);
  'limit'?: (number | string | Long);
  /**
   * e.g. an injected memory file whose text differs from disk
   */
  'partialView'?: (boolean);
  /**
   * a nested memory file loaded by the harness (cleared by compaction)
   */
  'nestedMemory'?: (boolean);
  '_offset'?: "offset";
  '_limit'?: "limit";
}

export interface RecordReadRequest__Output {
  'sessionId': (string);
  'agentId': (string);
  'path': (string);
  /**
   * the raw text read (no line numbers)
   */
  'content': (Buffer);
  /**
   * the harness's timestamp (mtime or read time); 0 = now
   */
  'timestampMs': (number);
  /**
   * 1 for a Read with the default range
   */
  'offset'?: (number);
  'limit'?: (number);
  /**
   * e.g. an injected memory file whose text differs from disk
   */
  'partialView': (boolean);
  /**
   * a nested memory file loaded by the harness (cleared by compaction)
   */
  'nestedMemory': (boolean);
  '_offset'?: "offset";
  '_limit'?: "limit";
}
