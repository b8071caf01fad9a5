// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface MergeFileStateRequest {
  'sessionId'?: (string);
  'fromAgentId'?: (string);
  'intoAgentId'?: (string);
}

export interface MergeFileStateRequest__Output {
  'sessionId': (string);
  'fromAgentId': (string);
  'intoAgentId': (string);
}
