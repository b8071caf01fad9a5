// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Task as _postcompact_v1_Task, Task__Output as _postcompact_v1_Task__Output } from '../../postcompact/v1/Task.js';

export interface UpsertTaskRequest {
  'sessionId'?: (string);
  'task'?: (_postcompact_v1_Task | null);
}

export interface UpsertTaskRequest__Output {
  'sessionId': (string);
  'task': (_postcompact_v1_Task__Output | null);
}
