// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Long } from '@grpc/proto-loader';

export interface RecordSkillRequest {
  'sessionId'?: (string);
  'agentId'?: (string);
  'name'?: (string);
  'path'?: (string);
  'content'?: (Buffer | Uint8Array | string);
  /**
   * 0 = now
   */
  'invokedAtMs'?: (number | string | Long);
}

export interface RecordSkillRequest__Output {
  'sessionId': (string);
  'agentId': (string);
  'name': (string);
  'path': (string);
  'content': (Buffer);
  /**
   * 0 = now
   */
  'invokedAtMs': (number);
}
