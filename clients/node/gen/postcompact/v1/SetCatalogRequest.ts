// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { DeferredTools as _postcompact_v1_DeferredTools, DeferredTools__Output as _postcompact_v1_DeferredTools__Output } from '../../postcompact/v1/DeferredTools.js';
import type { AgentTypes as _postcompact_v1_AgentTypes, AgentTypes__Output as _postcompact_v1_AgentTypes__Output } from '../../postcompact/v1/AgentTypes.js';
import type { McpServers as _postcompact_v1_McpServers, McpServers__Output as _postcompact_v1_McpServers__Output } from '../../postcompact/v1/McpServers.js';
import type { SkillListing as _postcompact_v1_SkillListing, SkillListing__Output as _postcompact_v1_SkillListing__Output } from '../../postcompact/v1/SkillListing.js';

/**
 * Each part is optional: an absent part leaves that catalogue unchanged.
 */
export interface SetCatalogRequest {
  'sessionId'?: (string);
  'agentId'?: (string);
  'deferredTools'?: (_postcompact_v1_DeferredTools | null);
  'agentTypes'?: (_postcompact_v1_AgentTypes | null);
  'mcpServers'?: (_postcompact_v1_McpServers | null);
  'skillListing'?: (_postcompact_v1_SkillListing | null);
}

/**
 * Each part is optional: an absent part leaves that catalogue unchanged.
 */
export interface SetCatalogRequest__Output {
  'sessionId': (string);
  'agentId': (string);
  'deferredTools': (_postcompact_v1_DeferredTools__Output | null);
  'agentTypes': (_postcompact_v1_AgentTypes__Output | null);
  'mcpServers': (_postcompact_v1_McpServers__Output | null);
  'skillListing': (_postcompact_v1_SkillListing__Output | null);
}
