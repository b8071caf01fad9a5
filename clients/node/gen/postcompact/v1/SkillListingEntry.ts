// Original file: ../../proto/postcompact/v1/postcompact.proto


export interface SkillListingEntry {
  'name'?: (string);
  'description'?: (string);
}

export interface SkillListingEntry__Output {
  'name': (string);
  'description': (string);
}
