// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface CheckWriteRequest {
  'sessionId'?: (string);
  'agentId'?: (string);
  'path'?: (string);
}

export interface CheckWriteRequest__Output {
  'sessionId': (string);
  'agentId': (string);
  'path': (string);
}
