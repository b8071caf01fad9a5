// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface DeferredToolsDelta {
  'addedNames'?: (string)[];
  'addedLines'?: (string)[];
  'removedNames'?: (string)[];
}

export interface DeferredToolsDelta__Output {
  'addedNames': (string)[];
  'addedLines': (string)[];
  'removedNames': (string)[];
}
