// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { TokenCounter as _postcompact_v1_TokenCounter, TokenCounter__Output as _postcompact_v1_TokenCounter__Output } from '../../postcompact/v1/TokenCounter.js';
import type { Long } from '@grpc/proto-loader';

export interface TruncateTokensRequest {
  /**
   * UTF-8
   */
  'text'?: (Buffer | Uint8Array | string);
  'maxTokens'?: (number | string | Long);
  'marker'?: (string);
  'counter'?: (_postcompact_v1_TokenCounter);
  'encoding'?: (string);
}

export interface TruncateTokensRequest__Output {
  /**
   * UTF-8
   */
  'text': (Buffer);
  'maxTokens': (number);
  'marker': (string);
  'counter': (_postcompact_v1_TokenCounter__Output);
  'encoding': (string);
}
