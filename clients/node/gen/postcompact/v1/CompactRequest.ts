// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { CompactKind as _postcompact_v1_CompactKind, CompactKind__Output as _postcompact_v1_CompactKind__Output } from '../../postcompact/v1/CompactKind.js';
import type { ConversationMessage as _postcompact_v1_ConversationMessage, ConversationMessage__Output as _postcompact_v1_ConversationMessage__Output } from '../../postcompact/v1/ConversationMessage.js';
import type { RestorePolicy as _postcompact_v1_RestorePolicy, RestorePolicy__Output as _postcompact_v1_RestorePolicy__Output } from '../../postcompact/v1/RestorePolicy.js';

export interface CompactRequest {
  'sessionId'?: (string);
  'agentId'?: (string);
  'kind'?: (_postcompact_v1_CompactKind);
  /**
   * PARTIAL only
   */
  'preservedMessages'?: (_postcompact_v1_ConversationMessage)[];
  /**
   * per-request overrides
   */
  'policy'?: (_postcompact_v1_RestorePolicy | null);
  /**
   * added to the session-start hook context
   */
  'additionalContext'?: (string)[];
  'skipHooks'?: (boolean);
  /**
   * Also fill the raw copies: FileAttachment.content, PlanFileReference.plan_content and
   * InvokedSkill.content. false (the default) leaves them empty: the same text is inside each
   * attachment's blocks, so by default it crosses the socket once.
   */
  'includeContent'?: (boolean);
}

export interface CompactRequest__Output {
  'sessionId': (string);
  'agentId': (string);
  'kind': (_postcompact_v1_CompactKind__Output);
  /**
   * PARTIAL only
   */
  'preservedMessages': (_postcompact_v1_ConversationMessage__Output)[];
  /**
   * per-request overrides
   */
  'policy': (_postcompact_v1_RestorePolicy__Output | null);
  /**
   * added to the session-start hook context
   */
  'additionalContext': (string)[];
  'skipHooks': (boolean);
  /**
   * Also fill the raw copies: FileAttachment.content, PlanFileReference.plan_content and
   * InvokedSkill.content. false (the default) leaves them empty: the same text is inside each
   * attachment's blocks, so by default it crosses the socket once.
   */
  'includeContent': (boolean);
}
