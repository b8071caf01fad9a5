// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface PlanFileReference {
  'planFilePath'?: (string);
  'planContent'?: (Buffer | Uint8Array | string);
}

export interface PlanFileReference__Output {
  'planFilePath': (string);
  'planContent': (Buffer);
}
