// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Long } from '@grpc/proto-loader';

export interface CountTokensResponse {
  'tokens'?: (number | string | Long);
}

export interface CountTokensResponse__Output {
  'tokens': (number);
}
