// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface RestoredItem {
  /**
   * "file" or "reference"
   */
  'kind'?: (string);
  /**
   * as in the transcript
   */
  'path'?: (string);
}

export interface RestoredItem__Output {
  /**
   * "file" or "reference"
   */
  'kind': (string);
  /**
   * as in the transcript
   */
  'path': (string);
}
