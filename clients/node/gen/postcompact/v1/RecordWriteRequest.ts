// Original file: ../../proto/postcompact/v1/postcompact.proto

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
}
