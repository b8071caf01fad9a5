// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface ToolResult {
  'toolUseId'?: (string);
  'content'?: (Buffer | Uint8Array | string);
  'isError'?: (boolean);
}

export interface ToolResult__Output {
  'toolUseId': (string);
  'content': (Buffer);
  'isError': (boolean);
}
