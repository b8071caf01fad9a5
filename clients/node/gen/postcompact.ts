import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { AgentListingDelta as _postcompact_v1_AgentListingDelta, AgentListingDelta__Output as _postcompact_v1_AgentListingDelta__Output } from './postcompact/v1/AgentListingDelta.js';
import type { AgentType as _postcompact_v1_AgentType, AgentType__Output as _postcompact_v1_AgentType__Output } from './postcompact/v1/AgentType.js';
import type { AgentTypes as _postcompact_v1_AgentTypes, AgentTypes__Output as _postcompact_v1_AgentTypes__Output } from './postcompact/v1/AgentTypes.js';
import type { Attachment as _postcompact_v1_Attachment, Attachment__Output as _postcompact_v1_Attachment__Output } from './postcompact/v1/Attachment.js';
import type { CategoryTotals as _postcompact_v1_CategoryTotals, CategoryTotals__Output as _postcompact_v1_CategoryTotals__Output } from './postcompact/v1/CategoryTotals.js';
import type { ChangedLines as _postcompact_v1_ChangedLines, ChangedLines__Output as _postcompact_v1_ChangedLines__Output } from './postcompact/v1/ChangedLines.js';
import type { CheckStaleRequest as _postcompact_v1_CheckStaleRequest, CheckStaleRequest__Output as _postcompact_v1_CheckStaleRequest__Output } from './postcompact/v1/CheckStaleRequest.js';
import type { CheckStaleResponse as _postcompact_v1_CheckStaleResponse, CheckStaleResponse__Output as _postcompact_v1_CheckStaleResponse__Output } from './postcompact/v1/CheckStaleResponse.js';
import type { CheckWriteRequest as _postcompact_v1_CheckWriteRequest, CheckWriteRequest__Output as _postcompact_v1_CheckWriteRequest__Output } from './postcompact/v1/CheckWriteRequest.js';
import type { CheckWriteResponse as _postcompact_v1_CheckWriteResponse, CheckWriteResponse__Output as _postcompact_v1_CheckWriteResponse__Output } from './postcompact/v1/CheckWriteResponse.js';
import type { CloseSessionRequest as _postcompact_v1_CloseSessionRequest, CloseSessionRequest__Output as _postcompact_v1_CloseSessionRequest__Output } from './postcompact/v1/CloseSessionRequest.js';
import type { CloseSessionResponse as _postcompact_v1_CloseSessionResponse, CloseSessionResponse__Output as _postcompact_v1_CloseSessionResponse__Output } from './postcompact/v1/CloseSessionResponse.js';
import type { CompactFileReference as _postcompact_v1_CompactFileReference, CompactFileReference__Output as _postcompact_v1_CompactFileReference__Output } from './postcompact/v1/CompactFileReference.js';
import type { CompactRequest as _postcompact_v1_CompactRequest, CompactRequest__Output as _postcompact_v1_CompactRequest__Output } from './postcompact/v1/CompactRequest.js';
import type { CompactResponse as _postcompact_v1_CompactResponse, CompactResponse__Output as _postcompact_v1_CompactResponse__Output } from './postcompact/v1/CompactResponse.js';
import type { ContentBlock as _postcompact_v1_ContentBlock, ContentBlock__Output as _postcompact_v1_ContentBlock__Output } from './postcompact/v1/ContentBlock.js';
import type { ConversationMessage as _postcompact_v1_ConversationMessage, ConversationMessage__Output as _postcompact_v1_ConversationMessage__Output } from './postcompact/v1/ConversationMessage.js';
import type { CountTokensBatchRequest as _postcompact_v1_CountTokensBatchRequest, CountTokensBatchRequest__Output as _postcompact_v1_CountTokensBatchRequest__Output } from './postcompact/v1/CountTokensBatchRequest.js';
import type { CountTokensBatchResponse as _postcompact_v1_CountTokensBatchResponse, CountTokensBatchResponse__Output as _postcompact_v1_CountTokensBatchResponse__Output } from './postcompact/v1/CountTokensBatchResponse.js';
import type { CountTokensRequest as _postcompact_v1_CountTokensRequest, CountTokensRequest__Output as _postcompact_v1_CountTokensRequest__Output } from './postcompact/v1/CountTokensRequest.js';
import type { CountTokensResponse as _postcompact_v1_CountTokensResponse, CountTokensResponse__Output as _postcompact_v1_CountTokensResponse__Output } from './postcompact/v1/CountTokensResponse.js';
import type { Decision as _postcompact_v1_Decision, Decision__Output as _postcompact_v1_Decision__Output } from './postcompact/v1/Decision.js';
import type { DeferredTools as _postcompact_v1_DeferredTools, DeferredTools__Output as _postcompact_v1_DeferredTools__Output } from './postcompact/v1/DeferredTools.js';
import type { DeferredToolsDelta as _postcompact_v1_DeferredToolsDelta, DeferredToolsDelta__Output as _postcompact_v1_DeferredToolsDelta__Output } from './postcompact/v1/DeferredToolsDelta.js';
import type { EndAgentRequest as _postcompact_v1_EndAgentRequest, EndAgentRequest__Output as _postcompact_v1_EndAgentRequest__Output } from './postcompact/v1/EndAgentRequest.js';
import type { EndAgentResponse as _postcompact_v1_EndAgentResponse, EndAgentResponse__Output as _postcompact_v1_EndAgentResponse__Output } from './postcompact/v1/EndAgentResponse.js';
import type { EstimateTokensBatchRequest as _postcompact_v1_EstimateTokensBatchRequest, EstimateTokensBatchRequest__Output as _postcompact_v1_EstimateTokensBatchRequest__Output } from './postcompact/v1/EstimateTokensBatchRequest.js';
import type { EstimateTokensBatchResponse as _postcompact_v1_EstimateTokensBatchResponse, EstimateTokensBatchResponse__Output as _postcompact_v1_EstimateTokensBatchResponse__Output } from './postcompact/v1/EstimateTokensBatchResponse.js';
import type { EstimateTokensRequest as _postcompact_v1_EstimateTokensRequest, EstimateTokensRequest__Output as _postcompact_v1_EstimateTokensRequest__Output } from './postcompact/v1/EstimateTokensRequest.js';
import type { EstimateTokensResponse as _postcompact_v1_EstimateTokensResponse, EstimateTokensResponse__Output as _postcompact_v1_EstimateTokensResponse__Output } from './postcompact/v1/EstimateTokensResponse.js';
import type { FileAttachment as _postcompact_v1_FileAttachment, FileAttachment__Output as _postcompact_v1_FileAttachment__Output } from './postcompact/v1/FileAttachment.js';
import type { GetServerInfoRequest as _postcompact_v1_GetServerInfoRequest, GetServerInfoRequest__Output as _postcompact_v1_GetServerInfoRequest__Output } from './postcompact/v1/GetServerInfoRequest.js';
import type { GetServerInfoResponse as _postcompact_v1_GetServerInfoResponse, GetServerInfoResponse__Output as _postcompact_v1_GetServerInfoResponse__Output } from './postcompact/v1/GetServerInfoResponse.js';
import type { GetStatsRequest as _postcompact_v1_GetStatsRequest, GetStatsRequest__Output as _postcompact_v1_GetStatsRequest__Output } from './postcompact/v1/GetStatsRequest.js';
import type { GetStatsResponse as _postcompact_v1_GetStatsResponse, GetStatsResponse__Output as _postcompact_v1_GetStatsResponse__Output } from './postcompact/v1/GetStatsResponse.js';
import type { HookAdditionalContext as _postcompact_v1_HookAdditionalContext, HookAdditionalContext__Output as _postcompact_v1_HookAdditionalContext__Output } from './postcompact/v1/HookAdditionalContext.js';
import type { ImportTranscriptRequest as _postcompact_v1_ImportTranscriptRequest, ImportTranscriptRequest__Output as _postcompact_v1_ImportTranscriptRequest__Output } from './postcompact/v1/ImportTranscriptRequest.js';
import type { ImportTranscriptResponse as _postcompact_v1_ImportTranscriptResponse, ImportTranscriptResponse__Output as _postcompact_v1_ImportTranscriptResponse__Output } from './postcompact/v1/ImportTranscriptResponse.js';
import type { InvokedSkill as _postcompact_v1_InvokedSkill, InvokedSkill__Output as _postcompact_v1_InvokedSkill__Output } from './postcompact/v1/InvokedSkill.js';
import type { InvokedSkills as _postcompact_v1_InvokedSkills, InvokedSkills__Output as _postcompact_v1_InvokedSkills__Output } from './postcompact/v1/InvokedSkills.js';
import type { LeftOutFile as _postcompact_v1_LeftOutFile, LeftOutFile__Output as _postcompact_v1_LeftOutFile__Output } from './postcompact/v1/LeftOutFile.js';
import type { LeftOutFiles as _postcompact_v1_LeftOutFiles, LeftOutFiles__Output as _postcompact_v1_LeftOutFiles__Output } from './postcompact/v1/LeftOutFiles.js';
import type { LineRange as _postcompact_v1_LineRange, LineRange__Output as _postcompact_v1_LineRange__Output } from './postcompact/v1/LineRange.js';
import type { ListSessionsRequest as _postcompact_v1_ListSessionsRequest, ListSessionsRequest__Output as _postcompact_v1_ListSessionsRequest__Output } from './postcompact/v1/ListSessionsRequest.js';
import type { ListSessionsResponse as _postcompact_v1_ListSessionsResponse, ListSessionsResponse__Output as _postcompact_v1_ListSessionsResponse__Output } from './postcompact/v1/ListSessionsResponse.js';
import type { McpInstructionsDelta as _postcompact_v1_McpInstructionsDelta, McpInstructionsDelta__Output as _postcompact_v1_McpInstructionsDelta__Output } from './postcompact/v1/McpInstructionsDelta.js';
import type { McpServer as _postcompact_v1_McpServer, McpServer__Output as _postcompact_v1_McpServer__Output } from './postcompact/v1/McpServer.js';
import type { McpServers as _postcompact_v1_McpServers, McpServers__Output as _postcompact_v1_McpServers__Output } from './postcompact/v1/McpServers.js';
import type { MemoryFiles as _postcompact_v1_MemoryFiles, MemoryFiles__Output as _postcompact_v1_MemoryFiles__Output } from './postcompact/v1/MemoryFiles.js';
import type { MergeFileStateRequest as _postcompact_v1_MergeFileStateRequest, MergeFileStateRequest__Output as _postcompact_v1_MergeFileStateRequest__Output } from './postcompact/v1/MergeFileStateRequest.js';
import type { MergeFileStateResponse as _postcompact_v1_MergeFileStateResponse, MergeFileStateResponse__Output as _postcompact_v1_MergeFileStateResponse__Output } from './postcompact/v1/MergeFileStateResponse.js';
import type { OpenSessionRequest as _postcompact_v1_OpenSessionRequest, OpenSessionRequest__Output as _postcompact_v1_OpenSessionRequest__Output } from './postcompact/v1/OpenSessionRequest.js';
import type { OpenSessionResponse as _postcompact_v1_OpenSessionResponse, OpenSessionResponse__Output as _postcompact_v1_OpenSessionResponse__Output } from './postcompact/v1/OpenSessionResponse.js';
import type { PathMapping as _postcompact_v1_PathMapping, PathMapping__Output as _postcompact_v1_PathMapping__Output } from './postcompact/v1/PathMapping.js';
import type { PlanFileReference as _postcompact_v1_PlanFileReference, PlanFileReference__Output as _postcompact_v1_PlanFileReference__Output } from './postcompact/v1/PlanFileReference.js';
import type { PlanModeAttachment as _postcompact_v1_PlanModeAttachment, PlanModeAttachment__Output as _postcompact_v1_PlanModeAttachment__Output } from './postcompact/v1/PlanModeAttachment.js';
import type { PostcompactServiceClient as _postcompact_v1_PostcompactServiceClient, PostcompactServiceDefinition as _postcompact_v1_PostcompactServiceDefinition } from './postcompact/v1/PostcompactService.js';
import type { PreviewCompactRequest as _postcompact_v1_PreviewCompactRequest, PreviewCompactRequest__Output as _postcompact_v1_PreviewCompactRequest__Output } from './postcompact/v1/PreviewCompactRequest.js';
import type { PreviewCompactResponse as _postcompact_v1_PreviewCompactResponse, PreviewCompactResponse__Output as _postcompact_v1_PreviewCompactResponse__Output } from './postcompact/v1/PreviewCompactResponse.js';
import type { ReadFileRequest as _postcompact_v1_ReadFileRequest, ReadFileRequest__Output as _postcompact_v1_ReadFileRequest__Output } from './postcompact/v1/ReadFileRequest.js';
import type { ReadFileResponse as _postcompact_v1_ReadFileResponse, ReadFileResponse__Output as _postcompact_v1_ReadFileResponse__Output } from './postcompact/v1/ReadFileResponse.js';
import type { RecordReadRequest as _postcompact_v1_RecordReadRequest, RecordReadRequest__Output as _postcompact_v1_RecordReadRequest__Output } from './postcompact/v1/RecordReadRequest.js';
import type { RecordReadResponse as _postcompact_v1_RecordReadResponse, RecordReadResponse__Output as _postcompact_v1_RecordReadResponse__Output } from './postcompact/v1/RecordReadResponse.js';
import type { RecordSkillRequest as _postcompact_v1_RecordSkillRequest, RecordSkillRequest__Output as _postcompact_v1_RecordSkillRequest__Output } from './postcompact/v1/RecordSkillRequest.js';
import type { RecordSkillResponse as _postcompact_v1_RecordSkillResponse, RecordSkillResponse__Output as _postcompact_v1_RecordSkillResponse__Output } from './postcompact/v1/RecordSkillResponse.js';
import type { RecordWriteRequest as _postcompact_v1_RecordWriteRequest, RecordWriteRequest__Output as _postcompact_v1_RecordWriteRequest__Output } from './postcompact/v1/RecordWriteRequest.js';
import type { RecordWriteResponse as _postcompact_v1_RecordWriteResponse, RecordWriteResponse__Output as _postcompact_v1_RecordWriteResponse__Output } from './postcompact/v1/RecordWriteResponse.js';
import type { RestorePolicy as _postcompact_v1_RestorePolicy, RestorePolicy__Output as _postcompact_v1_RestorePolicy__Output } from './postcompact/v1/RestorePolicy.js';
import type { RestoredItem as _postcompact_v1_RestoredItem, RestoredItem__Output as _postcompact_v1_RestoredItem__Output } from './postcompact/v1/RestoredItem.js';
import type { SessionInfo as _postcompact_v1_SessionInfo, SessionInfo__Output as _postcompact_v1_SessionInfo__Output } from './postcompact/v1/SessionInfo.js';
import type { SetCatalogRequest as _postcompact_v1_SetCatalogRequest, SetCatalogRequest__Output as _postcompact_v1_SetCatalogRequest__Output } from './postcompact/v1/SetCatalogRequest.js';
import type { SetCatalogResponse as _postcompact_v1_SetCatalogResponse, SetCatalogResponse__Output as _postcompact_v1_SetCatalogResponse__Output } from './postcompact/v1/SetCatalogResponse.js';
import type { SetModeRequest as _postcompact_v1_SetModeRequest, SetModeRequest__Output as _postcompact_v1_SetModeRequest__Output } from './postcompact/v1/SetModeRequest.js';
import type { SetModeResponse as _postcompact_v1_SetModeResponse, SetModeResponse__Output as _postcompact_v1_SetModeResponse__Output } from './postcompact/v1/SetModeResponse.js';
import type { SetPlanRequest as _postcompact_v1_SetPlanRequest, SetPlanRequest__Output as _postcompact_v1_SetPlanRequest__Output } from './postcompact/v1/SetPlanRequest.js';
import type { SetPlanResponse as _postcompact_v1_SetPlanResponse, SetPlanResponse__Output as _postcompact_v1_SetPlanResponse__Output } from './postcompact/v1/SetPlanResponse.js';
import type { SkillListing as _postcompact_v1_SkillListing, SkillListing__Output as _postcompact_v1_SkillListing__Output } from './postcompact/v1/SkillListing.js';
import type { SkillListingAttachment as _postcompact_v1_SkillListingAttachment, SkillListingAttachment__Output as _postcompact_v1_SkillListingAttachment__Output } from './postcompact/v1/SkillListingAttachment.js';
import type { SkillListingEntry as _postcompact_v1_SkillListingEntry, SkillListingEntry__Output as _postcompact_v1_SkillListingEntry__Output } from './postcompact/v1/SkillListingEntry.js';
import type { StartAgentRequest as _postcompact_v1_StartAgentRequest, StartAgentRequest__Output as _postcompact_v1_StartAgentRequest__Output } from './postcompact/v1/StartAgentRequest.js';
import type { StartAgentResponse as _postcompact_v1_StartAgentResponse, StartAgentResponse__Output as _postcompact_v1_StartAgentResponse__Output } from './postcompact/v1/StartAgentResponse.js';
import type { Task as _postcompact_v1_Task, Task__Output as _postcompact_v1_Task__Output } from './postcompact/v1/Task.js';
import type { TaskStatusAttachment as _postcompact_v1_TaskStatusAttachment, TaskStatusAttachment__Output as _postcompact_v1_TaskStatusAttachment__Output } from './postcompact/v1/TaskStatusAttachment.js';
import type { TemplateSpec as _postcompact_v1_TemplateSpec, TemplateSpec__Output as _postcompact_v1_TemplateSpec__Output } from './postcompact/v1/TemplateSpec.js';
import type { ToolResult as _postcompact_v1_ToolResult, ToolResult__Output as _postcompact_v1_ToolResult__Output } from './postcompact/v1/ToolResult.js';
import type { ToolUse as _postcompact_v1_ToolUse, ToolUse__Output as _postcompact_v1_ToolUse__Output } from './postcompact/v1/ToolUse.js';
import type { TranscriptBoundary as _postcompact_v1_TranscriptBoundary, TranscriptBoundary__Output as _postcompact_v1_TranscriptBoundary__Output } from './postcompact/v1/TranscriptBoundary.js';
import type { TruncateTokensBatchRequest as _postcompact_v1_TruncateTokensBatchRequest, TruncateTokensBatchRequest__Output as _postcompact_v1_TruncateTokensBatchRequest__Output } from './postcompact/v1/TruncateTokensBatchRequest.js';
import type { TruncateTokensBatchResponse as _postcompact_v1_TruncateTokensBatchResponse, TruncateTokensBatchResponse__Output as _postcompact_v1_TruncateTokensBatchResponse__Output } from './postcompact/v1/TruncateTokensBatchResponse.js';
import type { TruncateTokensRequest as _postcompact_v1_TruncateTokensRequest, TruncateTokensRequest__Output as _postcompact_v1_TruncateTokensRequest__Output } from './postcompact/v1/TruncateTokensRequest.js';
import type { TruncateTokensResponse as _postcompact_v1_TruncateTokensResponse, TruncateTokensResponse__Output as _postcompact_v1_TruncateTokensResponse__Output } from './postcompact/v1/TruncateTokensResponse.js';
import type { UpsertTaskRequest as _postcompact_v1_UpsertTaskRequest, UpsertTaskRequest__Output as _postcompact_v1_UpsertTaskRequest__Output } from './postcompact/v1/UpsertTaskRequest.js';
import type { UpsertTaskResponse as _postcompact_v1_UpsertTaskResponse, UpsertTaskResponse__Output as _postcompact_v1_UpsertTaskResponse__Output } from './postcompact/v1/UpsertTaskResponse.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  postcompact: {
    v1: {
      AgentListingDelta: MessageTypeDefinition<_postcompact_v1_AgentListingDelta, _postcompact_v1_AgentListingDelta__Output>
      AgentMode: EnumTypeDefinition
      AgentType: MessageTypeDefinition<_postcompact_v1_AgentType, _postcompact_v1_AgentType__Output>
      AgentTypes: MessageTypeDefinition<_postcompact_v1_AgentTypes, _postcompact_v1_AgentTypes__Output>
      Attachment: MessageTypeDefinition<_postcompact_v1_Attachment, _postcompact_v1_Attachment__Output>
      AttachmentKind: EnumTypeDefinition
      CategoryTotals: MessageTypeDefinition<_postcompact_v1_CategoryTotals, _postcompact_v1_CategoryTotals__Output>
      ChangedLines: MessageTypeDefinition<_postcompact_v1_ChangedLines, _postcompact_v1_ChangedLines__Output>
      CheckStaleRequest: MessageTypeDefinition<_postcompact_v1_CheckStaleRequest, _postcompact_v1_CheckStaleRequest__Output>
      CheckStaleResponse: MessageTypeDefinition<_postcompact_v1_CheckStaleResponse, _postcompact_v1_CheckStaleResponse__Output>
      CheckWriteRequest: MessageTypeDefinition<_postcompact_v1_CheckWriteRequest, _postcompact_v1_CheckWriteRequest__Output>
      CheckWriteResponse: MessageTypeDefinition<_postcompact_v1_CheckWriteResponse, _postcompact_v1_CheckWriteResponse__Output>
      CloseSessionRequest: MessageTypeDefinition<_postcompact_v1_CloseSessionRequest, _postcompact_v1_CloseSessionRequest__Output>
      CloseSessionResponse: MessageTypeDefinition<_postcompact_v1_CloseSessionResponse, _postcompact_v1_CloseSessionResponse__Output>
      CompactFileReference: MessageTypeDefinition<_postcompact_v1_CompactFileReference, _postcompact_v1_CompactFileReference__Output>
      CompactKind: EnumTypeDefinition
      CompactRequest: MessageTypeDefinition<_postcompact_v1_CompactRequest, _postcompact_v1_CompactRequest__Output>
      CompactResponse: MessageTypeDefinition<_postcompact_v1_CompactResponse, _postcompact_v1_CompactResponse__Output>
      ContentBlock: MessageTypeDefinition<_postcompact_v1_ContentBlock, _postcompact_v1_ContentBlock__Output>
      ConversationMessage: MessageTypeDefinition<_postcompact_v1_ConversationMessage, _postcompact_v1_ConversationMessage__Output>
      CountTokensBatchRequest: MessageTypeDefinition<_postcompact_v1_CountTokensBatchRequest, _postcompact_v1_CountTokensBatchRequest__Output>
      CountTokensBatchResponse: MessageTypeDefinition<_postcompact_v1_CountTokensBatchResponse, _postcompact_v1_CountTokensBatchResponse__Output>
      CountTokensRequest: MessageTypeDefinition<_postcompact_v1_CountTokensRequest, _postcompact_v1_CountTokensRequest__Output>
      CountTokensResponse: MessageTypeDefinition<_postcompact_v1_CountTokensResponse, _postcompact_v1_CountTokensResponse__Output>
      Decision: MessageTypeDefinition<_postcompact_v1_Decision, _postcompact_v1_Decision__Output>
      DeferredTools: MessageTypeDefinition<_postcompact_v1_DeferredTools, _postcompact_v1_DeferredTools__Output>
      DeferredToolsDelta: MessageTypeDefinition<_postcompact_v1_DeferredToolsDelta, _postcompact_v1_DeferredToolsDelta__Output>
      EndAgentRequest: MessageTypeDefinition<_postcompact_v1_EndAgentRequest, _postcompact_v1_EndAgentRequest__Output>
      EndAgentResponse: MessageTypeDefinition<_postcompact_v1_EndAgentResponse, _postcompact_v1_EndAgentResponse__Output>
      EstimateTokensBatchRequest: MessageTypeDefinition<_postcompact_v1_EstimateTokensBatchRequest, _postcompact_v1_EstimateTokensBatchRequest__Output>
      EstimateTokensBatchResponse: MessageTypeDefinition<_postcompact_v1_EstimateTokensBatchResponse, _postcompact_v1_EstimateTokensBatchResponse__Output>
      EstimateTokensRequest: MessageTypeDefinition<_postcompact_v1_EstimateTokensRequest, _postcompact_v1_EstimateTokensRequest__Output>
      EstimateTokensResponse: MessageTypeDefinition<_postcompact_v1_EstimateTokensResponse, _postcompact_v1_EstimateTokensResponse__Output>
      FileAttachment: MessageTypeDefinition<_postcompact_v1_FileAttachment, _postcompact_v1_FileAttachment__Output>
      FileRanking: EnumTypeDefinition
      GetServerInfoRequest: MessageTypeDefinition<_postcompact_v1_GetServerInfoRequest, _postcompact_v1_GetServerInfoRequest__Output>
      GetServerInfoResponse: MessageTypeDefinition<_postcompact_v1_GetServerInfoResponse, _postcompact_v1_GetServerInfoResponse__Output>
      GetStatsRequest: MessageTypeDefinition<_postcompact_v1_GetStatsRequest, _postcompact_v1_GetStatsRequest__Output>
      GetStatsResponse: MessageTypeDefinition<_postcompact_v1_GetStatsResponse, _postcompact_v1_GetStatsResponse__Output>
      HarnessRule: EnumTypeDefinition
      HookAdditionalContext: MessageTypeDefinition<_postcompact_v1_HookAdditionalContext, _postcompact_v1_HookAdditionalContext__Output>
      ImportTranscriptRequest: MessageTypeDefinition<_postcompact_v1_ImportTranscriptRequest, _postcompact_v1_ImportTranscriptRequest__Output>
      ImportTranscriptResponse: MessageTypeDefinition<_postcompact_v1_ImportTranscriptResponse, _postcompact_v1_ImportTranscriptResponse__Output>
      InvokedSkill: MessageTypeDefinition<_postcompact_v1_InvokedSkill, _postcompact_v1_InvokedSkill__Output>
      InvokedSkills: MessageTypeDefinition<_postcompact_v1_InvokedSkills, _postcompact_v1_InvokedSkills__Output>
      LeftOutFile: MessageTypeDefinition<_postcompact_v1_LeftOutFile, _postcompact_v1_LeftOutFile__Output>
      LeftOutFiles: MessageTypeDefinition<_postcompact_v1_LeftOutFiles, _postcompact_v1_LeftOutFiles__Output>
      LineRange: MessageTypeDefinition<_postcompact_v1_LineRange, _postcompact_v1_LineRange__Output>
      ListSessionsRequest: MessageTypeDefinition<_postcompact_v1_ListSessionsRequest, _postcompact_v1_ListSessionsRequest__Output>
      ListSessionsResponse: MessageTypeDefinition<_postcompact_v1_ListSessionsResponse, _postcompact_v1_ListSessionsResponse__Output>
      McpInstructionsDelta: MessageTypeDefinition<_postcompact_v1_McpInstructionsDelta, _postcompact_v1_McpInstructionsDelta__Output>
      McpServer: MessageTypeDefinition<_postcompact_v1_McpServer, _postcompact_v1_McpServer__Output>
      McpServers: MessageTypeDefinition<_postcompact_v1_McpServers, _postcompact_v1_McpServers__Output>
      MemoryFiles: MessageTypeDefinition<_postcompact_v1_MemoryFiles, _postcompact_v1_MemoryFiles__Output>
      MergeFileStateRequest: MessageTypeDefinition<_postcompact_v1_MergeFileStateRequest, _postcompact_v1_MergeFileStateRequest__Output>
      MergeFileStateResponse: MessageTypeDefinition<_postcompact_v1_MergeFileStateResponse, _postcompact_v1_MergeFileStateResponse__Output>
      OpenSessionRequest: MessageTypeDefinition<_postcompact_v1_OpenSessionRequest, _postcompact_v1_OpenSessionRequest__Output>
      OpenSessionResponse: MessageTypeDefinition<_postcompact_v1_OpenSessionResponse, _postcompact_v1_OpenSessionResponse__Output>
      Outcome: EnumTypeDefinition
      OversizePolicy: EnumTypeDefinition
      PathMapping: MessageTypeDefinition<_postcompact_v1_PathMapping, _postcompact_v1_PathMapping__Output>
      PermissionMode: EnumTypeDefinition
      Placement: EnumTypeDefinition
      PlanFileReference: MessageTypeDefinition<_postcompact_v1_PlanFileReference, _postcompact_v1_PlanFileReference__Output>
      PlanModeAttachment: MessageTypeDefinition<_postcompact_v1_PlanModeAttachment, _postcompact_v1_PlanModeAttachment__Output>
      PostcompactService: SubtypeConstructor<typeof grpc.Client, _postcompact_v1_PostcompactServiceClient> & { service: _postcompact_v1_PostcompactServiceDefinition }
      PreviewCompactRequest: MessageTypeDefinition<_postcompact_v1_PreviewCompactRequest, _postcompact_v1_PreviewCompactRequest__Output>
      PreviewCompactResponse: MessageTypeDefinition<_postcompact_v1_PreviewCompactResponse, _postcompact_v1_PreviewCompactResponse__Output>
      Profile: EnumTypeDefinition
      ReadFileRequest: MessageTypeDefinition<_postcompact_v1_ReadFileRequest, _postcompact_v1_ReadFileRequest__Output>
      ReadFileResponse: MessageTypeDefinition<_postcompact_v1_ReadFileResponse, _postcompact_v1_ReadFileResponse__Output>
      RecordReadRequest: MessageTypeDefinition<_postcompact_v1_RecordReadRequest, _postcompact_v1_RecordReadRequest__Output>
      RecordReadResponse: MessageTypeDefinition<_postcompact_v1_RecordReadResponse, _postcompact_v1_RecordReadResponse__Output>
      RecordSkillRequest: MessageTypeDefinition<_postcompact_v1_RecordSkillRequest, _postcompact_v1_RecordSkillRequest__Output>
      RecordSkillResponse: MessageTypeDefinition<_postcompact_v1_RecordSkillResponse, _postcompact_v1_RecordSkillResponse__Output>
      RecordWriteRequest: MessageTypeDefinition<_postcompact_v1_RecordWriteRequest, _postcompact_v1_RecordWriteRequest__Output>
      RecordWriteResponse: MessageTypeDefinition<_postcompact_v1_RecordWriteResponse, _postcompact_v1_RecordWriteResponse__Output>
      RestorePolicy: MessageTypeDefinition<_postcompact_v1_RestorePolicy, _postcompact_v1_RestorePolicy__Output>
      RestoredItem: MessageTypeDefinition<_postcompact_v1_RestoredItem, _postcompact_v1_RestoredItem__Output>
      Role: EnumTypeDefinition
      SessionInfo: MessageTypeDefinition<_postcompact_v1_SessionInfo, _postcompact_v1_SessionInfo__Output>
      SetCatalogRequest: MessageTypeDefinition<_postcompact_v1_SetCatalogRequest, _postcompact_v1_SetCatalogRequest__Output>
      SetCatalogResponse: MessageTypeDefinition<_postcompact_v1_SetCatalogResponse, _postcompact_v1_SetCatalogResponse__Output>
      SetModeRequest: MessageTypeDefinition<_postcompact_v1_SetModeRequest, _postcompact_v1_SetModeRequest__Output>
      SetModeResponse: MessageTypeDefinition<_postcompact_v1_SetModeResponse, _postcompact_v1_SetModeResponse__Output>
      SetPlanRequest: MessageTypeDefinition<_postcompact_v1_SetPlanRequest, _postcompact_v1_SetPlanRequest__Output>
      SetPlanResponse: MessageTypeDefinition<_postcompact_v1_SetPlanResponse, _postcompact_v1_SetPlanResponse__Output>
      SkillListing: MessageTypeDefinition<_postcompact_v1_SkillListing, _postcompact_v1_SkillListing__Output>
      SkillListingAttachment: MessageTypeDefinition<_postcompact_v1_SkillListingAttachment, _postcompact_v1_SkillListingAttachment__Output>
      SkillListingEntry: MessageTypeDefinition<_postcompact_v1_SkillListingEntry, _postcompact_v1_SkillListingEntry__Output>
      StartAgentRequest: MessageTypeDefinition<_postcompact_v1_StartAgentRequest, _postcompact_v1_StartAgentRequest__Output>
      StartAgentResponse: MessageTypeDefinition<_postcompact_v1_StartAgentResponse, _postcompact_v1_StartAgentResponse__Output>
      Subject: EnumTypeDefinition
      Task: MessageTypeDefinition<_postcompact_v1_Task, _postcompact_v1_Task__Output>
      TaskStatus: EnumTypeDefinition
      TaskStatusAttachment: MessageTypeDefinition<_postcompact_v1_TaskStatusAttachment, _postcompact_v1_TaskStatusAttachment__Output>
      TemplateSpec: MessageTypeDefinition<_postcompact_v1_TemplateSpec, _postcompact_v1_TemplateSpec__Output>
      TokenCounter: EnumTypeDefinition
      ToolResult: MessageTypeDefinition<_postcompact_v1_ToolResult, _postcompact_v1_ToolResult__Output>
      ToolUse: MessageTypeDefinition<_postcompact_v1_ToolUse, _postcompact_v1_ToolUse__Output>
      TranscriptBoundary: MessageTypeDefinition<_postcompact_v1_TranscriptBoundary, _postcompact_v1_TranscriptBoundary__Output>
      TruncateTokensBatchRequest: MessageTypeDefinition<_postcompact_v1_TruncateTokensBatchRequest, _postcompact_v1_TruncateTokensBatchRequest__Output>
      TruncateTokensBatchResponse: MessageTypeDefinition<_postcompact_v1_TruncateTokensBatchResponse, _postcompact_v1_TruncateTokensBatchResponse__Output>
      TruncateTokensRequest: MessageTypeDefinition<_postcompact_v1_TruncateTokensRequest, _postcompact_v1_TruncateTokensRequest__Output>
      TruncateTokensResponse: MessageTypeDefinition<_postcompact_v1_TruncateTokensResponse, _postcompact_v1_TruncateTokensResponse__Output>
      UpsertTaskRequest: MessageTypeDefinition<_postcompact_v1_UpsertTaskRequest, _postcompact_v1_UpsertTaskRequest__Output>
      UpsertTaskResponse: MessageTypeDefinition<_postcompact_v1_UpsertTaskResponse, _postcompact_v1_UpsertTaskResponse__Output>
      WriteCheck: EnumTypeDefinition
    }
  }
}

