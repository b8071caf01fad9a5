//! File-system helpers for the daemon's read path.
//!
//! [`realpath`] is Python's `os.path.realpath(path)` (non-strict, CPython 3.11-3.13
//! `posixpath._joinrealpath`) for absolute paths, one `lstat` per component and one `readlink`
//! per symlink, without the interpreter's per-component overhead (~35 µs in Python for a
//! five-component path). It gives up (`None`) where Python's algorithm leaves the fast path —
//! a relative path, a symlink loop, a link that cannot be read — so the caller falls back to
//! Python for exactly those cases.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;

/// `posixpath.join(path, name)` for a `name` without a slash.
fn join(path: &[u8], name: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(path.len() + 1 + name.len());
    out.extend_from_slice(path);
    if !path.is_empty() && !path.ends_with(b"/") {
        out.push(b'/');
    }
    out.extend_from_slice(name);
    out
}

/// `posixpath.split(path)[0]`: the head, trailing slashes stripped unless it is all slashes.
fn head(path: &[u8]) -> Vec<u8> {
    let i = path.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1);
    let head = &path[..i];
    if head.iter().all(|&b| b == b'/') {
        return head.to_vec();
    }
    let end = head.iter().rposition(|&b| b != b'/').map_or(0, |i| i + 1);
    head[..end].to_vec()
}

type Seen = HashMap<Vec<u8>, Option<Vec<u8>>>;

fn join_real(mut path: Vec<u8>, rest: &[u8], seen: &mut Seen, depth: usize) -> Option<Vec<u8>> {
    if depth > 64 {
        return None;
    }
    let mut rest = rest;
    if let Some(r) = rest.strip_prefix(b"/") {
        rest = r;
        path = b"/".to_vec();
    }
    while !rest.is_empty() {
        let (name, r) = match rest.iter().position(|&b| b == b'/') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &b""[..]),
        };
        rest = r;
        if name.is_empty() || name == b"." {
            continue;
        }
        if name == b".." {
            if path.is_empty() {
                return None; // relative: Python's path
            }
            let tail_is_pardir = path.ends_with(b"/..") || path == b"..";
            if tail_is_pardir {
                return None;
            }
            path = head(&path);
            continue;
        }
        let newpath = join(&path, name);
        let is_link = fs::symlink_metadata(OsStr::from_bytes(&newpath))
            .map(|m| m.file_type().is_symlink())
            .unwrap_or(false);
        if !is_link {
            path = newpath;
            continue;
        }
        match seen.get(&newpath) {
            Some(Some(resolved)) => {
                path = resolved.clone();
                continue;
            }
            Some(None) => return None, // a symlink loop
            None => {}
        }
        seen.insert(newpath.clone(), None);
        let target = fs::read_link(OsStr::from_bytes(&newpath)).ok()?;
        path = join_real(path, target.as_os_str().as_bytes(), seen, depth + 1)?;
        seen.insert(newpath, Some(path.clone()));
    }
    Some(path)
}

/// Python's `os.path.realpath(path)` for an absolute `path` (see the module docs); `None` when
/// the path is relative or the resolution leaves the common case (a symlink loop, an unreadable
/// link).
pub fn realpath(path: &[u8]) -> Option<Vec<u8>> {
    if !path.starts_with(b"/") {
        return None;
    }
    let out = join_real(Vec::new(), path, &mut Seen::new(), 0)?;
    // Built from "/" and plain components only, so it is already normalised (abspath's
    // normpath is the identity), except that Python keeps a leading "//" out of this path too.
    Some(out)
}

/// `realpath(base + "/" + rest)` when `base` is already a real absolute path (the result of
/// [`realpath`] for it): only `rest`'s components are looked up. `None` as for [`realpath`].
pub fn realpath_under(base: &[u8], rest: &[u8]) -> Option<Vec<u8>> {
    if !base.starts_with(b"/") || rest.starts_with(b"/") {
        return None;
    }
    join_real(base.to_vec(), rest, &mut Seen::new(), 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn rp(p: &std::path::Path) -> Option<String> {
        realpath(p.as_os_str().as_bytes()).map(|v| String::from_utf8(v).unwrap())
    }

    #[test]
    fn resolves_like_python() {
        let dir = std::env::temp_dir().join(format!("pc-realpath-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("a/b")).unwrap();
        fs::write(dir.join("a/b/f.txt"), "x").unwrap();
        symlink(dir.join("a"), dir.join("la")).unwrap();
        symlink("b/f.txt", dir.join("a/rel")).unwrap();
        symlink("loop2", dir.join("loop1")).unwrap();
        symlink("loop1", dir.join("loop2")).unwrap();
        let d = fs::canonicalize(&dir).unwrap();
        let d = d.to_str().unwrap();
        assert_eq!(
            rp(&dir.join("la/b/f.txt")).unwrap(),
            format!("{d}/a/b/f.txt")
        );
        assert_eq!(rp(&dir.join("la/rel")).unwrap(), format!("{d}/a/b/f.txt"));
        assert_eq!(
            rp(&dir.join("a/./b/../b//f.txt")).unwrap(),
            format!("{d}/a/b/f.txt")
        );
        assert_eq!(
            rp(&dir.join("missing/x/../y")).unwrap(),
            format!("{d}/missing/y")
        );
        assert_eq!(rp(&dir.join("loop1")), None);
        let under = |base: &str, rest: &str| {
            realpath_under(base.as_bytes(), rest.as_bytes()).map(|v| String::from_utf8(v).unwrap())
        };
        assert_eq!(
            under(&format!("{d}/a"), "rel").unwrap(),
            format!("{d}/a/b/f.txt")
        );
        assert_eq!(under(d, "la/b/../rel").unwrap(), format!("{d}/a/b/f.txt"));
        assert_eq!(under(d, "").unwrap(), d);
        assert_eq!(under(d, "/abs"), None);
        assert_eq!(realpath(b"relative/x"), None);
        assert_eq!(realpath(b"/").unwrap(), b"/");
        assert_eq!(realpath(b"/..").unwrap(), b"/");
        fs::remove_dir_all(&dir).unwrap();
    }
}
