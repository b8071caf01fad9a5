// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { AttachmentKind as _postcompact_v1_AttachmentKind, AttachmentKind__Output as _postcompact_v1_AttachmentKind__Output } from '../../postcompact/v1/AttachmentKind.js';
import type { Placement as _postcompact_v1_Placement, Placement__Output as _postcompact_v1_Placement__Output } from '../../postcompact/v1/Placement.js';
import type { FileAttachment as _postcompact_v1_FileAttachment, FileAttachment__Output as _postcompact_v1_FileAttachment__Output } from '../../postcompact/v1/FileAttachment.js';
import type { CompactFileReference as _postcompact_v1_CompactFileReference, CompactFileReference__Output as _postcompact_v1_CompactFileReference__Output } from '../../postcompact/v1/CompactFileReference.js';
import type { TaskStatusAttachment as _postcompact_v1_TaskStatusAttachment, TaskStatusAttachment__Output as _postcompact_v1_TaskStatusAttachment__Output } from '../../postcompact/v1/TaskStatusAttachment.js';
import type { PlanFileReference as _postcompact_v1_PlanFileReference, PlanFileReference__Output as _postcompact_v1_PlanFileReference__Output } from '../../postcompact/v1/PlanFileReference.js';
import type { PlanModeAttachment as _postcompact_v1_PlanModeAttachment, PlanModeAttachment__Output as _postcompact_v1_PlanModeAttachment__Output } from '../../postcompact/v1/PlanModeAttachment.js';
import type { InvokedSkills as _postcompact_v1_InvokedSkills, InvokedSkills__Output as _postcompact_v1_InvokedSkills__Output } from '../../postcompact/v1/InvokedSkills.js';
import type { DeferredToolsDelta as _postcompact_v1_DeferredToolsDelta, DeferredToolsDelta__Output as _postcompact_v1_DeferredToolsDelta__Output } from '../../postcompact/v1/DeferredToolsDelta.js';
import type { AgentListingDelta as _postcompact_v1_AgentListingDelta, AgentListingDelta__Output as _postcompact_v1_AgentListingDelta__Output } from '../../postcompact/v1/AgentListingDelta.js';
import type { McpInstructionsDelta as _postcompact_v1_McpInstructionsDelta, McpInstructionsDelta__Output as _postcompact_v1_McpInstructionsDelta__Output } from '../../postcompact/v1/McpInstructionsDelta.js';
import type { HookAdditionalContext as _postcompact_v1_HookAdditionalContext, HookAdditionalContext__Output as _postcompact_v1_HookAdditionalContext__Output } from '../../postcompact/v1/HookAdditionalContext.js';
import type { SkillListingAttachment as _postcompact_v1_SkillListingAttachment, SkillListingAttachment__Output as _postcompact_v1_SkillListingAttachment__Output } from '../../postcompact/v1/SkillListingAttachment.js';
import type { LeftOutFiles as _postcompact_v1_LeftOutFiles, LeftOutFiles__Output as _postcompact_v1_LeftOutFiles__Output } from '../../postcompact/v1/LeftOutFiles.js';
import type { Long } from '@grpc/proto-loader';

/**
 * The text of an attachment is its `blocks`: a user-placed attachment is one or more text blocks
 * (a restored file: the Read call, the Read result, and a note when its text had to be escaped);
 * a system-placed one is exactly one block, its section. Clients join them (docs/clients.md).
 */
export interface Attachment {
  'kind'?: (_postcompact_v1_AttachmentKind);
  /**
   * rough estimate of the blocks joined by "\n"
   */
  'tokens'?: (number | string | Long);
  'placement'?: (_postcompact_v1_Placement);
  'blocks'?: (string)[];
  'file'?: (_postcompact_v1_FileAttachment | null);
  'fileReference'?: (_postcompact_v1_CompactFileReference | null);
  'taskStatus'?: (_postcompact_v1_TaskStatusAttachment | null);
  'planFileReference'?: (_postcompact_v1_PlanFileReference | null);
  'planMode'?: (_postcompact_v1_PlanModeAttachment | null);
  'invokedSkills'?: (_postcompact_v1_InvokedSkills | null);
  'deferredToolsDelta'?: (_postcompact_v1_DeferredToolsDelta | null);
  'agentListingDelta'?: (_postcompact_v1_AgentListingDelta | null);
  'mcpInstructionsDelta'?: (_postcompact_v1_McpInstructionsDelta | null);
  'hookAdditionalContext'?: (_postcompact_v1_HookAdditionalContext | null);
  'skillListing'?: (_postcompact_v1_SkillListingAttachment | null);
  'leftOutFiles'?: (_postcompact_v1_LeftOutFiles | null);
  'payload'?: "file"|"fileReference"|"taskStatus"|"planFileReference"|"planMode"|"invokedSkills"|"deferredToolsDelta"|"agentListingDelta"|"mcpInstructionsDelta"|"hookAdditionalContext"|"skillListing"|"leftOutFiles";
}

/**
 * The text of an attachment is its `blocks`: a user-placed attachment is one or more text blocks
 * (a restored file: the Read call, the Read result, and a note when its text had to be escaped);
 * a system-placed one is exactly one block, its section. Clients join them (docs/clients.md).
 */
export interface Attachment__Output {
  'kind': (_postcompact_v1_AttachmentKind__Output);
  /**
   * rough estimate of the blocks joined by "\n"
   */
  'tokens': (number);
  'placement': (_postcompact_v1_Placement__Output);
  'blocks': (string)[];
  'file'?: (_postcompact_v1_FileAttachment__Output | null);
  'fileReference'?: (_postcompact_v1_CompactFileReference__Output | null);
  'taskStatus'?: (_postcompact_v1_TaskStatusAttachment__Output | null);
  'planFileReference'?: (_postcompact_v1_PlanFileReference__Output | null);
  'planMode'?: (_postcompact_v1_PlanModeAttachment__Output | null);
  'invokedSkills'?: (_postcompact_v1_InvokedSkills__Output | null);
  'deferredToolsDelta'?: (_postcompact_v1_DeferredToolsDelta__Output | null);
  'agentListingDelta'?: (_postcompact_v1_AgentListingDelta__Output | null);
  'mcpInstructionsDelta'?: (_postcompact_v1_McpInstructionsDelta__Output | null);
  'hookAdditionalContext'?: (_postcompact_v1_HookAdditionalContext__Output | null);
  'skillListing'?: (_postcompact_v1_SkillListingAttachment__Output | null);
  'leftOutFiles'?: (_postcompact_v1_LeftOutFiles__Output | null);
  'payload'?: "file"|"fileReference"|"taskStatus"|"planFileReference"|"planMode"|"invokedSkills"|"deferredToolsDelta"|"agentListingDelta"|"mcpInstructionsDelta"|"hookAdditionalContext"|"skillListing"|"leftOutFiles";
}
