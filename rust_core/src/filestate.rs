//! The file-state cache: Claude Code's `readFileState` (docs/claude-code.md §4).
//!
//! An [`LruCache`] of at most 100 entries and 25 MiB by default, keyed by normalised paths
//! ([`crate::path::expand_key`] with the cache's cwd and home), each entry sized
//! `max(1, content byte length)`. On top of the LRU: [`FileStateCache::snapshot`] (most recently
//! used first, like `cacheToObject`), [`FileStateCache::clone_with`] (`cloneFileStateCache`) and
//! [`FileStateCache::merge_with`] (`mergeFileStateCaches`, where the newer timestamp wins).
//!
//! The cache is generic over its value so that the Python binding can store its own immutable
//! `FileState` objects (returned as-is, content never copied); plain Rust uses [`FileState`].

use std::borrow::Cow;
use std::fmt;

use crate::lru::{Limits, LimitsError, LruCache, SetOutcome};
use crate::path::{expand_key, PathError};

/// Claude Code's `READ_FILE_STATE_CACHE_SIZE` (2.1.88).
pub const DEFAULT_MAX_ENTRIES: usize = 100;
/// Claude Code's `DEFAULT_MAX_CACHE_SIZE_BYTES`: 25 MiB.
pub const DEFAULT_MAX_SIZE: u64 = 25 * 1024 * 1024;

/// What the cache needs to know about a value.
pub trait FileStateValue {
    /// When the state was recorded (ms; an mtime or a read time).
    fn timestamp(&self) -> i64;
    /// The content's length in bytes (UTF-8 bytes for text).
    fn content_len(&self) -> usize;
}

/// One cached file state. `C` is the content: anything that is bytes (`Vec<u8>`, `String`,
/// `Arc<[u8]>`, …).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FileState<C> {
    /// The text that was read or written (raw, without line numbers).
    pub content: C,
    /// floor(mtime in ms) for reads and writes, or the read time for memory files.
    pub timestamp: i64,
    /// First line of a ranged Read (1 by default for Reads); `None` for writes.
    pub offset: Option<u64>,
    /// Number of lines of a ranged Read; `None` when the whole file was read.
    pub limit: Option<u64>,
    /// The model saw a processed view (e.g. an auto-injected memory file), not the file.
    pub partial_view: bool,
}

impl<C: AsRef<[u8]>> FileStateValue for FileState<C> {
    #[inline]
    fn timestamp(&self) -> i64 {
        self.timestamp
    }

    #[inline]
    fn content_len(&self) -> usize {
        self.content.as_ref().len()
    }
}

/// Why a cache could not be made or a path could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileStateError {
    /// Bad bounds.
    Limits(LimitsError),
    /// A bad path, cwd or home.
    Path(PathError),
}

impl fmt::Display for FileStateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Limits(e) => e.fmt(f),
            Self::Path(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for FileStateError {}

impl From<LimitsError> for FileStateError {
    fn from(e: LimitsError) -> Self {
        Self::Limits(e)
    }
}

impl From<PathError> for FileStateError {
    fn from(e: PathError) -> Self {
        Self::Path(e)
    }
}

/// The file-state cache. See the [module docs](self).
pub struct FileStateCache<V> {
    lru: LruCache<Box<str>, V>,
    cwd: Option<Box<str>>,
    home: Option<Box<str>>,
}

impl<V> fmt::Debug for FileStateCache<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileStateCache")
            .field("lru", &self.lru)
            .field("cwd", &self.cwd)
            .field("home", &self.home)
            .finish()
    }
}

#[inline]
fn size_of<V: FileStateValue>(value: &V) -> u64 {
    value.content_len() as u64
}

impl<V: FileStateValue> FileStateCache<V> {
    /// An empty cache. `cwd` resolves relative paths (without it they are an error); `home`
    /// expands `~` (without it `~` is an ordinary segment). Both must be absolute.
    ///
    /// # Errors
    /// [`FileStateError`] for bad bounds, or a cwd/home that is relative or contains NUL.
    pub fn new(
        max_entries: usize,
        max_size: u64,
        cwd: Option<&str>,
        home: Option<&str>,
    ) -> Result<Self, FileStateError> {
        let limits = Limits::new(max_entries, max_size)?;
        // Validates cwd and home (absolute, no NUL).
        expand_key("/", cwd, home)?;
        Ok(Self {
            lru: LruCache::with_limits(limits),
            cwd: cwd.map(Into::into),
            home: home.map(Into::into),
        })
    }

    /// An empty cache with Claude Code's bounds: 100 entries, 25 MiB.
    ///
    /// # Errors
    /// As [`FileStateCache::new`].
    pub fn with_defaults(cwd: Option<&str>, home: Option<&str>) -> Result<Self, FileStateError> {
        Self::new(DEFAULT_MAX_ENTRIES, DEFAULT_MAX_SIZE, cwd, home)
    }

    /// The cwd relative paths are resolved against.
    #[must_use]
    pub fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }

    /// The home `~` expands to.
    #[must_use]
    pub fn home(&self) -> Option<&str> {
        self.home.as_deref()
    }

    /// The bounds.
    #[must_use]
    pub const fn limits(&self) -> Limits {
        self.lru.limits()
    }

    /// Number of entries.
    #[must_use]
    pub const fn len(&self) -> usize {
        self.lru.len()
    }

    /// Whether the cache is empty.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.lru.is_empty()
    }

    /// Total size in bytes (each entry counts at least 1).
    #[must_use]
    pub const fn total_size(&self) -> u64 {
        self.lru.total_size()
    }

    /// Entries evicted to respect the bounds since the cache was made.
    #[must_use]
    pub const fn evictions(&self) -> u64 {
        self.lru.evictions()
    }

    /// The underlying LRU (keys are normalised paths).
    #[must_use]
    pub const fn lru(&self) -> &LruCache<Box<str>, V> {
        &self.lru
    }

    /// The key `path` is stored under (borrowed when `path` is already canonical).
    ///
    /// # Errors
    /// [`PathError`] for NUL, or a relative path when the cache has no cwd.
    pub fn key<'a>(&self, path: &'a str) -> Result<Cow<'a, str>, PathError> {
        expand_key(path, self.cwd.as_deref(), self.home.as_deref())
    }

    /// Record `value` under `path`; returns the key and what happened. Evicted values are
    /// dropped.
    ///
    /// # Errors
    /// [`PathError`] as for [`FileStateCache::key`].
    pub fn set<'a>(
        &mut self,
        path: &'a str,
        value: V,
    ) -> Result<(Cow<'a, str>, SetOutcome<V>), PathError> {
        self.set_with(path, value, |_, _| {})
    }

    /// [`FileStateCache::set`], handing evicted entries to `on_evict`.
    ///
    /// # Errors
    /// [`PathError`] as for [`FileStateCache::key`].
    pub fn set_with<'a>(
        &mut self,
        path: &'a str,
        value: V,
        on_evict: impl FnMut(Box<str>, V),
    ) -> Result<(Cow<'a, str>, SetOutcome<V>), PathError> {
        let key = self.key(path)?;
        let size = size_of(&value);
        let outcome = self.lru.set_borrowed(&*key, value, size, on_evict);
        Ok((key, outcome))
    }

    /// The state under `path`, making it the most recently used.
    ///
    /// # Errors
    /// [`PathError`] as for [`FileStateCache::key`].
    pub fn get(&mut self, path: &str) -> Result<Option<&V>, PathError> {
        let key = self.key(path)?;
        Ok(self.lru.get(&*key))
    }

    /// The state under `path`, without touching the order.
    ///
    /// # Errors
    /// [`PathError`] as for [`FileStateCache::key`].
    pub fn peek(&self, path: &str) -> Result<Option<&V>, PathError> {
        let key = self.key(path)?;
        Ok(self.lru.peek(&*key))
    }

    /// Whether `path` is cached, without touching the order.
    ///
    /// # Errors
    /// [`PathError`] as for [`FileStateCache::key`].
    pub fn has(&self, path: &str) -> Result<bool, PathError> {
        let key = self.key(path)?;
        Ok(self.lru.contains(&*key))
    }

    /// Remove `path`; returns its state if it was cached.
    ///
    /// # Errors
    /// [`PathError`] as for [`FileStateCache::key`].
    pub fn delete(&mut self, path: &str) -> Result<Option<V>, PathError> {
        let key = self.key(path)?;
        Ok(self.lru.delete(&*key).map(|(_, v)| v))
    }

    /// Remove every entry.
    pub fn clear(&mut self) {
        self.lru.clear();
    }

    /// `(key, state)` pairs, most recently used first (`cacheToObject` order).
    pub fn snapshot(&self) -> impl ExactSizeIterator<Item = (&str, &V)> + '_ {
        self.lru.iter().map(|(k, v, _)| (&**k, v))
    }

    /// Keys, most recently used first.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.lru.keys().map(|k| &**k)
    }

    /// Replace the contents with `entries` given most recently used first (the order of
    /// [`FileStateCache::snapshot`]); paths are normalised, sizes recomputed. Nothing changes
    /// when a path is refused.
    ///
    /// # Errors
    /// [`PathError`] for the first path that cannot be a key.
    pub fn load<P: AsRef<str>>(
        &mut self,
        entries: impl IntoIterator<Item = (P, V)>,
    ) -> Result<(), PathError> {
        let mut prepared = Vec::new();
        for (path, value) in entries {
            let key: Box<str> = self.key(path.as_ref())?.into();
            let size = size_of(&value);
            prepared.push((key, value, size));
        }
        self.lru.load(prepared);
        Ok(())
    }

    /// `cloneFileStateCache`: a new cache with the same bounds, cwd, home, entries and order
    /// (values cloned by `clone_value`); its eviction count starts at 0.
    pub fn clone_with(&self, clone_value: impl FnMut(&V) -> V) -> Self {
        let mut lru = self.lru.map_values(clone_value);
        lru.reset_evictions();
        Self {
            lru,
            cwd: self.cwd.clone(),
            home: self.home.clone(),
        }
    }

    /// `mergeFileStateCaches(self, other)`: a clone of `self` into which each entry of `other`
    /// (most recently used first) is looked up with a promoting `get` and set when the key was
    /// missing or `other`'s timestamp is strictly newer. Exactly as in Claude Code, every key of
    /// `other` is therefore touched, so they end up most recently used, in `other`'s reverse
    /// order. The result keeps `self`'s bounds, cwd and home; `on_evict` receives what the merge
    /// evicted.
    pub fn merge_with(
        &self,
        other: &Self,
        mut clone_value: impl FnMut(&V) -> V,
        mut on_evict: impl FnMut(Box<str>, V),
    ) -> Self {
        let mut merged = self.clone_with(&mut clone_value);
        for (key, value, _) in other.lru.iter() {
            let newer = match merged.lru.get(&**key) {
                None => true,
                Some(existing) => value.timestamp() > existing.timestamp(),
            };
            if newer {
                let value = clone_value(value);
                let size = size_of(&value);
                let _ = merged.lru.set_borrowed(&**key, value, size, &mut on_evict);
            }
        }
        merged
    }
}

impl<V: FileStateValue + Clone> Clone for FileStateCache<V> {
    /// [`FileStateCache::clone_with`] using `V::clone`.
    fn clone(&self) -> Self {
        self.clone_with(V::clone)
    }
}

impl<V: FileStateValue + Clone> FileStateCache<V> {
    /// [`FileStateCache::merge_with`] using `V::clone`, dropping evicted entries.
    #[must_use]
    pub fn merge(&self, other: &Self) -> Self {
        self.merge_with(other, V::clone, |_, _| {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type State = FileState<Vec<u8>>;
    type Cache = FileStateCache<State>;

    fn st(content: &str, timestamp: i64) -> State {
        FileState {
            content: content.as_bytes().to_vec(),
            timestamp,
            offset: Some(1),
            limit: None,
            partial_view: false,
        }
    }

    fn keys(c: &Cache) -> Vec<&str> {
        c.keys().collect()
    }

    #[test]
    fn defaults_match_claude_code() {
        let c = Cache::with_defaults(None, None).unwrap();
        assert_eq!(c.limits().max_entries(), 100);
        assert_eq!(c.limits().max_size(), 26_214_400);
        assert_eq!(c.limits().max_entry_size(), 26_214_400);
    }

    #[test]
    fn bad_configuration_is_refused() {
        assert_eq!(
            Cache::new(0, 10, None, None).unwrap_err().to_string(),
            "max_entries must be between 1 and 4294967294, got 0"
        );
        assert_eq!(
            Cache::new(1, 10, Some("rel"), None)
                .unwrap_err()
                .to_string(),
            "cwd must be an absolute path, got \"rel\""
        );
        assert!(Cache::new(1, 10, None, Some("h")).is_err());
        assert!(Cache::new(1, 10, Some("/a\0"), None).is_err());
    }

    #[test]
    fn keys_are_normalised() {
        let mut c = Cache::new(10, 1000, Some("/w"), Some("/home/u")).unwrap();
        let (key, outcome) = c.set("src/./a.rs", st("x", 1)).unwrap();
        assert_eq!(key, "/w/src/a.rs");
        assert_eq!(outcome, SetOutcome::Added);
        let (key, _) = c.set("/w/b.rs", st("y", 1)).unwrap();
        assert!(matches!(key, Cow::Borrowed("/w/b.rs")));
        assert!(c.has("/w//src/a.rs").unwrap());
        assert!(c.has(" ./src/a.rs ").unwrap());
        assert_eq!(c.get("~/../../w/src/a.rs").unwrap(), Some(&st("x", 1)));
        assert_eq!(keys(&c), ["/w/src/a.rs", "/w/b.rs"]);
        assert!(c.get("a\0").is_err());
        assert_eq!(c.delete("/w/src/a.rs").unwrap(), Some(st("x", 1)));
        assert_eq!(keys(&c), ["/w/b.rs"]);

        let mut no_cwd = Cache::new(10, 1000, None, None).unwrap();
        assert!(no_cwd.set("/abs/x", st("", 0)).is_ok());
        assert_eq!(
            no_cwd.set("rel", st("", 0)).unwrap_err(),
            PathError::NoCwd("rel".into())
        );
    }

    #[test]
    fn sizes_are_content_bytes_at_least_one() {
        let mut c = Cache::new(10, 10, None, None).unwrap();
        c.set("/empty", st("", 0)).unwrap();
        c.set("/e", st("\u{e9}", 0)).unwrap(); // 2 bytes
        assert_eq!(c.total_size(), 3);
        let (_, outcome) = c.set("/big", st("01234567890", 0)).unwrap();
        assert!(!outcome.is_stored());
        c.set("/nine", st("012345678", 0)).unwrap();
        assert_eq!(keys(&c), ["/nine"]);
        assert_eq!(c.evictions(), 2);
    }

    #[test]
    fn snapshot_peek_and_get_order() {
        let mut c = Cache::new(10, 1000, None, None).unwrap();
        for p in ["/a", "/b", "/c"] {
            c.set(p, st(p, 0)).unwrap();
        }
        c.peek("/a").unwrap();
        assert_eq!(keys(&c), ["/c", "/b", "/a"]);
        c.get("/a").unwrap();
        let snap: Vec<_> = c.snapshot().map(|(k, v)| (k, v.content.clone())).collect();
        assert_eq!(
            snap,
            [
                ("/a", b"/a".to_vec()),
                ("/c", b"/c".to_vec()),
                ("/b", b"/b".to_vec())
            ]
        );
    }

    #[test]
    fn clone_is_independent_and_keeps_order() {
        let mut c = Cache::new(2, 1000, Some("/w"), None).unwrap();
        for p in ["/a", "/b", "/c"] {
            c.set(p, st(p, 0)).unwrap();
        }
        assert_eq!(c.evictions(), 1);
        let mut d = c.clone();
        assert_eq!(keys(&d), keys(&c));
        assert_eq!(d.evictions(), 0);
        assert_eq!(d.cwd(), Some("/w"));
        assert_eq!(d.limits(), c.limits());
        d.set("/x", st("x", 0)).unwrap();
        assert_eq!(keys(&c), ["/c", "/b"]);
        assert_eq!(keys(&d), ["/x", "/c"]);
    }

    #[test]
    fn merge_keeps_strictly_newer_and_touches_every_key_of_other() {
        let mut first = Cache::new(10, 1000, None, None).unwrap();
        first.set("/a", st("a1", 10)).unwrap();
        first.set("/b", st("b1", 10)).unwrap();
        first.set("/c", st("c1", 10)).unwrap();
        let mut second = Cache::new(10, 1000, None, None).unwrap();
        second.set("/d", st("d2", 5)).unwrap(); // missing in first: added
        second.set("/a", st("a2", 10)).unwrap(); // tie: first wins (but is promoted)
        second.set("/b", st("b2", 11)).unwrap(); // newer: replaces
                                                 // second MRU-first: b, a, d.
        let merged = first.merge(&second);
        let got: Vec<_> = merged
            .snapshot()
            .map(|(k, v)| (k.to_owned(), v.content.clone()))
            .collect();
        assert_eq!(
            got,
            [
                ("/d".to_owned(), b"d2".to_vec()),
                ("/a".to_owned(), b"a1".to_vec()),
                ("/b".to_owned(), b"b2".to_vec()),
                ("/c".to_owned(), b"c1".to_vec()),
            ]
        );
        // The inputs are untouched.
        assert_eq!(keys(&first), ["/c", "/b", "/a"]);
        assert_eq!(keys(&second), ["/b", "/a", "/d"]);
    }

    #[test]
    fn merge_respects_the_first_cache_bounds() {
        let mut first = Cache::new(2, 1000, None, None).unwrap();
        first.set("/a", st("a", 1)).unwrap();
        let mut second = Cache::new(10, 1000, None, None).unwrap();
        for p in ["/x", "/y", "/z"] {
            second.set(p, st(p, 2)).unwrap();
        }
        let mut evicted = Vec::new();
        let merged = first.merge_with(&second, Clone::clone, |k, _| evicted.push(k));
        assert_eq!(keys(&merged), ["/x", "/y"]);
        assert_eq!(merged.evictions(), 2);
        assert_eq!(evicted, [Box::from("/a"), Box::from("/z")]);
    }

    #[test]
    fn load_normalises_and_keeps_order() {
        let mut c = Cache::new(10, 1000, Some("/w"), None).unwrap();
        c.set("/old", st("o", 0)).unwrap();
        c.load([("a", st("1", 1)), ("/b/../c", st("2", 2))])
            .unwrap();
        assert_eq!(keys(&c), ["/w/a", "/c"]);
        assert_eq!(c.total_size(), 2);
        assert!(c.load([("/ok", st("", 0)), ("bad\0", st("", 0))]).is_err());
        assert_eq!(keys(&c), ["/w/a", "/c"], "unchanged after an error");
    }
}
