// Original file: ../../proto/postcompact/v1/postcompact.proto

export const AgentMode = {
  AGENT_MODE_UNSPECIFIED: 'AGENT_MODE_UNSPECIFIED',
  /**
   * an empty file-state cache (a normal sub-agent)
   */
  AGENT_MODE_FRESH: 'AGENT_MODE_FRESH',
  /**
   * a copy of the parent's file-state cache (a forked sub-agent)
   */
  AGENT_MODE_CLONE_PARENT: 'AGENT_MODE_CLONE_PARENT',
} as const;

export type AgentMode =
  | 'AGENT_MODE_UNSPECIFIED'
  | 0
  /**
   * an empty file-state cache (a normal sub-agent)
   */
  | 'AGENT_MODE_FRESH'
  | 1
  /**
   * a copy of the parent's file-state cache (a forked sub-agent)
   */
  | 'AGENT_MODE_CLONE_PARENT'
  | 2

export type AgentMode__Output = typeof AgentMode[keyof typeof AgentMode]
