// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { ToolUse as _postcompact_v1_ToolUse, ToolUse__Output as _postcompact_v1_ToolUse__Output } from '../../postcompact/v1/ToolUse.js';
import type { ToolResult as _postcompact_v1_ToolResult, ToolResult__Output as _postcompact_v1_ToolResult__Output } from '../../postcompact/v1/ToolResult.js';
import type { Attachment as _postcompact_v1_Attachment, Attachment__Output as _postcompact_v1_Attachment__Output } from '../../postcompact/v1/Attachment.js';

export interface ContentBlock {
  'text'?: (Buffer | Uint8Array | string);
  'toolUse'?: (_postcompact_v1_ToolUse | null);
  'toolResult'?: (_postcompact_v1_ToolResult | null);
  /**
   * an earlier delta attachment still in the preserved tail
   */
  'attachment'?: (_postcompact_v1_Attachment | null);
  'block'?: "text"|"toolUse"|"toolResult"|"attachment";
}

export interface ContentBlock__Output {
  'text'?: (Buffer);
  'toolUse'?: (_postcompact_v1_ToolUse__Output | null);
  'toolResult'?: (_postcompact_v1_ToolResult__Output | null);
  /**
   * an earlier delta attachment still in the preserved tail
   */
  'attachment'?: (_postcompact_v1_Attachment__Output | null);
  'block'?: "text"|"toolUse"|"toolResult"|"attachment";
}
