// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface SetPlanResponse {
  /**
   * normalised
   */
  'planFilePath'?: (string);
}

export interface SetPlanResponse__Output {
  /**
   * normalised
   */
  'planFilePath': (string);
}
