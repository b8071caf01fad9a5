// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface ToolUse {
  'id'?: (string);
  /**
   * "Read" counts for visibility
   */
  'name'?: (string);
  /**
   * JSON object, e.g. {"file_path": "/abs/path"}
   */
  'inputJson'?: (string);
}

export interface ToolUse__Output {
  'id': (string);
  /**
   * "Read" counts for visibility
   */
  'name': (string);
  /**
   * JSON object, e.g. {"file_path": "/abs/path"}
   */
  'inputJson': (string);
}
