// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Role as _postcompact_v1_Role, Role__Output as _postcompact_v1_Role__Output } from '../../postcompact/v1/Role.js';
import type { ContentBlock as _postcompact_v1_ContentBlock, ContentBlock__Output as _postcompact_v1_ContentBlock__Output } from '../../postcompact/v1/ContentBlock.js';

export interface ConversationMessage {
  'role'?: (_postcompact_v1_Role);
  'content'?: (_postcompact_v1_ContentBlock)[];
}

export interface ConversationMessage__Output {
  'role': (_postcompact_v1_Role__Output);
  'content': (_postcompact_v1_ContentBlock__Output)[];
}
