// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface EstimateTokensBatchRequest {
  'texts'?: (Buffer | Uint8Array | string)[];
  'ext'?: (string);
}

export interface EstimateTokensBatchRequest__Output {
  'texts': (Buffer)[];
  'ext': (string);
}
