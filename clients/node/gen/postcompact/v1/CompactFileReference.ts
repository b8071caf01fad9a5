// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface CompactFileReference {
  'path'?: (string);
  'displayPath'?: (string);
}

export interface CompactFileReference__Output {
  'path': (string);
  'displayPath': (string);
}
