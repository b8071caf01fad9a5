// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Attachment as _postcompact_v1_Attachment, Attachment__Output as _postcompact_v1_Attachment__Output } from '../../postcompact/v1/Attachment.js';
import type { Decision as _postcompact_v1_Decision, Decision__Output as _postcompact_v1_Decision__Output } from '../../postcompact/v1/Decision.js';
import type { CategoryTotals as _postcompact_v1_CategoryTotals, CategoryTotals__Output as _postcompact_v1_CategoryTotals__Output } from '../../postcompact/v1/CategoryTotals.js';
import type { Long } from '@grpc/proto-loader';

/**
 * The text to inject is in the attachments' `blocks`: clients join them themselves (the joined
 * copy is not sent): the user-placed blocks in order, and the system-placed sections joined by
 * "\n\n".
 */
export interface CompactResponse {
  /**
   * in injection order
   */
  'attachments'?: (_postcompact_v1_Attachment)[];
  'decisions'?: (_postcompact_v1_Decision)[];
  'totals'?: (_postcompact_v1_CategoryTotals)[];
  /**
   * this agent's compaction count after this call (unchanged by a preview)
   */
  'compaction'?: (number | string | Long);
}

/**
 * The text to inject is in the attachments' `blocks`: clients join them themselves (the joined
 * copy is not sent): the user-placed blocks in order, and the system-placed sections joined by
 * "\n\n".
 */
export interface CompactResponse__Output {
  /**
   * in injection order
   */
  'attachments': (_postcompact_v1_Attachment__Output)[];
  'decisions': (_postcompact_v1_Decision__Output)[];
  'totals': (_postcompact_v1_CategoryTotals__Output)[];
  /**
   * this agent's compaction count after this call (unchanged by a preview)
   */
  'compaction': (number);
}
