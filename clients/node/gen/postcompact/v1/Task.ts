// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { TaskStatus as _postcompact_v1_TaskStatus, TaskStatus__Output as _postcompact_v1_TaskStatus__Output } from '../../postcompact/v1/TaskStatus.js';

export interface Task {
  'taskId'?: (string);
  /**
   * "local_agent" is reported after compaction; others are tracked only
   */
  'taskType'?: (string);
  'description'?: (string);
  'status'?: (_postcompact_v1_TaskStatus);
  'progressSummary'?: (string);
  'error'?: (string);
  /**
   * its result was read: no reminder after compaction
   */
  'retrieved'?: (boolean);
  'outputFilePath'?: (string);
  /**
   * local_agent: the agent this task runs as (no reminder to itself); local_bash: the agent that
   * started the shell (its status goes to that agent only).
   */
  'agentId'?: (string);
  /**
   * local_bash: the shell command
   */
  'command'?: (string);
  /**
   * local_bash: a background monitor rather than a shell
   */
  'monitor'?: (boolean);
}

export interface Task__Output {
  'taskId': (string);
  /**
   * "local_agent" is reported after compaction; others are tracked only
   */
  'taskType': (string);
  'description': (string);
  'status': (_postcompact_v1_TaskStatus__Output);
  'progressSummary': (string);
  'error': (string);
  /**
   * its result was read: no reminder after compaction
   */
  'retrieved': (boolean);
  'outputFilePath': (string);
  /**
   * local_agent: the agent this task runs as (no reminder to itself); local_bash: the agent that
   * started the shell (its status goes to that agent only).
   */
  'agentId': (string);
  /**
   * local_bash: the shell command
   */
  'command': (string);
  /**
   * local_bash: a background monitor rather than a shell
   */
  'monitor': (boolean);
}
