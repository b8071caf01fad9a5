// Original file: ../../proto/postcompact/v1/postcompact.proto

import type { SkillListingEntry as _postcompact_v1_SkillListingEntry, SkillListingEntry__Output as _postcompact_v1_SkillListingEntry__Output } from '../../postcompact/v1/SkillListingEntry.js';

export interface SkillListing {
  'skills'?: (_postcompact_v1_SkillListingEntry)[];
}

export interface SkillListing__Output {
  'skills': (_postcompact_v1_SkillListingEntry__Output)[];
}
