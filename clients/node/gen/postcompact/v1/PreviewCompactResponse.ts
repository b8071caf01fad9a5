// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Attachment as _postcompact_v1_Attachment, Attachment__Output as _postcompact_v1_Attachment__Output } from '../../postcompact/v1/Attachment.js';
import type { Decision as _postcompact_v1_Decision, Decision__Output as _postcompact_v1_Decision__Output } from '../../postcompact/v1/Decision.js';
import type { CategoryTotals as _postcompact_v1_CategoryTotals, CategoryTotals__Output as _postcompact_v1_CategoryTotals__Output } from '../../postcompact/v1/CategoryTotals.js';
import type { Long } from '@grpc/proto-loader';

/**
 * Field for field the CompactResponse that Compact would answer.
 */
export interface PreviewCompactResponse {
  'attachments'?: (_postcompact_v1_Attachment)[];
  'decisions'?: (_postcompact_v1_Decision)[];
  'totals'?: (_postcompact_v1_CategoryTotals)[];
  'compaction'?: (number | string | Long);
}

/**
 * Field for field the CompactResponse that Compact would answer.
 */
export interface PreviewCompactResponse__Output {
  'attachments': (_postcompact_v1_Attachment__Output)[];
  'decisions': (_postcompact_v1_Decision__Output)[];
  'totals': (_postcompact_v1_CategoryTotals__Output)[];
  'compaction': (number);
}
