//! Path keys of the file-state cache: Claude Code's `expandPath` (docs/claude-code.md §4) on POSIX.
//!
//! [`expand_path`] trims the path (JavaScript `String.prototype.trim` whitespace), rejects NUL
//! bytes, expands `~` and `~/…` against the given home, resolves a relative path against the
//! (absolute) cwd, normalises `.`, `..` and repeated slashes the way Node's `path.normalize` does
//! on POSIX (`..` above the root stays at the root), and finally applies Unicode NFC.
//!
//! One deliberate difference from Node: a trailing slash is dropped (`/a/b/` → `/a/b`; only the
//! root keeps its slash). Node's `normalize` keeps it for absolute paths while its `resolve` drops
//! it for relative ones; a file key never names a directory, so one spelling per file is better.
//!
//! [`expand_key`] is the allocation-free entry point the cache uses: it returns the input itself
//! when it is already canonical (absolute, normalised, trimmed, NFC), which is the common case.

use std::borrow::Cow;
use std::fmt;

use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

/// Why a path could not be turned into a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathError {
    /// The path, cwd or home contains a NUL character.
    Nul {
        /// Which argument: `"path"`, `"cwd"` or `"home"`.
        what: &'static str,
        /// The offending value.
        value: String,
    },
    /// The cwd is not absolute.
    RelativeCwd(String),
    /// The home directory is not absolute.
    RelativeHome(String),
    /// A relative path (or `~` without a home) and no cwd to resolve it against.
    NoCwd(String),
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Nul { what, value } => write!(f, "{what} contains a NUL byte: {value:?}"),
            Self::RelativeCwd(cwd) => write!(f, "cwd must be an absolute path, got {cwd:?}"),
            Self::RelativeHome(home) => write!(f, "home must be an absolute path, got {home:?}"),
            Self::NoCwd(path) => write!(
                f,
                "cannot resolve the relative path {path:?}: no cwd was given"
            ),
        }
    }
}

impl std::error::Error for PathError {}

/// JavaScript's `trim` whitespace: WhiteSpace (incl. U+FEFF and every Zs) and LineTerminator.
/// Unlike Rust's `char::is_whitespace` it includes U+FEFF and excludes U+0085.
#[inline]
#[must_use]
pub const fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}'..='\u{d}'
            | ' '
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
            | '\u{feff}'
    )
}

/// `s.trim()` as JavaScript does it.
#[must_use]
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_whitespace)
}

fn check_nul(what: &'static str, value: &str) -> Result<(), PathError> {
    if value.as_bytes().contains(&0) {
        Err(PathError::Nul {
            what,
            value: value.to_owned(),
        })
    } else {
        Ok(())
    }
}

/// Whether `path` is already a key: absolute, no empty/`.`/`..` segments, no trailing slash
/// (except `/`), no surrounding JavaScript whitespace, no NUL, and in NFC.
#[must_use]
pub fn is_canonical(path: &str) -> bool {
    let Some(rest) = path.strip_prefix('/') else {
        return false;
    };
    if rest.is_empty() {
        return true;
    }
    let bytes = path.as_bytes();
    let Some(ascii) = scan_separators(bytes) else {
        return false;
    };
    if ascii {
        let last = bytes[bytes.len() - 1];
        return !(last == b' ' || (0x09..=0x0d).contains(&last));
    }
    match path.chars().next_back() {
        Some(c) if is_js_whitespace(c) => false,
        _ => match is_nfc_quick(path.chars()) {
            IsNormalized::Yes => true,
            IsNormalized::No => false,
            IsNormalized::Maybe => path.nfc().eq(path.chars()),
        },
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;
const SLASHES: u64 = 0x2f2f_2f2f_2f2f_2f2f;

/// The high bit of every byte of `x` that may be zero: exact about whether one is (a byte above a
/// zero byte may be flagged too).
#[inline(always)]
const fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// One pass, eight bytes at a time: `None` if a separator starts an empty, `.` or `..` segment
/// or a byte is NUL, else whether every byte is ASCII.
#[inline]
fn scan_separators(bytes: &[u8]) -> Option<bool> {
    let mut high = 0u8;
    let mut at = 0;
    while at + 8 <= bytes.len() {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[at..at + 8]);
        let w = u64::from_le_bytes(word);
        if zero_bytes(w) != 0 {
            return None;
        }
        high |= (w & HIGHS != 0) as u8;
        let mut slashes = zero_bytes(w ^ SLASHES);
        while slashes != 0 {
            let i = at + (slashes.trailing_zeros() / 8) as usize;
            if bytes[i] == b'/' && !segment_ok(&bytes[i + 1..]) {
                return None;
            }
            slashes &= slashes - 1;
        }
        at += 8;
    }
    for (i, &b) in bytes.iter().enumerate().skip(at) {
        match b {
            0 => return None,
            b'/' if !segment_ok(&bytes[i + 1..]) => return None,
            _ => high |= b >> 7,
        }
    }
    Some(high == 0)
}

/// Whether the segment at the start of `after` (up to the next `/` or the end) is a name.
#[inline(always)]
fn segment_ok(after: &[u8]) -> bool {
    match after.first() {
        None | Some(b'/') => false,
        Some(b'.') => !matches!(after, [_] | [_, b'/', ..] | [_, b'.'] | [_, b'.', b'/', ..]),
        Some(_) => true,
    }
}

/// Push the segments of `path` onto `stack`, resolving `.` and `..` (never above the root).
fn push_segments<'a>(stack: &mut Vec<&'a str>, path: &'a str) {
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                stack.pop();
            }
            s => stack.push(s),
        }
    }
}

fn join_absolute(stack: &[&str]) -> String {
    if stack.is_empty() {
        return "/".to_owned();
    }
    let mut out = String::with_capacity(stack.iter().map(|s| s.len() + 1).sum());
    for seg in stack {
        out.push('/');
        out.push_str(seg);
    }
    out
}

fn nfc(s: String) -> String {
    if s.is_ascii() || is_nfc_quick(s.chars()) == IsNormalized::Yes {
        s
    } else {
        s.nfc().collect()
    }
}

/// Node's POSIX `path.normalize` for an absolute path (without the trailing slash), then NFC.
/// A relative `path` is treated as if it started with `/`.
#[must_use]
pub fn normalize_absolute(path: &str) -> String {
    let mut stack = Vec::new();
    push_segments(&mut stack, path);
    nfc(join_absolute(&stack))
}

/// Claude Code's `expandPath(path)` with an explicit cwd and home. See the [module docs](self).
///
/// `home = None` disables `~` expansion (a leading `~` is then an ordinary path segment).
///
/// # Errors
/// [`PathError`] when the path, cwd or home contains NUL, or cwd or home is not absolute.
pub fn expand_path(path: &str, cwd: &str, home: Option<&str>) -> Result<String, PathError> {
    expand_key(path, Some(cwd), home).map(Cow::into_owned)
}

/// [`expand_path`] with an optional cwd, borrowing `path` when it is already canonical.
///
/// Without a cwd, absolute paths (and `~` paths, given a home) are still normalised; a relative
/// path is an error.
///
/// # Errors
/// [`PathError`] when the path, cwd or home contains NUL, cwd or home is not absolute, or a
/// relative path has no cwd.
pub fn expand_key<'a>(
    path: &'a str,
    cwd: Option<&str>,
    home: Option<&str>,
) -> Result<Cow<'a, str>, PathError> {
    if let Some(cwd) = cwd {
        check_nul("cwd", cwd)?;
        if !cwd.starts_with('/') {
            return Err(PathError::RelativeCwd(cwd.to_owned()));
        }
    }
    if let Some(home) = home {
        check_nul("home", home)?;
        if !home.starts_with('/') {
            return Err(PathError::RelativeHome(home.to_owned()));
        }
    }
    if is_canonical(path) {
        return Ok(Cow::Borrowed(path));
    }
    check_nul("path", path)?;
    let trimmed = js_trim(path);
    let mut stack: Vec<&str> = Vec::new();
    if trimmed.starts_with('/') {
        push_segments(&mut stack, trimmed);
    } else {
        let rest = match home {
            Some(home) if trimmed == "~" => {
                push_segments(&mut stack, home);
                ""
            }
            Some(home) if trimmed.starts_with("~/") => {
                push_segments(&mut stack, home);
                &trimmed[2..]
            }
            _ => {
                let Some(cwd) = cwd else {
                    return Err(PathError::NoCwd(path.to_owned()));
                };
                push_segments(&mut stack, cwd);
                trimmed
            }
        };
        push_segments(&mut stack, rest);
    }
    Ok(Cow::Owned(nfc(join_absolute(&stack))))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CWD: &str = "/home/u/proj";
    const HOME: &str = "/home/u";

    fn ex(p: &str) -> String {
        expand_path(p, CWD, Some(HOME)).unwrap()
    }

    #[test]
    fn absolute_paths_are_normalised() {
        assert_eq!(ex("/a/b/c.rs"), "/a/b/c.rs");
        assert_eq!(ex("/a//b///c.rs"), "/a/b/c.rs");
        assert_eq!(ex("//a"), "/a");
        assert_eq!(ex("/a/./b/../c"), "/a/c");
        assert_eq!(ex("/a/b/.."), "/a");
        assert_eq!(ex("/a/b/."), "/a/b");
        assert_eq!(ex("/../../x"), "/x");
        assert_eq!(ex("/.."), "/");
        assert_eq!(ex("/"), "/");
        assert_eq!(ex("///"), "/");
        assert_eq!(ex("/a/b/"), "/a/b");
        assert_eq!(ex("/a/...b/..."), "/a/...b/...");
        assert_eq!(ex("/a/.hidden/..x"), "/a/.hidden/..x");
    }

    #[test]
    fn relative_paths_resolve_against_cwd() {
        assert_eq!(ex("src/main.rs"), "/home/u/proj/src/main.rs");
        assert_eq!(ex("./src/../lib.rs"), "/home/u/proj/lib.rs");
        assert_eq!(ex("../other/x"), "/home/u/other/x");
        assert_eq!(ex("../../../../../x"), "/x");
        assert_eq!(ex("."), "/home/u/proj");
        assert_eq!(ex(""), "/home/u/proj");
        assert_eq!(ex("   "), "/home/u/proj");
        assert_eq!(
            expand_path("x", "/a//b/./c/", None).unwrap(),
            "/a/b/c/x",
            "the cwd is normalised too"
        );
    }

    #[test]
    fn tilde_expands_only_alone_or_before_a_slash() {
        assert_eq!(ex("~"), "/home/u");
        assert_eq!(ex("~/"), "/home/u");
        assert_eq!(ex("~/notes/a.md"), "/home/u/notes/a.md");
        assert_eq!(ex("~/../x"), "/home/x");
        assert_eq!(ex("~user/a"), "/home/u/proj/~user/a");
        assert_eq!(ex("a/~/b"), "/home/u/proj/a/~/b");
        assert_eq!(ex("/~/b"), "/~/b");
        // Without a home, `~` is an ordinary segment.
        assert_eq!(expand_path("~/a", CWD, None).unwrap(), "/home/u/proj/~/a");
    }

    #[test]
    fn whitespace_is_trimmed_the_javascript_way() {
        assert_eq!(ex("  /a/b  "), "/a/b");
        assert_eq!(ex("\t\n/a/b\r\n"), "/a/b");
        assert_eq!(ex("\u{feff}/a\u{3000}"), "/a");
        assert_eq!(ex("\u{a0}~/x\u{2028}"), "/home/u/x");
        // U+0085 is whitespace to Rust but not to JavaScript.
        assert_eq!(ex("/a\u{85}"), "/a\u{85}");
        // Inner spaces stay.
        assert_eq!(ex("/my dir/a b.txt"), "/my dir/a b.txt");
    }

    #[test]
    fn nfc_is_applied() {
        let decomposed = "/tmp/cafe\u{301}.txt";
        let composed = "/tmp/caf\u{e9}.txt";
        assert_eq!(ex(decomposed), composed);
        assert_eq!(ex(composed), composed);
        assert!(!is_canonical(decomposed));
        assert!(is_canonical(composed));
        assert_eq!(ex("cafe\u{301}"), "/home/u/proj/caf\u{e9}");
        // Hangul jamo compose too.
        assert_eq!(ex("/\u{1100}\u{1161}"), "/\u{ac00}");
    }

    #[test]
    fn nul_and_relative_bases_are_errors() {
        let err = expand_path("/a\0b", CWD, None).unwrap_err();
        assert_eq!(err.to_string(), "path contains a NUL byte: \"/a\\0b\"");
        assert!(matches!(
            expand_path("a", "/x\0", None),
            Err(PathError::Nul { what: "cwd", .. })
        ));
        assert_eq!(
            expand_path("a", "rel/cwd", None).unwrap_err().to_string(),
            "cwd must be an absolute path, got \"rel/cwd\""
        );
        assert_eq!(
            expand_path("/a", "rel", None).unwrap_err(),
            PathError::RelativeCwd("rel".into())
        );
        assert_eq!(
            expand_path("~", CWD, Some("u")).unwrap_err(),
            PathError::RelativeHome("u".into())
        );
        assert_eq!(
            expand_key("a", None, None).unwrap_err().to_string(),
            "cannot resolve the relative path \"a\": no cwd was given"
        );
    }

    #[test]
    fn expand_key_borrows_canonical_paths() {
        assert!(matches!(
            expand_key("/a/b.rs", None, None),
            Ok(Cow::Borrowed("/a/b.rs"))
        ));
        assert!(matches!(
            expand_key("/caf\u{e9}", None, None),
            Ok(Cow::Borrowed(_))
        ));
        assert_eq!(expand_key("/a/../b", None, None).unwrap(), "/b");
        assert_eq!(expand_key("~/x", None, Some(HOME)).unwrap(), "/home/u/x");
        assert!(expand_key("x", None, Some(HOME)).is_err());
    }

    #[test]
    fn canonical_agrees_with_expansion() {
        for p in [
            "/",
            "/a",
            "/a/",
            "/a//b",
            "/a/.",
            "/a/..",
            "/./a",
            "/a b",
            "/a ",
            "/a\t",
            "a",
            "",
            "/.a",
            "/a..",
            "/\u{e9}",
            "/e\u{301}",
            "/a\u{3000}",
            "/\u{3000}a",
        ] {
            let canonical = is_canonical(p);
            let expanded = expand_path(p, CWD, None).unwrap();
            assert_eq!(canonical, expanded == p, "{p:?} -> {expanded:?}");
        }
    }

    #[test]
    fn separator_scan_agrees_with_a_plain_check() {
        // Every short path over a small alphabet, at every alignment.
        let alphabet = [b'/', b'.', b'a', 0, 0xc3];
        let mut path = Vec::new();
        for n in 1..=6usize {
            for mut code in 0..alphabet.len().pow(n as u32) {
                path.clear();
                path.extend_from_slice(b"/prefix-of-odd-len");
                for _ in 0..n {
                    path.push(alphabet[code % alphabet.len()]);
                    code /= alphabet.len();
                }
                let plain = if path.contains(&0)
                    || path
                        .split(|&b| b == b'/')
                        .skip(1)
                        .any(|s| matches!(s, b"" | b"." | b".."))
                {
                    None
                } else {
                    Some(path.is_ascii())
                };
                assert_eq!(scan_separators(&path), plain, "{path:?}");
            }
        }
    }

    #[test]
    fn normalize_absolute_matches_node() {
        assert_eq!(normalize_absolute("/a/b/../../.."), "/");
        assert_eq!(normalize_absolute("a/b"), "/a/b");
        assert_eq!(normalize_absolute("/x/./y//z/"), "/x/y/z");
    }
}
