// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface SetPlanResponse {
  /**
   * The plan file the daemon will use, normalised: the one given, or for "" the default's path.
   */
  'planFilePath'?: (string);
}

export interface SetPlanResponse__Output {
  /**
   * The plan file the daemon will use, normalised: the one given, or for "" the default's path.
   */
  'planFilePath': (string);
}
