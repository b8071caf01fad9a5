// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Subject as _postcompact_v1_Subject, Subject__Output as _postcompact_v1_Subject__Output } from '../../postcompact/v1/Subject.js';
import type { Outcome as _postcompact_v1_Outcome, Outcome__Output as _postcompact_v1_Outcome__Output } from '../../postcompact/v1/Outcome.js';
import type { Long } from '@grpc/proto-loader';

export interface Decision {
  'subject'?: (_postcompact_v1_Subject);
  /**
   * path, skill name or hook command
   */
  'name'?: (string);
  'outcome'?: (_postcompact_v1_Outcome);
  /**
   * tokens the item costs (restored) or would have cost (dropped); 0 if unknown
   */
  'tokens'?: (number | string | Long);
  /**
   * 1-based position after sorting; 0 when not ranked
   */
  'rank'?: (number);
  /**
   * human-readable reason or error
   */
  'detail'?: (string);
}

export interface Decision__Output {
  'subject': (_postcompact_v1_Subject__Output);
  /**
   * path, skill name or hook command
   */
  'name': (string);
  'outcome': (_postcompact_v1_Outcome__Output);
  /**
   * tokens the item costs (restored) or would have cost (dropped); 0 if unknown
   */
  'tokens': (number);
  /**
   * 1-based position after sorting; 0 when not ranked
   */
  'rank': (number);
  /**
   * human-readable reason or error
   */
  'detail': (string);
}
