// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { Long } from '@grpc/proto-loader';

export interface CategoryTotals {
  /**
   * "files", "skills", "plan", "plan_mode", "tasks", "deltas", "hooks"
   */
  'category'?: (string);
  'attachments'?: (number);
  'dropped'?: (number);
  'tokens'?: (number | string | Long);
}

export interface CategoryTotals__Output {
  /**
   * "files", "skills", "plan", "plan_mode", "tasks", "deltas", "hooks"
   */
  'category': (string);
  'attachments': (number);
  'dropped': (number);
  'tokens': (number);
}
