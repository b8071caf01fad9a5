// Original file: ../../proto/postcompact/v1/postcompact.proto

export const TaskStatus = {
  TASK_STATUS_UNSPECIFIED: 'TASK_STATUS_UNSPECIFIED',
  TASK_STATUS_PENDING: 'TASK_STATUS_PENDING',
  TASK_STATUS_RUNNING: 'TASK_STATUS_RUNNING',
  TASK_STATUS_COMPLETED: 'TASK_STATUS_COMPLETED',
  TASK_STATUS_FAILED: 'TASK_STATUS_FAILED',
  TASK_STATUS_KILLED: 'TASK_STATUS_KILLED',
} as const;

export type TaskStatus =
  | 'TASK_STATUS_UNSPECIFIED'
  | 0
  | 'TASK_STATUS_PENDING'
  | 1
  | 'TASK_STATUS_RUNNING'
  | 2
  | 'TASK_STATUS_COMPLETED'
  | 3
  | 'TASK_STATUS_FAILED'
  | 4
  | 'TASK_STATUS_KILLED'
  | 5

export type TaskStatus__Output = typeof TaskStatus[keyof typeof TaskStatus]
