// Original file: ../../proto/postcompact/v1/postcompact.proto


/**
 * Sessions in session-id order, a page at a time.
 */
export interface ListSessionsRequest {
  /**
   * 0: 100; at most 1,000 (larger asks get 1,000); < 0 is INVALID_ARGUMENT
   */
  'pageSize'?: (number);
  /**
   * next_page_token of the previous page; "" for the first
   */
  'pageToken'?: (string);
}

/**
 * Sessions in session-id order, a page at a time.
 */
export interface ListSessionsRequest__Output {
  /**
   * 0: 100; at most 1,000 (larger asks get 1,000); < 0 is INVALID_ARGUMENT
   */
  'pageSize': (number);
  /**
   * next_page_token of the previous page; "" for the first
   */
  'pageToken': (string);
}
