//! Profile names as the daemon's config and CLI spell them (`"default"`, `"claude-code"`,
//! `"claude-code-2.1.88"`; docs/profiles.md).

use crate::pb;

/// Every profile with its config/CLI name.
const NAMES: [(pb::Profile, &str); 3] = [
    (pb::Profile::Default, "default"),
    (pb::Profile::ClaudeCode, "claude-code"),
    (pb::Profile::ClaudeCode2188, "claude-code-2.1.88"),
];

/// A profile by its config/CLI name (`"default"`, `"claude-code"`, `"claude-code-2.1.88"`) or
/// its enum name with or without the prefix (`"PROFILE_CLAUDE_CODE_2_1_88"`,
/// `"claude_code_2_1_88"`), case-insensitive. `None` for anything else (`""` included: leave
/// the request's profile unset, `PROFILE_UNSPECIFIED`, for the daemon's default).
pub fn parse_profile(name: &str) -> Option<pb::Profile> {
    let n = name.trim();
    if let Some((p, _)) = NAMES.iter().find(|(_, s)| s.eq_ignore_ascii_case(n)) {
        return Some(*p);
    }
    let upper = n.to_ascii_uppercase().replace(['-', '.'], "_");
    let full = if upper.starts_with("PROFILE_") {
        upper
    } else {
        format!("PROFILE_{upper}")
    };
    pb::Profile::from_str_name(&full).filter(|p| *p != pb::Profile::Unspecified)
}

/// The config/CLI name of a profile (`"claude-code-2.1.88"`); `""` for `PROFILE_UNSPECIFIED`.
pub fn profile_name(profile: pb::Profile) -> &'static str {
    NAMES
        .iter()
        .find(|(p, _)| *p == profile)
        .map_or("", |(_, s)| s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (p, s) in NAMES {
            assert_eq!(parse_profile(s), Some(p));
            assert_eq!(profile_name(p), s);
        }
        assert_eq!(profile_name(pb::Profile::Unspecified), "");
    }

    #[test]
    fn enum_names_are_accepted() {
        assert_eq!(
            parse_profile("claude-code-2.1.88"),
            Some(pb::Profile::ClaudeCode2188)
        );
        assert_eq!(
            parse_profile("PROFILE_CLAUDE_CODE_2_1_88"),
            Some(pb::Profile::ClaudeCode2188)
        );
        assert_eq!(
            parse_profile("claude_code_2_1_88"),
            Some(pb::Profile::ClaudeCode2188)
        );
        assert_eq!(parse_profile("Claude-Code"), Some(pb::Profile::ClaudeCode));
        assert_eq!(parse_profile("DEFAULT"), Some(pb::Profile::Default));
        assert_eq!(parse_profile(""), None);
        assert_eq!(parse_profile("unspecified"), None);
        assert_eq!(parse_profile("claude-code-9"), None);
    }
}
