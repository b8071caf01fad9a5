// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Long } from '@grpc/proto-loader';

export interface EstimateTokensResponse {
  'tokens'?: (number | string | Long);
}

export interface EstimateTokensResponse__Output {
  'tokens': (number);
}
