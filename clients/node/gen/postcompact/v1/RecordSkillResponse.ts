// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface RecordSkillResponse {
  /**
   * invoked skills now held for this agent
   */
  'skills'?: (number);
}

export interface RecordSkillResponse__Output {
  /**
   * invoked skills now held for this agent
   */
  'skills': (number);
}
