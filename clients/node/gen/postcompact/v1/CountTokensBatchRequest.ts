// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface CountTokensBatchRequest {
  'texts'?: (Buffer | Uint8Array | string)[];
  'encoding'?: (string);
}

export interface CountTokensBatchRequest__Output {
  'texts': (Buffer)[];
  'encoding': (string);
}
