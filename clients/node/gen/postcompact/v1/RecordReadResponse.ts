// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface RecordReadResponse {
  'path'?: (string);
}

export interface RecordReadResponse__Output {
  'path': (string);
}
