// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Attachment as _postcompact_v1_Attachment, Attachment__Output as _postcompact_v1_Attachment__Output } from '../../postcompact/v1/Attachment.js';

export interface SetCatalogResponse {
  /**
   * the deltas to announce now, in Claude Code's order
   */
  'attachments'?: (_postcompact_v1_Attachment)[];
}

export interface SetCatalogResponse__Output {
  /**
   * the deltas to announce now, in Claude Code's order
   */
  'attachments': (_postcompact_v1_Attachment__Output)[];
}
