// Original file: ../../proto/postcompact/v1/postcompact.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { CheckStaleRequest as _postcompact_v1_CheckStaleRequest, CheckStaleRequest__Output as _postcompact_v1_CheckStaleRequest__Output } from '../../postcompact/v1/CheckStaleRequest.js';
import type { CheckStaleResponse as _postcompact_v1_CheckStaleResponse, CheckStaleResponse__Output as _postcompact_v1_CheckStaleResponse__Output } from '../../postcompact/v1/CheckStaleResponse.js';
import type { CheckWriteRequest as _postcompact_v1_CheckWriteRequest, CheckWriteRequest__Output as _postcompact_v1_CheckWriteRequest__Output } from '../../postcompact/v1/CheckWriteRequest.js';
import type { CheckWriteResponse as _postcompact_v1_CheckWriteResponse, CheckWriteResponse__Output as _postcompact_v1_CheckWriteResponse__Output } from '../../postcompact/v1/CheckWriteResponse.js';
import type { CloseSessionRequest as _postcompact_v1_CloseSessionRequest, CloseSessionRequest__Output as _postcompact_v1_CloseSessionRequest__Output } from '../../postcompact/v1/CloseSessionRequest.js';
import type { CloseSessionResponse as _postcompact_v1_CloseSessionResponse, CloseSessionResponse__Output as _postcompact_v1_CloseSessionResponse__Output } from '../../postcompact/v1/CloseSessionResponse.js';
import type { CompactRequest as _postcompact_v1_CompactRequest, CompactRequest__Output as _postcompact_v1_CompactRequest__Output } from '../../postcompact/v1/CompactRequest.js';
import type { CompactResponse as _postcompact_v1_CompactResponse, CompactResponse__Output as _postcompact_v1_CompactResponse__Output } from '../../postcompact/v1/CompactResponse.js';
import type { CountTokensBatchRequest as _postcompact_v1_CountTokensBatchRequest, CountTokensBatchRequest__Output as _postcompact_v1_CountTokensBatchRequest__Output } from '../../postcompact/v1/CountTokensBatchRequest.js';
import type { CountTokensBatchResponse as _postcompact_v1_CountTokensBatchResponse, CountTokensBatchResponse__Output as _postcompact_v1_CountTokensBatchResponse__Output } from '../../postcompact/v1/CountTokensBatchResponse.js';
import type { CountTokensRequest as _postcompact_v1_CountTokensRequest, CountTokensRequest__Output as _postcompact_v1_CountTokensRequest__Output } from '../../postcompact/v1/CountTokensRequest.js';
import type { CountTokensResponse as _postcompact_v1_CountTokensResponse, CountTokensResponse__Output as _postcompact_v1_CountTokensResponse__Output } from '../../postcompact/v1/CountTokensResponse.js';
import type { EndAgentRequest as _postcompact_v1_EndAgentRequest, EndAgentRequest__Output as _postcompact_v1_EndAgentRequest__Output } from '../../postcompact/v1/EndAgentRequest.js';
import type { EndAgentResponse as _postcompact_v1_EndAgentResponse, EndAgentResponse__Output as _postcompact_v1_EndAgentResponse__Output } from '../../postcompact/v1/EndAgentResponse.js';
import type { EstimateTokensBatchRequest as _postcompact_v1_EstimateTokensBatchRequest, EstimateTokensBatchRequest__Output as _postcompact_v1_EstimateTokensBatchRequest__Output } from '../../postcompact/v1/EstimateTokensBatchRequest.js';
import type { EstimateTokensBatchResponse as _postcompact_v1_EstimateTokensBatchResponse, EstimateTokensBatchResponse__Output as _postcompact_v1_EstimateTokensBatchResponse__Output } from '../../postcompact/v1/EstimateTokensBatchResponse.js';
import type { EstimateTokensRequest as _postcompact_v1_EstimateTokensRequest, EstimateTokensRequest__Output as _postcompact_v1_EstimateTokensRequest__Output } from '../../postcompact/v1/EstimateTokensRequest.js';
import type { EstimateTokensResponse as _postcompact_v1_EstimateTokensResponse, EstimateTokensResponse__Output as _postcompact_v1_EstimateTokensResponse__Output } from '../../postcompact/v1/EstimateTokensResponse.js';
import type { GetServerInfoRequest as _postcompact_v1_GetServerInfoRequest, GetServerInfoRequest__Output as _postcompact_v1_GetServerInfoRequest__Output } from '../../postcompact/v1/GetServerInfoRequest.js';
import type { GetServerInfoResponse as _postcompact_v1_GetServerInfoResponse, GetServerInfoResponse__Output as _postcompact_v1_GetServerInfoResponse__Output } from '../../postcompact/v1/GetServerInfoResponse.js';
import type { GetStatsRequest as _postcompact_v1_GetStatsRequest, GetStatsRequest__Output as _postcompact_v1_GetStatsRequest__Output } from '../../postcompact/v1/GetStatsRequest.js';
import type { GetStatsResponse as _postcompact_v1_GetStatsResponse, GetStatsResponse__Output as _postcompact_v1_GetStatsResponse__Output } from '../../postcompact/v1/GetStatsResponse.js';
import type { ImportTranscriptRequest as _postcompact_v1_ImportTranscriptRequest, ImportTranscriptRequest__Output as _postcompact_v1_ImportTranscriptRequest__Output } from '../../postcompact/v1/ImportTranscriptRequest.js';
import type { ImportTranscriptResponse as _postcompact_v1_ImportTranscriptResponse, ImportTranscriptResponse__Output as _postcompact_v1_ImportTranscriptResponse__Output } from '../../postcompact/v1/ImportTranscriptResponse.js';
import type { ListSessionsRequest as _postcompact_v1_ListSessionsRequest, ListSessionsRequest__Output as _postcompact_v1_ListSessionsRequest__Output } from '../../postcompact/v1/ListSessionsRequest.js';
import type { ListSessionsResponse as _postcompact_v1_ListSessionsResponse, ListSessionsResponse__Output as _postcompact_v1_ListSessionsResponse__Output } from '../../postcompact/v1/ListSessionsResponse.js';
import type { MergeFileStateRequest as _postcompact_v1_MergeFileStateRequest, MergeFileStateRequest__Output as _postcompact_v1_MergeFileStateRequest__Output } from '../../postcompact/v1/MergeFileStateRequest.js';
import type { MergeFileStateResponse as _postcompact_v1_MergeFileStateResponse, MergeFileStateResponse__Output as _postcompact_v1_MergeFileStateResponse__Output } from '../../postcompact/v1/MergeFileStateResponse.js';
import type { OpenSessionRequest as _postcompact_v1_OpenSessionRequest, OpenSessionRequest__Output as _postcompact_v1_OpenSessionRequest__Output } from '../../postcompact/v1/OpenSessionRequest.js';
import type { OpenSessionResponse as _postcompact_v1_OpenSessionResponse, OpenSessionResponse__Output as _postcompact_v1_OpenSessionResponse__Output } from '../../postcompact/v1/OpenSessionResponse.js';
import type { PreviewCompactRequest as _postcompact_v1_PreviewCompactRequest, PreviewCompactRequest__Output as _postcompact_v1_PreviewCompactRequest__Output } from '../../postcompact/v1/PreviewCompactRequest.js';
import type { PreviewCompactResponse as _postcompact_v1_PreviewCompactResponse, PreviewCompactResponse__Output as _postcompact_v1_PreviewCompactResponse__Output } from '../../postcompact/v1/PreviewCompactResponse.js';
import type { ReadFileRequest as _postcompact_v1_ReadFileRequest, ReadFileRequest__Output as _postcompact_v1_ReadFileRequest__Output } from '../../postcompact/v1/ReadFileRequest.js';
import type { ReadFileResponse as _postcompact_v1_ReadFileResponse, ReadFileResponse__Output as _postcompact_v1_ReadFileResponse__Output } from '../../postcompact/v1/ReadFileResponse.js';
import type { RecordReadRequest as _postcompact_v1_RecordReadRequest, RecordReadRequest__Output as _postcompact_v1_RecordReadRequest__Output } from '../../postcompact/v1/RecordReadRequest.js';
import type { RecordReadResponse as _postcompact_v1_RecordReadResponse, RecordReadResponse__Output as _postcompact_v1_RecordReadResponse__Output } from '../../postcompact/v1/RecordReadResponse.js';
import type { RecordSkillRequest as _postcompact_v1_RecordSkillRequest, RecordSkillRequest__Output as _postcompact_v1_RecordSkillRequest__Output } from '../../postcompact/v1/RecordSkillRequest.js';
import type { RecordSkillResponse as _postcompact_v1_RecordSkillResponse, RecordSkillResponse__Output as _postcompact_v1_RecordSkillResponse__Output } from '../../postcompact/v1/RecordSkillResponse.js';
import type { RecordWriteRequest as _postcompact_v1_RecordWriteRequest, RecordWriteRequest__Output as _postcompact_v1_RecordWriteRequest__Output } from '../../postcompact/v1/RecordWriteRequest.js';
import type { RecordWriteResponse as _postcompact_v1_RecordWriteResponse, RecordWriteResponse__Output as _postcompact_v1_RecordWriteResponse__Output } from '../../postcompact/v1/RecordWriteResponse.js';
import type { SetCatalogRequest as _postcompact_v1_SetCatalogRequest, SetCatalogRequest__Output as _postcompact_v1_SetCatalogRequest__Output } from '../../postcompact/v1/SetCatalogRequest.js';
import type { SetCatalogResponse as _postcompact_v1_SetCatalogResponse, SetCatalogResponse__Output as _postcompact_v1_SetCatalogResponse__Output } from '../../postcompact/v1/SetCatalogResponse.js';
import type { SetModeRequest as _postcompact_v1_SetModeRequest, SetModeRequest__Output as _postcompact_v1_SetModeRequest__Output } from '../../postcompact/v1/SetModeRequest.js';
import type { SetModeResponse as _postcompact_v1_SetModeResponse, SetModeResponse__Output as _postcompact_v1_SetModeResponse__Output } from '../../postcompact/v1/SetModeResponse.js';
import type { SetPlanRequest as _postcompact_v1_SetPlanRequest, SetPlanRequest__Output as _postcompact_v1_SetPlanRequest__Output } from '../../postcompact/v1/SetPlanRequest.js';
import type { SetPlanResponse as _postcompact_v1_SetPlanResponse, SetPlanResponse__Output as _postcompact_v1_SetPlanResponse__Output } from '../../postcompact/v1/SetPlanResponse.js';
import type { StartAgentRequest as _postcompact_v1_StartAgentRequest, StartAgentRequest__Output as _postcompact_v1_StartAgentRequest__Output } from '../../postcompact/v1/StartAgentRequest.js';
import type { StartAgentResponse as _postcompact_v1_StartAgentResponse, StartAgentResponse__Output as _postcompact_v1_StartAgentResponse__Output } from '../../postcompact/v1/StartAgentResponse.js';
import type { TruncateTokensBatchRequest as _postcompact_v1_TruncateTokensBatchRequest, TruncateTokensBatchRequest__Output as _postcompact_v1_TruncateTokensBatchRequest__Output } from '../../postcompact/v1/TruncateTokensBatchRequest.js';
import type { TruncateTokensBatchResponse as _postcompact_v1_TruncateTokensBatchResponse, TruncateTokensBatchResponse__Output as _postcompact_v1_TruncateTokensBatchResponse__Output } from '../../postcompact/v1/TruncateTokensBatchResponse.js';
import type { TruncateTokensRequest as _postcompact_v1_TruncateTokensRequest, TruncateTokensRequest__Output as _postcompact_v1_TruncateTokensRequest__Output } from '../../postcompact/v1/TruncateTokensRequest.js';
import type { TruncateTokensResponse as _postcompact_v1_TruncateTokensResponse, TruncateTokensResponse__Output as _postcompact_v1_TruncateTokensResponse__Output } from '../../postcompact/v1/TruncateTokensResponse.js';
import type { UpsertTaskRequest as _postcompact_v1_UpsertTaskRequest, UpsertTaskRequest__Output as _postcompact_v1_UpsertTaskRequest__Output } from '../../postcompact/v1/UpsertTaskRequest.js';
import type { UpsertTaskResponse as _postcompact_v1_UpsertTaskResponse, UpsertTaskResponse__Output as _postcompact_v1_UpsertTaskResponse__Output } from '../../postcompact/v1/UpsertTaskResponse.js';

export interface PostcompactServiceClient extends grpc.Client {
  CheckStale(argument: _postcompact_v1_CheckStaleRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CheckStaleResponse__Output>): grpc.ClientUnaryCall;
  CheckStale(argument: _postcompact_v1_CheckStaleRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_CheckStaleResponse__Output>): grpc.ClientUnaryCall;
  CheckStale(argument: _postcompact_v1_CheckStaleRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CheckStaleResponse__Output>): grpc.ClientUnaryCall;
  CheckStale(argument: _postcompact_v1_CheckStaleRequest, callback: grpc.requestCallback<_postcompact_v1_CheckStaleResponse__Output>): grpc.ClientUnaryCall;
  checkStale(argument: _postcompact_v1_CheckStaleRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CheckStaleResponse__Output>): grpc.ClientUnaryCall;
  checkStale(argument: _postcompact_v1_CheckStaleRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_CheckStaleResponse__Output>): grpc.ClientUnaryCall;
  checkStale(argument: _postcompact_v1_CheckStaleRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CheckStaleResponse__Output>): grpc.ClientUnaryCall;
  checkStale(argument: _postcompact_v1_CheckStaleRequest, callback: grpc.requestCallback<_postcompact_v1_CheckStaleResponse__Output>): grpc.ClientUnaryCall;
  
  CheckWrite(argument: _postcompact_v1_CheckWriteRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CheckWriteResponse__Output>): grpc.ClientUnaryCall;
  CheckWrite(argument: _postcompact_v1_CheckWriteRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_CheckWriteResponse__Output>): grpc.ClientUnaryCall;
  CheckWrite(argument: _postcompact_v1_CheckWriteRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CheckWriteResponse__Output>): grpc.ClientUnaryCall;
  CheckWrite(argument: _postcompact_v1_CheckWriteRequest, callback: grpc.requestCallback<_postcompact_v1_CheckWriteResponse__Output>): grpc.ClientUnaryCall;
  checkWrite(argument: _postcompact_v1_CheckWriteRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CheckWriteResponse__Output>): grpc.ClientUnaryCall;
  checkWrite(argument: _postcompact_v1_CheckWriteRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_CheckWriteResponse__Output>): grpc.ClientUnaryCall;
  checkWrite(argument: _postcompact_v1_CheckWriteRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CheckWriteResponse__Output>): grpc.ClientUnaryCall;
  checkWrite(argument: _postcompact_v1_CheckWriteRequest, callback: grpc.requestCallback<_postcompact_v1_CheckWriteResponse__Output>): grpc.ClientUnaryCall;
  
  CloseSession(argument: _postcompact_v1_CloseSessionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CloseSessionResponse__Output>): grpc.ClientUnaryCall;
  CloseSession(argument: _postcompact_v1_CloseSessionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_CloseSessionResponse__Output>): grpc.ClientUnaryCall;
  CloseSession(argument: _postcompact_v1_CloseSessionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CloseSessionResponse__Output>): grpc.ClientUnaryCall;
  CloseSession(argument: _postcompact_v1_CloseSessionRequest, callback: grpc.requestCallback<_postcompact_v1_CloseSessionResponse__Output>): grpc.ClientUnaryCall;
  closeSession(argument: _postcompact_v1_CloseSessionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CloseSessionResponse__Output>): grpc.ClientUnaryCall;
  closeSession(argument: _postcompact_v1_CloseSessionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_CloseSessionResponse__Output>): grpc.ClientUnaryCall;
  closeSession(argument: _postcompact_v1_CloseSessionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CloseSessionResponse__Output>): grpc.ClientUnaryCall;
  closeSession(argument: _postcompact_v1_CloseSessionRequest, callback: grpc.requestCallback<_postcompact_v1_CloseSessionResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Compaction
   */
  Compact(argument: _postcompact_v1_CompactRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CompactResponse__Output>): grpc.ClientUnaryCall;
  Compact(argument: _postcompact_v1_CompactRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_CompactResponse__Output>): grpc.ClientUnaryCall;
  Compact(argument: _postcompact_v1_CompactRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CompactResponse__Output>): grpc.ClientUnaryCall;
  Compact(argument: _postcompact_v1_CompactRequest, callback: grpc.requestCallback<_postcompact_v1_CompactResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Compaction
   */
  compact(argument: _postcompact_v1_CompactRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CompactResponse__Output>): grpc.ClientUnaryCall;
  compact(argument: _postcompact_v1_CompactRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_CompactResponse__Output>): grpc.ClientUnaryCall;
  compact(argument: _postcompact_v1_CompactRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CompactResponse__Output>): grpc.ClientUnaryCall;
  compact(argument: _postcompact_v1_CompactRequest, callback: grpc.requestCallback<_postcompact_v1_CompactResponse__Output>): grpc.ClientUnaryCall;
  
  CountTokens(argument: _postcompact_v1_CountTokensRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CountTokensResponse__Output>): grpc.ClientUnaryCall;
  CountTokens(argument: _postcompact_v1_CountTokensRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_CountTokensResponse__Output>): grpc.ClientUnaryCall;
  CountTokens(argument: _postcompact_v1_CountTokensRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CountTokensResponse__Output>): grpc.ClientUnaryCall;
  CountTokens(argument: _postcompact_v1_CountTokensRequest, callback: grpc.requestCallback<_postcompact_v1_CountTokensResponse__Output>): grpc.ClientUnaryCall;
  countTokens(argument: _postcompact_v1_CountTokensRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CountTokensResponse__Output>): grpc.ClientUnaryCall;
  countTokens(argument: _postcompact_v1_CountTokensRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_CountTokensResponse__Output>): grpc.ClientUnaryCall;
  countTokens(argument: _postcompact_v1_CountTokensRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CountTokensResponse__Output>): grpc.ClientUnaryCall;
  countTokens(argument: _postcompact_v1_CountTokensRequest, callback: grpc.requestCallback<_postcompact_v1_CountTokensResponse__Output>): grpc.ClientUnaryCall;
  
  CountTokensBatch(argument: _postcompact_v1_CountTokensBatchRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CountTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  CountTokensBatch(argument: _postcompact_v1_CountTokensBatchRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_CountTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  CountTokensBatch(argument: _postcompact_v1_CountTokensBatchRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CountTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  CountTokensBatch(argument: _postcompact_v1_CountTokensBatchRequest, callback: grpc.requestCallback<_postcompact_v1_CountTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  countTokensBatch(argument: _postcompact_v1_CountTokensBatchRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CountTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  countTokensBatch(argument: _postcompact_v1_CountTokensBatchRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_CountTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  countTokensBatch(argument: _postcompact_v1_CountTokensBatchRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_CountTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  countTokensBatch(argument: _postcompact_v1_CountTokensBatchRequest, callback: grpc.requestCallback<_postcompact_v1_CountTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Ends a sub-agent: its file state, skills, catalogue and plan file are forgotten (memory and
   * disk) and its slot is free. The main thread ("") ends with its session (CloseSession).
   */
  EndAgent(argument: _postcompact_v1_EndAgentRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_EndAgentResponse__Output>): grpc.ClientUnaryCall;
  EndAgent(argument: _postcompact_v1_EndAgentRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_EndAgentResponse__Output>): grpc.ClientUnaryCall;
  EndAgent(argument: _postcompact_v1_EndAgentRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_EndAgentResponse__Output>): grpc.ClientUnaryCall;
  EndAgent(argument: _postcompact_v1_EndAgentRequest, callback: grpc.requestCallback<_postcompact_v1_EndAgentResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Ends a sub-agent: its file state, skills, catalogue and plan file are forgotten (memory and
   * disk) and its slot is free. The main thread ("") ends with its session (CloseSession).
   */
  endAgent(argument: _postcompact_v1_EndAgentRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_EndAgentResponse__Output>): grpc.ClientUnaryCall;
  endAgent(argument: _postcompact_v1_EndAgentRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_EndAgentResponse__Output>): grpc.ClientUnaryCall;
  endAgent(argument: _postcompact_v1_EndAgentRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_EndAgentResponse__Output>): grpc.ClientUnaryCall;
  endAgent(argument: _postcompact_v1_EndAgentRequest, callback: grpc.requestCallback<_postcompact_v1_EndAgentResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Tokens
   */
  EstimateTokens(argument: _postcompact_v1_EstimateTokensRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_EstimateTokensResponse__Output>): grpc.ClientUnaryCall;
  EstimateTokens(argument: _postcompact_v1_EstimateTokensRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_EstimateTokensResponse__Output>): grpc.ClientUnaryCall;
  EstimateTokens(argument: _postcompact_v1_EstimateTokensRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_EstimateTokensResponse__Output>): grpc.ClientUnaryCall;
  EstimateTokens(argument: _postcompact_v1_EstimateTokensRequest, callback: grpc.requestCallback<_postcompact_v1_EstimateTokensResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Tokens
   */
  estimateTokens(argument: _postcompact_v1_EstimateTokensRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_EstimateTokensResponse__Output>): grpc.ClientUnaryCall;
  estimateTokens(argument: _postcompact_v1_EstimateTokensRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_EstimateTokensResponse__Output>): grpc.ClientUnaryCall;
  estimateTokens(argument: _postcompact_v1_EstimateTokensRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_EstimateTokensResponse__Output>): grpc.ClientUnaryCall;
  estimateTokens(argument: _postcompact_v1_EstimateTokensRequest, callback: grpc.requestCallback<_postcompact_v1_EstimateTokensResponse__Output>): grpc.ClientUnaryCall;
  
  EstimateTokensBatch(argument: _postcompact_v1_EstimateTokensBatchRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_EstimateTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  EstimateTokensBatch(argument: _postcompact_v1_EstimateTokensBatchRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_EstimateTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  EstimateTokensBatch(argument: _postcompact_v1_EstimateTokensBatchRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_EstimateTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  EstimateTokensBatch(argument: _postcompact_v1_EstimateTokensBatchRequest, callback: grpc.requestCallback<_postcompact_v1_EstimateTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  estimateTokensBatch(argument: _postcompact_v1_EstimateTokensBatchRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_EstimateTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  estimateTokensBatch(argument: _postcompact_v1_EstimateTokensBatchRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_EstimateTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  estimateTokensBatch(argument: _postcompact_v1_EstimateTokensBatchRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_EstimateTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  estimateTokensBatch(argument: _postcompact_v1_EstimateTokensBatchRequest, callback: grpc.requestCallback<_postcompact_v1_EstimateTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Server
   */
  GetServerInfo(argument: _postcompact_v1_GetServerInfoRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_GetServerInfoResponse__Output>): grpc.ClientUnaryCall;
  GetServerInfo(argument: _postcompact_v1_GetServerInfoRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_GetServerInfoResponse__Output>): grpc.ClientUnaryCall;
  GetServerInfo(argument: _postcompact_v1_GetServerInfoRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_GetServerInfoResponse__Output>): grpc.ClientUnaryCall;
  GetServerInfo(argument: _postcompact_v1_GetServerInfoRequest, callback: grpc.requestCallback<_postcompact_v1_GetServerInfoResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Server
   */
  getServerInfo(argument: _postcompact_v1_GetServerInfoRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_GetServerInfoResponse__Output>): grpc.ClientUnaryCall;
  getServerInfo(argument: _postcompact_v1_GetServerInfoRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_GetServerInfoResponse__Output>): grpc.ClientUnaryCall;
  getServerInfo(argument: _postcompact_v1_GetServerInfoRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_GetServerInfoResponse__Output>): grpc.ClientUnaryCall;
  getServerInfo(argument: _postcompact_v1_GetServerInfoRequest, callback: grpc.requestCallback<_postcompact_v1_GetServerInfoResponse__Output>): grpc.ClientUnaryCall;
  
  GetStats(argument: _postcompact_v1_GetStatsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_GetStatsResponse__Output>): grpc.ClientUnaryCall;
  GetStats(argument: _postcompact_v1_GetStatsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_GetStatsResponse__Output>): grpc.ClientUnaryCall;
  GetStats(argument: _postcompact_v1_GetStatsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_GetStatsResponse__Output>): grpc.ClientUnaryCall;
  GetStats(argument: _postcompact_v1_GetStatsRequest, callback: grpc.requestCallback<_postcompact_v1_GetStatsResponse__Output>): grpc.ClientUnaryCall;
  getStats(argument: _postcompact_v1_GetStatsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_GetStatsResponse__Output>): grpc.ClientUnaryCall;
  getStats(argument: _postcompact_v1_GetStatsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_GetStatsResponse__Output>): grpc.ClientUnaryCall;
  getStats(argument: _postcompact_v1_GetStatsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_GetStatsResponse__Output>): grpc.ClientUnaryCall;
  getStats(argument: _postcompact_v1_GetStatsRequest, callback: grpc.requestCallback<_postcompact_v1_GetStatsResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Transcripts: a session's state built from a Claude Code transcript (JSONL).
   */
  ImportTranscript(argument: _postcompact_v1_ImportTranscriptRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_ImportTranscriptResponse__Output>): grpc.ClientUnaryCall;
  ImportTranscript(argument: _postcompact_v1_ImportTranscriptRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_ImportTranscriptResponse__Output>): grpc.ClientUnaryCall;
  ImportTranscript(argument: _postcompact_v1_ImportTranscriptRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_ImportTranscriptResponse__Output>): grpc.ClientUnaryCall;
  ImportTranscript(argument: _postcompact_v1_ImportTranscriptRequest, callback: grpc.requestCallback<_postcompact_v1_ImportTranscriptResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Transcripts: a session's state built from a Claude Code transcript (JSONL).
   */
  importTranscript(argument: _postcompact_v1_ImportTranscriptRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_ImportTranscriptResponse__Output>): grpc.ClientUnaryCall;
  importTranscript(argument: _postcompact_v1_ImportTranscriptRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_ImportTranscriptResponse__Output>): grpc.ClientUnaryCall;
  importTranscript(argument: _postcompact_v1_ImportTranscriptRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_ImportTranscriptResponse__Output>): grpc.ClientUnaryCall;
  importTranscript(argument: _postcompact_v1_ImportTranscriptRequest, callback: grpc.requestCallback<_postcompact_v1_ImportTranscriptResponse__Output>): grpc.ClientUnaryCall;
  
  ListSessions(argument: _postcompact_v1_ListSessionsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
  ListSessions(argument: _postcompact_v1_ListSessionsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
  ListSessions(argument: _postcompact_v1_ListSessionsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
  ListSessions(argument: _postcompact_v1_ListSessionsRequest, callback: grpc.requestCallback<_postcompact_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
  listSessions(argument: _postcompact_v1_ListSessionsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
  listSessions(argument: _postcompact_v1_ListSessionsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
  listSessions(argument: _postcompact_v1_ListSessionsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
  listSessions(argument: _postcompact_v1_ListSessionsRequest, callback: grpc.requestCallback<_postcompact_v1_ListSessionsResponse__Output>): grpc.ClientUnaryCall;
  
  MergeFileState(argument: _postcompact_v1_MergeFileStateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_MergeFileStateResponse__Output>): grpc.ClientUnaryCall;
  MergeFileState(argument: _postcompact_v1_MergeFileStateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_MergeFileStateResponse__Output>): grpc.ClientUnaryCall;
  MergeFileState(argument: _postcompact_v1_MergeFileStateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_MergeFileStateResponse__Output>): grpc.ClientUnaryCall;
  MergeFileState(argument: _postcompact_v1_MergeFileStateRequest, callback: grpc.requestCallback<_postcompact_v1_MergeFileStateResponse__Output>): grpc.ClientUnaryCall;
  mergeFileState(argument: _postcompact_v1_MergeFileStateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_MergeFileStateResponse__Output>): grpc.ClientUnaryCall;
  mergeFileState(argument: _postcompact_v1_MergeFileStateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_MergeFileStateResponse__Output>): grpc.ClientUnaryCall;
  mergeFileState(argument: _postcompact_v1_MergeFileStateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_MergeFileStateResponse__Output>): grpc.ClientUnaryCall;
  mergeFileState(argument: _postcompact_v1_MergeFileStateRequest, callback: grpc.requestCallback<_postcompact_v1_MergeFileStateResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Sessions
   */
  OpenSession(argument: _postcompact_v1_OpenSessionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  OpenSession(argument: _postcompact_v1_OpenSessionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  OpenSession(argument: _postcompact_v1_OpenSessionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  OpenSession(argument: _postcompact_v1_OpenSessionRequest, callback: grpc.requestCallback<_postcompact_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Sessions
   */
  openSession(argument: _postcompact_v1_OpenSessionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  openSession(argument: _postcompact_v1_OpenSessionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  openSession(argument: _postcompact_v1_OpenSessionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  openSession(argument: _postcompact_v1_OpenSessionRequest, callback: grpc.requestCallback<_postcompact_v1_OpenSessionResponse__Output>): grpc.ClientUnaryCall;
  
  PreviewCompact(argument: _postcompact_v1_PreviewCompactRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_PreviewCompactResponse__Output>): grpc.ClientUnaryCall;
  PreviewCompact(argument: _postcompact_v1_PreviewCompactRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_PreviewCompactResponse__Output>): grpc.ClientUnaryCall;
  PreviewCompact(argument: _postcompact_v1_PreviewCompactRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_PreviewCompactResponse__Output>): grpc.ClientUnaryCall;
  PreviewCompact(argument: _postcompact_v1_PreviewCompactRequest, callback: grpc.requestCallback<_postcompact_v1_PreviewCompactResponse__Output>): grpc.ClientUnaryCall;
  previewCompact(argument: _postcompact_v1_PreviewCompactRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_PreviewCompactResponse__Output>): grpc.ClientUnaryCall;
  previewCompact(argument: _postcompact_v1_PreviewCompactRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_PreviewCompactResponse__Output>): grpc.ClientUnaryCall;
  previewCompact(argument: _postcompact_v1_PreviewCompactRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_PreviewCompactResponse__Output>): grpc.ClientUnaryCall;
  previewCompact(argument: _postcompact_v1_PreviewCompactRequest, callback: grpc.requestCallback<_postcompact_v1_PreviewCompactResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Files
   */
  ReadFile(argument: _postcompact_v1_ReadFileRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_ReadFileResponse__Output>): grpc.ClientUnaryCall;
  ReadFile(argument: _postcompact_v1_ReadFileRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_ReadFileResponse__Output>): grpc.ClientUnaryCall;
  ReadFile(argument: _postcompact_v1_ReadFileRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_ReadFileResponse__Output>): grpc.ClientUnaryCall;
  ReadFile(argument: _postcompact_v1_ReadFileRequest, callback: grpc.requestCallback<_postcompact_v1_ReadFileResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Files
   */
  readFile(argument: _postcompact_v1_ReadFileRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_ReadFileResponse__Output>): grpc.ClientUnaryCall;
  readFile(argument: _postcompact_v1_ReadFileRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_ReadFileResponse__Output>): grpc.ClientUnaryCall;
  readFile(argument: _postcompact_v1_ReadFileRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_ReadFileResponse__Output>): grpc.ClientUnaryCall;
  readFile(argument: _postcompact_v1_ReadFileRequest, callback: grpc.requestCallback<_postcompact_v1_ReadFileResponse__Output>): grpc.ClientUnaryCall;
  
  RecordRead(argument: _postcompact_v1_RecordReadRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_RecordReadResponse__Output>): grpc.ClientUnaryCall;
  RecordRead(argument: _postcompact_v1_RecordReadRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_RecordReadResponse__Output>): grpc.ClientUnaryCall;
  RecordRead(argument: _postcompact_v1_RecordReadRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_RecordReadResponse__Output>): grpc.ClientUnaryCall;
  RecordRead(argument: _postcompact_v1_RecordReadRequest, callback: grpc.requestCallback<_postcompact_v1_RecordReadResponse__Output>): grpc.ClientUnaryCall;
  recordRead(argument: _postcompact_v1_RecordReadRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_RecordReadResponse__Output>): grpc.ClientUnaryCall;
  recordRead(argument: _postcompact_v1_RecordReadRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_RecordReadResponse__Output>): grpc.ClientUnaryCall;
  recordRead(argument: _postcompact_v1_RecordReadRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_RecordReadResponse__Output>): grpc.ClientUnaryCall;
  recordRead(argument: _postcompact_v1_RecordReadRequest, callback: grpc.requestCallback<_postcompact_v1_RecordReadResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Skills, plan, mode, background tasks
   */
  RecordSkill(argument: _postcompact_v1_RecordSkillRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_RecordSkillResponse__Output>): grpc.ClientUnaryCall;
  RecordSkill(argument: _postcompact_v1_RecordSkillRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_RecordSkillResponse__Output>): grpc.ClientUnaryCall;
  RecordSkill(argument: _postcompact_v1_RecordSkillRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_RecordSkillResponse__Output>): grpc.ClientUnaryCall;
  RecordSkill(argument: _postcompact_v1_RecordSkillRequest, callback: grpc.requestCallback<_postcompact_v1_RecordSkillResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Skills, plan, mode, background tasks
   */
  recordSkill(argument: _postcompact_v1_RecordSkillRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_RecordSkillResponse__Output>): grpc.ClientUnaryCall;
  recordSkill(argument: _postcompact_v1_RecordSkillRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_RecordSkillResponse__Output>): grpc.ClientUnaryCall;
  recordSkill(argument: _postcompact_v1_RecordSkillRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_RecordSkillResponse__Output>): grpc.ClientUnaryCall;
  recordSkill(argument: _postcompact_v1_RecordSkillRequest, callback: grpc.requestCallback<_postcompact_v1_RecordSkillResponse__Output>): grpc.ClientUnaryCall;
  
  RecordWrite(argument: _postcompact_v1_RecordWriteRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_RecordWriteResponse__Output>): grpc.ClientUnaryCall;
  RecordWrite(argument: _postcompact_v1_RecordWriteRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_RecordWriteResponse__Output>): grpc.ClientUnaryCall;
  RecordWrite(argument: _postcompact_v1_RecordWriteRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_RecordWriteResponse__Output>): grpc.ClientUnaryCall;
  RecordWrite(argument: _postcompact_v1_RecordWriteRequest, callback: grpc.requestCallback<_postcompact_v1_RecordWriteResponse__Output>): grpc.ClientUnaryCall;
  recordWrite(argument: _postcompact_v1_RecordWriteRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_RecordWriteResponse__Output>): grpc.ClientUnaryCall;
  recordWrite(argument: _postcompact_v1_RecordWriteRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_RecordWriteResponse__Output>): grpc.ClientUnaryCall;
  recordWrite(argument: _postcompact_v1_RecordWriteRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_RecordWriteResponse__Output>): grpc.ClientUnaryCall;
  recordWrite(argument: _postcompact_v1_RecordWriteRequest, callback: grpc.requestCallback<_postcompact_v1_RecordWriteResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Catalogue: returns the delta to announce now.
   */
  SetCatalog(argument: _postcompact_v1_SetCatalogRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_SetCatalogResponse__Output>): grpc.ClientUnaryCall;
  SetCatalog(argument: _postcompact_v1_SetCatalogRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_SetCatalogResponse__Output>): grpc.ClientUnaryCall;
  SetCatalog(argument: _postcompact_v1_SetCatalogRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_SetCatalogResponse__Output>): grpc.ClientUnaryCall;
  SetCatalog(argument: _postcompact_v1_SetCatalogRequest, callback: grpc.requestCallback<_postcompact_v1_SetCatalogResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Catalogue: returns the delta to announce now.
   */
  setCatalog(argument: _postcompact_v1_SetCatalogRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_SetCatalogResponse__Output>): grpc.ClientUnaryCall;
  setCatalog(argument: _postcompact_v1_SetCatalogRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_SetCatalogResponse__Output>): grpc.ClientUnaryCall;
  setCatalog(argument: _postcompact_v1_SetCatalogRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_SetCatalogResponse__Output>): grpc.ClientUnaryCall;
  setCatalog(argument: _postcompact_v1_SetCatalogRequest, callback: grpc.requestCallback<_postcompact_v1_SetCatalogResponse__Output>): grpc.ClientUnaryCall;
  
  SetMode(argument: _postcompact_v1_SetModeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_SetModeResponse__Output>): grpc.ClientUnaryCall;
  SetMode(argument: _postcompact_v1_SetModeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_SetModeResponse__Output>): grpc.ClientUnaryCall;
  SetMode(argument: _postcompact_v1_SetModeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_SetModeResponse__Output>): grpc.ClientUnaryCall;
  SetMode(argument: _postcompact_v1_SetModeRequest, callback: grpc.requestCallback<_postcompact_v1_SetModeResponse__Output>): grpc.ClientUnaryCall;
  setMode(argument: _postcompact_v1_SetModeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_SetModeResponse__Output>): grpc.ClientUnaryCall;
  setMode(argument: _postcompact_v1_SetModeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_SetModeResponse__Output>): grpc.ClientUnaryCall;
  setMode(argument: _postcompact_v1_SetModeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_SetModeResponse__Output>): grpc.ClientUnaryCall;
  setMode(argument: _postcompact_v1_SetModeRequest, callback: grpc.requestCallback<_postcompact_v1_SetModeResponse__Output>): grpc.ClientUnaryCall;
  
  SetPlan(argument: _postcompact_v1_SetPlanRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_SetPlanResponse__Output>): grpc.ClientUnaryCall;
  SetPlan(argument: _postcompact_v1_SetPlanRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_SetPlanResponse__Output>): grpc.ClientUnaryCall;
  SetPlan(argument: _postcompact_v1_SetPlanRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_SetPlanResponse__Output>): grpc.ClientUnaryCall;
  SetPlan(argument: _postcompact_v1_SetPlanRequest, callback: grpc.requestCallback<_postcompact_v1_SetPlanResponse__Output>): grpc.ClientUnaryCall;
  setPlan(argument: _postcompact_v1_SetPlanRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_SetPlanResponse__Output>): grpc.ClientUnaryCall;
  setPlan(argument: _postcompact_v1_SetPlanRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_SetPlanResponse__Output>): grpc.ClientUnaryCall;
  setPlan(argument: _postcompact_v1_SetPlanRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_SetPlanResponse__Output>): grpc.ClientUnaryCall;
  setPlan(argument: _postcompact_v1_SetPlanRequest, callback: grpc.requestCallback<_postcompact_v1_SetPlanResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Agents
   */
  StartAgent(argument: _postcompact_v1_StartAgentRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_StartAgentResponse__Output>): grpc.ClientUnaryCall;
  StartAgent(argument: _postcompact_v1_StartAgentRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_StartAgentResponse__Output>): grpc.ClientUnaryCall;
  StartAgent(argument: _postcompact_v1_StartAgentRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_StartAgentResponse__Output>): grpc.ClientUnaryCall;
  StartAgent(argument: _postcompact_v1_StartAgentRequest, callback: grpc.requestCallback<_postcompact_v1_StartAgentResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Agents
   */
  startAgent(argument: _postcompact_v1_StartAgentRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_StartAgentResponse__Output>): grpc.ClientUnaryCall;
  startAgent(argument: _postcompact_v1_StartAgentRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_StartAgentResponse__Output>): grpc.ClientUnaryCall;
  startAgent(argument: _postcompact_v1_StartAgentRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_StartAgentResponse__Output>): grpc.ClientUnaryCall;
  startAgent(argument: _postcompact_v1_StartAgentRequest, callback: grpc.requestCallback<_postcompact_v1_StartAgentResponse__Output>): grpc.ClientUnaryCall;
  
  TruncateTokens(argument: _postcompact_v1_TruncateTokensRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_TruncateTokensResponse__Output>): grpc.ClientUnaryCall;
  TruncateTokens(argument: _postcompact_v1_TruncateTokensRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_TruncateTokensResponse__Output>): grpc.ClientUnaryCall;
  TruncateTokens(argument: _postcompact_v1_TruncateTokensRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_TruncateTokensResponse__Output>): grpc.ClientUnaryCall;
  TruncateTokens(argument: _postcompact_v1_TruncateTokensRequest, callback: grpc.requestCallback<_postcompact_v1_TruncateTokensResponse__Output>): grpc.ClientUnaryCall;
  truncateTokens(argument: _postcompact_v1_TruncateTokensRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_TruncateTokensResponse__Output>): grpc.ClientUnaryCall;
  truncateTokens(argument: _postcompact_v1_TruncateTokensRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_TruncateTokensResponse__Output>): grpc.ClientUnaryCall;
  truncateTokens(argument: _postcompact_v1_TruncateTokensRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_TruncateTokensResponse__Output>): grpc.ClientUnaryCall;
  truncateTokens(argument: _postcompact_v1_TruncateTokensRequest, callback: grpc.requestCallback<_postcompact_v1_TruncateTokensResponse__Output>): grpc.ClientUnaryCall;
  
  TruncateTokensBatch(argument: _postcompact_v1_TruncateTokensBatchRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_TruncateTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  TruncateTokensBatch(argument: _postcompact_v1_TruncateTokensBatchRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_TruncateTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  TruncateTokensBatch(argument: _postcompact_v1_TruncateTokensBatchRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_TruncateTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  TruncateTokensBatch(argument: _postcompact_v1_TruncateTokensBatchRequest, callback: grpc.requestCallback<_postcompact_v1_TruncateTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  truncateTokensBatch(argument: _postcompact_v1_TruncateTokensBatchRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_TruncateTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  truncateTokensBatch(argument: _postcompact_v1_TruncateTokensBatchRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_TruncateTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  truncateTokensBatch(argument: _postcompact_v1_TruncateTokensBatchRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_TruncateTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  truncateTokensBatch(argument: _postcompact_v1_TruncateTokensBatchRequest, callback: grpc.requestCallback<_postcompact_v1_TruncateTokensBatchResponse__Output>): grpc.ClientUnaryCall;
  
  UpsertTask(argument: _postcompact_v1_UpsertTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_UpsertTaskResponse__Output>): grpc.ClientUnaryCall;
  UpsertTask(argument: _postcompact_v1_UpsertTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_UpsertTaskResponse__Output>): grpc.ClientUnaryCall;
  UpsertTask(argument: _postcompact_v1_UpsertTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_UpsertTaskResponse__Output>): grpc.ClientUnaryCall;
  UpsertTask(argument: _postcompact_v1_UpsertTaskRequest, callback: grpc.requestCallback<_postcompact_v1_UpsertTaskResponse__Output>): grpc.ClientUnaryCall;
  upsertTask(argument: _postcompact_v1_UpsertTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_UpsertTaskResponse__Output>): grpc.ClientUnaryCall;
  upsertTask(argument: _postcompact_v1_UpsertTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_postcompact_v1_UpsertTaskResponse__Output>): grpc.ClientUnaryCall;
  upsertTask(argument: _postcompact_v1_UpsertTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_postcompact_v1_UpsertTaskResponse__Output>): grpc.ClientUnaryCall;
  upsertTask(argument: _postcompact_v1_UpsertTaskRequest, callback: grpc.requestCallback<_postcompact_v1_UpsertTaskResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface PostcompactServiceHandlers extends grpc.UntypedServiceImplementation {
  CheckStale: grpc.handleUnaryCall<_postcompact_v1_CheckStaleRequest__Output, _postcompact_v1_CheckStaleResponse>;
  
  CheckWrite: grpc.handleUnaryCall<_postcompact_v1_CheckWriteRequest__Output, _postcompact_v1_CheckWriteResponse>;
  
  CloseSession: grpc.handleUnaryCall<_postcompact_v1_CloseSessionRequest__Output, _postcompact_v1_CloseSessionResponse>;
  
  /**
   * Compaction
   */
  Compact: grpc.handleUnaryCall<_postcompact_v1_CompactRequest__Output, _postcompact_v1_CompactResponse>;
  
  CountTokens: grpc.handleUnaryCall<_postcompact_v1_CountTokensRequest__Output, _postcompact_v1_CountTokensResponse>;
  
  CountTokensBatch: grpc.handleUnaryCall<_postcompact_v1_CountTokensBatchRequest__Output, _postcompact_v1_CountTokensBatchResponse>;
  
  /**
   * Ends a sub-agent: its file state, skills, catalogue and plan file are forgotten (memory and
   * disk) and its slot is free. The main thread ("") ends with its session (CloseSession).
   */
  EndAgent: grpc.handleUnaryCall<_postcompact_v1_EndAgentRequest__Output, _postcompact_v1_EndAgentResponse>;
  
  /**
   * Tokens
   */
  EstimateTokens: grpc.handleUnaryCall<_postcompact_v1_EstimateTokensRequest__Output, _postcompact_v1_EstimateTokensResponse>;
  
  EstimateTokensBatch: grpc.handleUnaryCall<_postcompact_v1_EstimateTokensBatchRequest__Output, _postcompact_v1_EstimateTokensBatchResponse>;
  
  /**
   * Server
   */
  GetServerInfo: grpc.handleUnaryCall<_postcompact_v1_GetServerInfoRequest__Output, _postcompact_v1_GetServerInfoResponse>;
  
  GetStats: grpc.handleUnaryCall<_postcompact_v1_GetStatsRequest__Output, _postcompact_v1_GetStatsResponse>;
  
  /**
   * Transcripts: a session's state built from a Claude Code transcript (JSONL).
   */
  ImportTranscript: grpc.handleUnaryCall<_postcompact_v1_ImportTranscriptRequest__Output, _postcompact_v1_ImportTranscriptResponse>;
  
  ListSessions: grpc.handleUnaryCall<_postcompact_v1_ListSessionsRequest__Output, _postcompact_v1_ListSessionsResponse>;
  
  MergeFileState: grpc.handleUnaryCall<_postcompact_v1_MergeFileStateRequest__Output, _postcompact_v1_MergeFileStateResponse>;
  
  /**
   * Sessions
   */
  OpenSession: grpc.handleUnaryCall<_postcompact_v1_OpenSessionRequest__Output, _postcompact_v1_OpenSessionResponse>;
  
  PreviewCompact: grpc.handleUnaryCall<_postcompact_v1_PreviewCompactRequest__Output, _postcompact_v1_PreviewCompactResponse>;
  
  /**
   * Files
   */
  ReadFile: grpc.handleUnaryCall<_postcompact_v1_ReadFileRequest__Output, _postcompact_v1_ReadFileResponse>;
  
  RecordRead: grpc.handleUnaryCall<_postcompact_v1_RecordReadRequest__Output, _postcompact_v1_RecordReadResponse>;
  
  /**
   * Skills, plan, mode, background tasks
   */
  RecordSkill: grpc.handleUnaryCall<_postcompact_v1_RecordSkillRequest__Output, _postcompact_v1_RecordSkillResponse>;
  
  RecordWrite: grpc.handleUnaryCall<_postcompact_v1_RecordWriteRequest__Output, _postcompact_v1_RecordWriteResponse>;
  
  /**
   * Catalogue: returns the delta to announce now.
   */
  SetCatalog: grpc.handleUnaryCall<_postcompact_v1_SetCatalogRequest__Output, _postcompact_v1_SetCatalogResponse>;
  
  SetMode: grpc.handleUnaryCall<_postcompact_v1_SetModeRequest__Output, _postcompact_v1_SetModeResponse>;
  
  SetPlan: grpc.handleUnaryCall<_postcompact_v1_SetPlanRequest__Output, _postcompact_v1_SetPlanResponse>;
  
  /**
   * Agents
   */
  StartAgent: grpc.handleUnaryCall<_postcompact_v1_StartAgentRequest__Output, _postcompact_v1_StartAgentResponse>;
  
  TruncateTokens: grpc.handleUnaryCall<_postcompact_v1_TruncateTokensRequest__Output, _postcompact_v1_TruncateTokensResponse>;
  
  TruncateTokensBatch: grpc.handleUnaryCall<_postcompact_v1_TruncateTokensBatchRequest__Output, _postcompact_v1_TruncateTokensBatchResponse>;
  
  UpsertTask: grpc.handleUnaryCall<_postcompact_v1_UpsertTaskRequest__Output, _postcompact_v1_UpsertTaskResponse>;
  
}

export interface PostcompactServiceDefinition extends grpc.ServiceDefinition {
  CheckStale: MethodDefinition<_postcompact_v1_CheckStaleRequest, _postcompact_v1_CheckStaleResponse, _postcompact_v1_CheckStaleRequest__Output, _postcompact_v1_CheckStaleResponse__Output>
  CheckWrite: MethodDefinition<_postcompact_v1_CheckWriteRequest, _postcompact_v1_CheckWriteResponse, _postcompact_v1_CheckWriteRequest__Output, _postcompact_v1_CheckWriteResponse__Output>
  CloseSession: MethodDefinition<_postcompact_v1_CloseSessionRequest, _postcompact_v1_CloseSessionResponse, _postcompact_v1_CloseSessionRequest__Output, _postcompact_v1_CloseSessionResponse__Output>
  Compact: MethodDefinition<_postcompact_v1_CompactRequest, _postcompact_v1_CompactResponse, _postcompact_v1_CompactRequest__Output, _postcompact_v1_CompactResponse__Output>
  CountTokens: MethodDefinition<_postcompact_v1_CountTokensRequest, _postcompact_v1_CountTokensResponse, _postcompact_v1_CountTokensRequest__Output, _postcompact_v1_CountTokensResponse__Output>
  CountTokensBatch: MethodDefinition<_postcompact_v1_CountTokensBatchRequest, _postcompact_v1_CountTokensBatchResponse, _postcompact_v1_CountTokensBatchRequest__Output, _postcompact_v1_CountTokensBatchResponse__Output>
  EndAgent: MethodDefinition<_postcompact_v1_EndAgentRequest, _postcompact_v1_EndAgentResponse, _postcompact_v1_EndAgentRequest__Output, _postcompact_v1_EndAgentResponse__Output>
  EstimateTokens: MethodDefinition<_postcompact_v1_EstimateTokensRequest, _postcompact_v1_EstimateTokensResponse, _postcompact_v1_EstimateTokensRequest__Output, _postcompact_v1_EstimateTokensResponse__Output>
  EstimateTokensBatch: MethodDefinition<_postcompact_v1_EstimateTokensBatchRequest, _postcompact_v1_EstimateTokensBatchResponse, _postcompact_v1_EstimateTokensBatchRequest__Output, _postcompact_v1_EstimateTokensBatchResponse__Output>
  GetServerInfo: MethodDefinition<_postcompact_v1_GetServerInfoRequest, _postcompact_v1_GetServerInfoResponse, _postcompact_v1_GetServerInfoRequest__Output, _postcompact_v1_GetServerInfoResponse__Output>
  GetStats: MethodDefinition<_postcompact_v1_GetStatsRequest, _postcompact_v1_GetStatsResponse, _postcompact_v1_GetStatsRequest__Output, _postcompact_v1_GetStatsResponse__Output>
  ImportTranscript: MethodDefinition<_postcompact_v1_ImportTranscriptRequest, _postcompact_v1_ImportTranscriptResponse, _postcompact_v1_ImportTranscriptRequest__Output, _postcompact_v1_ImportTranscriptResponse__Output>
  ListSessions: MethodDefinition<_postcompact_v1_ListSessionsRequest, _postcompact_v1_ListSessionsResponse, _postcompact_v1_ListSessionsRequest__Output, _postcompact_v1_ListSessionsResponse__Output>
  MergeFileState: MethodDefinition<_postcompact_v1_MergeFileStateRequest, _postcompact_v1_MergeFileStateResponse, _postcompact_v1_MergeFileStateRequest__Output, _postcompact_v1_MergeFileStateResponse__Output>
  OpenSession: MethodDefinition<_postcompact_v1_OpenSessionRequest, _postcompact_v1_OpenSessionResponse, _postcompact_v1_OpenSessionRequest__Output, _postcompact_v1_OpenSessionResponse__Output>
  PreviewCompact: MethodDefinition<_postcompact_v1_PreviewCompactRequest, _postcompact_v1_PreviewCompactResponse, _postcompact_v1_PreviewCompactRequest__Output, _postcompact_v1_PreviewCompactResponse__Output>
  ReadFile: MethodDefinition<_postcompact_v1_ReadFileRequest, _postcompact_v1_ReadFileResponse, _postcompact_v1_ReadFileRequest__Output, _postcompact_v1_ReadFileResponse__Output>
  RecordRead: MethodDefinition<_postcompact_v1_RecordReadRequest, _postcompact_v1_RecordReadResponse, _postcompact_v1_RecordReadRequest__Output, _postcompact_v1_RecordReadResponse__Output>
  RecordSkill: MethodDefinition<_postcompact_v1_RecordSkillRequest, _postcompact_v1_RecordSkillResponse, _postcompact_v1_RecordSkillRequest__Output, _postcompact_v1_RecordSkillResponse__Output>
  RecordWrite: MethodDefinition<_postcompact_v1_RecordWriteRequest, _postcompact_v1_RecordWriteResponse, _postcompact_v1_RecordWriteRequest__Output, _postcompact_v1_RecordWriteResponse__Output>
  SetCatalog: MethodDefinition<_postcompact_v1_SetCatalogRequest, _postcompact_v1_SetCatalogResponse, _postcompact_v1_SetCatalogRequest__Output, _postcompact_v1_SetCatalogResponse__Output>
  SetMode: MethodDefinition<_postcompact_v1_SetModeRequest, _postcompact_v1_SetModeResponse, _postcompact_v1_SetModeRequest__Output, _postcompact_v1_SetModeResponse__Output>
  SetPlan: MethodDefinition<_postcompact_v1_SetPlanRequest, _postcompact_v1_SetPlanResponse, _postcompact_v1_SetPlanRequest__Output, _postcompact_v1_SetPlanResponse__Output>
  StartAgent: MethodDefinition<_postcompact_v1_StartAgentRequest, _postcompact_v1_StartAgentResponse, _postcompact_v1_StartAgentRequest__Output, _postcompact_v1_StartAgentResponse__Output>
  TruncateTokens: MethodDefinition<_postcompact_v1_TruncateTokensRequest, _postcompact_v1_TruncateTokensResponse, _postcompact_v1_TruncateTokensRequest__Output, _postcompact_v1_TruncateTokensResponse__Output>
  TruncateTokensBatch: MethodDefinition<_postcompact_v1_TruncateTokensBatchRequest, _postcompact_v1_TruncateTokensBatchResponse, _postcompact_v1_TruncateTokensBatchRequest__Output, _postcompact_v1_TruncateTokensBatchResponse__Output>
  UpsertTask: MethodDefinition<_postcompact_v1_UpsertTaskRequest, _postcompact_v1_UpsertTaskResponse, _postcompact_v1_UpsertTaskRequest__Output, _postcompact_v1_UpsertTaskResponse__Output>
}
