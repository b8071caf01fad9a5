// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface DeferredTools {
  'names'?: (string)[];
}

export interface DeferredTools__Output {
  'names': (string)[];
}
