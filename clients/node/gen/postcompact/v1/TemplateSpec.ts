// Original file: ../../proto/postcompact/v1/postcompact.proto


/**
 * Model-facing wording: a preset in place of the profile's templates, then single templates.
 */
export interface TemplateSpec {
  /**
   * "" = the profile's wording; "neutral" = no Claude Code tool named
   */
  'preset'?: (string);
  /**
   * Template name (a field of render.Templates: read_call, read_tool_name, read_path_key,
   * file_truncation_marker, ...) -> its text; each placeholder is checked.
   */
  'strings'?: ({[key: string]: string});
}

/**
 * Model-facing wording: a preset in place of the profile's templates, then single templates.
 */
export interface TemplateSpec__Output {
  /**
   * "" = the profile's wording; "neutral" = no Claude Code tool named
   */
  'preset': (string);
  /**
   * Template name (a field of render.Templates: read_call, read_tool_name, read_path_key,
   * file_truncation_marker, ...) -> its text; each placeholder is checked.
   */
  'strings': ({[key: string]: string});
}
