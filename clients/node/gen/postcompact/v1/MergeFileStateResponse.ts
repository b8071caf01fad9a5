// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface MergeFileStateResponse {
  /**
   * entries taken from `from` (missing or strictly newer)
   */
  'merged'?: (number);
  /**
   * entries of `into` that stayed
   */
  'kept'?: (number);
}

export interface MergeFileStateResponse__Output {
  /**
   * entries taken from `from` (missing or strictly newer)
   */
  'merged': (number);
  /**
   * entries of `into` that stayed
   */
  'kept': (number);
}
