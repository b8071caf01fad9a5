// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface CheckStaleResponse {
  /**
   * read files whose mtime moved past their timestamp
   */
  'stalePaths'?: (string)[];
  /**
   * "[This command modified N files you've previously read: …]" or empty
   */
  'hint'?: (string);
}

export interface CheckStaleResponse__Output {
  /**
   * read files whose mtime moved past their timestamp
   */
  'stalePaths': (string)[];
  /**
   * "[This command modified N files you've previously read: …]" or empty
   */
  'hint': (string);
}
