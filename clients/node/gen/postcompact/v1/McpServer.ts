// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface McpServer {
  'name'?: (string);
  'instructions'?: (string);
}

export interface McpServer__Output {
  'name': (string);
  'instructions': (string);
}
