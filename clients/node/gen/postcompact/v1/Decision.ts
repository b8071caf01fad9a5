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
   * The rough estimate of the item as attached: its attachment's `tokens` when restored, what
   * it would have taken when dropped by the budget (truncated as it would have been); 0 when it
   * was never rendered (excluded, dropped by rank, unreadable).
   */
  'tokens'?: (number | string | Long);
  /**
   * Decisions are in rank order within each subject (ranked ones first, 1, 2, ...; then those
   * not ranked, e.g. exclusions). Files: the position after sorting by timestamp; skills: newest
   * first; 0 when not ranked.
   */
  'rank'?: (number);
  /**
   * human-readable reason or error
   */
  'detail'?: (string);
  /**
   * The rough estimate of the content the agent held (a file's recorded content, a skill's
   * text), whatever happened to it; 0 when nothing was held (a file known by name only).
   */
  'contentTokens'?: (number | string | Long);
}

export interface Decision__Output {
  'subject': (_postcompact_v1_Subject__Output);
  /**
   * path, skill name or hook command
   */
  'name': (string);
  'outcome': (_postcompact_v1_Outcome__Output);
  /**
   * The rough estimate of the item as attached: its attachment's `tokens` when restored, what
   * it would have taken when dropped by the budget (truncated as it would have been); 0 when it
   * was never rendered (excluded, dropped by rank, unreadable).
   */
  'tokens': (number);
  /**
   * Decisions are in rank order within each subject (ranked ones first, 1, 2, ...; then those
   * not ranked, e.g. exclusions). Files: the position after sorting by timestamp; skills: newest
   * first; 0 when not ranked.
   */
  'rank': (number);
  /**
   * human-readable reason or error
   */
  'detail': (string);
  /**
   * The rough estimate of the content the agent held (a file's recorded content, a skill's
   * text), whatever happened to it; 0 when nothing was held (a file known by name only).
   */
  'contentTokens': (number);
}
