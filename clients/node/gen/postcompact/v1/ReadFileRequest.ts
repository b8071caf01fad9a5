// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Long } from '@grpc/proto-loader';

export interface ReadFileRequest {
  'sessionId'?: (string);
  'agentId'?: (string);
  'path'?: (string);
  /**
   * 1-based first line; default 1
   */
  'offset'?: (number | string | Long);
  /**
   * number of lines; default all
   */
  'limit'?: (number | string | Long);
  '_offset'?: "offset";
  '_limit'?: "limit";
}

export interface ReadFileRequest__Output {
  'sessionId': (string);
  'agentId': (string);
  'path': (string);
  /**
   * 1-based first line; default 1
   */
  'offset'?: (number);
  /**
   * number of lines; default all
   */
  'limit'?: (number);
  '_offset'?: "offset";
  '_limit'?: "limit";
}
