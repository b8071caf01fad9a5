// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface SetPlanRequest {
  'sessionId'?: (string);
  'agentId'?: (string);
  /**
   * "" = no plan file
   */
  'planFilePath'?: (string);
}

export interface SetPlanRequest__Output {
  'sessionId': (string);
  'agentId': (string);
  /**
   * "" = no plan file
   */
  'planFilePath': (string);
}
