// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface CloseSessionRequest {
  'sessionId'?: (string);
}

export interface CloseSessionRequest__Output {
  'sessionId': (string);
}
