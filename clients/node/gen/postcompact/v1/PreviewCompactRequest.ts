// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { CompactKind as _postcompact_v1_CompactKind, CompactKind__Output as _postcompact_v1_CompactKind__Output } from '../../postcompact/v1/CompactKind.js';
import type { ConversationMessage as _postcompact_v1_ConversationMessage, ConversationMessage__Output as _postcompact_v1_ConversationMessage__Output } from '../../postcompact/v1/ConversationMessage.js';
import type { RestorePolicy as _postcompact_v1_RestorePolicy, RestorePolicy__Output as _postcompact_v1_RestorePolicy__Output } from '../../postcompact/v1/RestorePolicy.js';

export interface PreviewCompactRequest {
  'sessionId'?: (string);
  'agentId'?: (string);
  'kind'?: (_postcompact_v1_CompactKind);
  'preservedMessages'?: (_postcompact_v1_ConversationMessage)[];
  'policy'?: (_postcompact_v1_RestorePolicy | null);
  'additionalContext'?: (string)[];
  'skipHooks'?: (boolean);
  /**
   * as in CompactRequest
   */
  'includeContent'?: (boolean);
}

export interface PreviewCompactRequest__Output {
  'sessionId': (string);
  'agentId': (string);
  'kind': (_postcompact_v1_CompactKind__Output);
  'preservedMessages': (_postcompact_v1_ConversationMessage__Output)[];
  'policy': (_postcompact_v1_RestorePolicy__Output | null);
  'additionalContext': (string)[];
  'skipHooks': (boolean);
  /**
   * as in CompactRequest
   */
  'includeContent': (boolean);
}
