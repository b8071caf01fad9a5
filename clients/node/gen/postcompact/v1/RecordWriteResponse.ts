// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface RecordWriteResponse {
  'path'?: (string);
}

export interface RecordWriteResponse__Output {
  'path': (string);
}
