// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Long } from '@grpc/proto-loader';

export interface LeftOutFile {
  'path'?: (string);
  'displayPath'?: (string);
  /**
   * the lines the agent saw of it (0 when not known)
   */
  'firstLine'?: (number | string | Long);
  'lastLine'?: (number | string | Long);
  /**
   * the agent edited or wrote it since the last compaction
   */
  'edited'?: (boolean);
}

export interface LeftOutFile__Output {
  'path': (string);
  'displayPath': (string);
  /**
   * the lines the agent saw of it (0 when not known)
   */
  'firstLine': (number);
  'lastLine': (number);
  /**
   * the agent edited or wrote it since the last compaction
   */
  'edited': (boolean);
}
