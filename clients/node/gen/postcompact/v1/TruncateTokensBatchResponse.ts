// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { TruncateTokensResponse as _postcompact_v1_TruncateTokensResponse, TruncateTokensResponse__Output as _postcompact_v1_TruncateTokensResponse__Output } from '../../postcompact/v1/TruncateTokensResponse.js';

export interface TruncateTokensBatchResponse {
  'results'?: (_postcompact_v1_TruncateTokensResponse)[];
}

export interface TruncateTokensBatchResponse__Output {
  'results': (_postcompact_v1_TruncateTokensResponse__Output)[];
}
