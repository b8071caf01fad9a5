// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Long } from '@grpc/proto-loader';

export interface CountTokensBatchResponse {
  'tokens'?: (number | string | Long)[];
}

export interface CountTokensBatchResponse__Output {
  'tokens': (number)[];
}
