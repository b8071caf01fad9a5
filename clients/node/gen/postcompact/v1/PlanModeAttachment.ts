// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface PlanModeAttachment {
  'planFilePath'?: (string);
  'planExists'?: (boolean);
  'isSubAgent'?: (boolean);
}

export interface PlanModeAttachment__Output {
  'planFilePath': (string);
  'planExists': (boolean);
  'isSubAgent': (boolean);
}
