// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface PlanFileReference {
  'planFilePath'?: (string);
  /**
   * the plan file's text; empty unless include_content
   */
  'planContent'?: (Buffer | Uint8Array | string);
}

export interface PlanFileReference__Output {
  'planFilePath': (string);
  /**
   * the plan file's text; empty unless include_content
   */
  'planContent': (Buffer);
}
