// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Long } from '@grpc/proto-loader';

export interface EstimateTokensBatchResponse {
  'tokens'?: (number | string | Long)[];
}

export interface EstimateTokensBatchResponse__Output {
  'tokens': (number)[];
}
