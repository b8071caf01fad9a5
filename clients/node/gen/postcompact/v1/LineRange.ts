// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Long } from '@grpc/proto-loader';

/**
 * Lines `first`..`last` of a file, 1-based, inclusive.
 */
export interface LineRange {
  'first'?: (number | string | Long);
  'last'?: (number | string | Long);
}

/**
 * Lines `first`..`last` of a file, 1-based, inclusive.
 */
export interface LineRange__Output {
  'first': (number);
  'last': (number);
}
