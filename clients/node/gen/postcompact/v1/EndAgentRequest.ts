// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface EndAgentRequest {
  'sessionId'?: (string);
  /**
   * a sub-agent: non-empty
   */
  'agentId'?: (string);
}

export interface EndAgentRequest__Output {
  'sessionId': (string);
  /**
   * a sub-agent: non-empty
   */
  'agentId': (string);
}
