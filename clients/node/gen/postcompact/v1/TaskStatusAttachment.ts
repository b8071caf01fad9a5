// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { TaskStatus as _postcompact_v1_TaskStatus, TaskStatus__Output as _postcompact_v1_TaskStatus__Output } from '../../postcompact/v1/TaskStatus.js';

export interface TaskStatusAttachment {
  'taskId'?: (string);
  'taskType'?: (string);
  'description'?: (string);
  'status'?: (_postcompact_v1_TaskStatus);
  'deltaSummary'?: (string);
  'outputFilePath'?: (string);
}

export interface TaskStatusAttachment__Output {
  'taskId': (string);
  'taskType': (string);
  'description': (string);
  'status': (_postcompact_v1_TaskStatus__Output);
  'deltaSummary': (string);
  'outputFilePath': (string);
}
