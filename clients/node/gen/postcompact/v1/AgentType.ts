// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface AgentType {
  'agentType'?: (string);
  'whenToUse'?: (string);
  /**
   * empty renders "All tools"
   */
  'tools'?: (string)[];
}

export interface AgentType__Output {
  'agentType': (string);
  'whenToUse': (string);
  /**
   * empty renders "All tools"
   */
  'tools': (string)[];
}
