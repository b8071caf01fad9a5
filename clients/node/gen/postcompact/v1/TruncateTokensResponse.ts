// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Long } from '@grpc/proto-loader';

export interface TruncateTokensResponse {
  'text'?: (Buffer | Uint8Array | string);
  'truncated'?: (boolean);
  /**
   * tokens of `text` under the counter used
   */
  'tokens'?: (number | string | Long);
}

export interface TruncateTokensResponse__Output {
  'text': (Buffer);
  'truncated': (boolean);
  /**
   * tokens of `text` under the counter used
   */
  'tokens': (number);
}
