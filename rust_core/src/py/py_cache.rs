//! Python bindings of the cache: `LruCache`, `FileState`, `FileStateCache`, `expand_path`.
//!
//! Values are Python objects held by reference (`Py<…>`): `get` returns the very object that
//! was `set`, and a `FileState`'s `content` is the caller's `bytes` object, never a copy.
//!
//! Locking: every cache is a frozen pyclass around a `Mutex`, taken with `try_lock` for the
//! few nanoseconds of each operation. No Python code runs while it is held — arguments are
//! extracted before, GC-tracked objects (lists, tuples) are built after, and values an operation
//! drops from an `LruCache` (which may be arbitrary objects with finalisers) are released only
//! once the lock is free. A re-entrant call therefore cannot happen through the cache itself;
//! should one happen anyway (from another thread on a free-threaded build), it raises
//! `RuntimeError` instead of deadlocking.

use std::borrow::Cow;
use std::sync::{Mutex, MutexGuard, TryLockError};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use pyo3::PyTraverseError;

use crate::filestate::{
    FileStateCache as CoreFileStateCache, FileStateValue, DEFAULT_MAX_ENTRIES, DEFAULT_MAX_SIZE,
};
use crate::lru::{Limits, LruCache as CoreLru, SetOutcome, MAX_ENTRIES_LIMIT};
use crate::path::{expand_key, PathError};

// The literal defaults in the `#[pyo3(signature)]`s (literals so that Python sees them).
const _: () = assert!(DEFAULT_MAX_ENTRIES == 100 && DEFAULT_MAX_SIZE == 26_214_400);

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<LruCache>()?;
    m.add_class::<FileState>()?;
    m.add_class::<FileStateCache>()?;
    m.add_function(wrap_pyfunction!(expand_path, m)?)?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn lock<'a, T>(mutex: &'a Mutex<T>, what: &str) -> PyResult<MutexGuard<'a, T>> {
    match mutex.try_lock() {
        Ok(guard) => Ok(guard),
        // Operations never panic half-way through in a way that breaks the structure.
        Err(TryLockError::Poisoned(p)) => Ok(p.into_inner()),
        Err(TryLockError::WouldBlock) => Err(PyRuntimeError::new_err(format!(
            "{what} is already in use (a re-entrant call or a concurrent call from another thread)"
        ))),
    }
}

fn path_err(e: PathError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

fn limits(max_entries: i64, max_size: i64, max_entry_size: Option<i64>) -> PyResult<Limits> {
    if max_entries < 1 || max_entries as u64 > MAX_ENTRIES_LIMIT as u64 {
        return Err(PyValueError::new_err(format!(
            "max_entries must be between 1 and {MAX_ENTRIES_LIMIT}, got {max_entries}"
        )));
    }
    if max_size < 1 {
        return Err(PyValueError::new_err(format!(
            "max_size must be at least 1, got {max_size}"
        )));
    }
    let base = Limits::new(max_entries as usize, max_size as u64)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    match max_entry_size {
        None => Ok(base),
        Some(n) if n < 1 => Err(PyValueError::new_err(format!(
            "max_entry_size must be between 1 and max_size ({max_size}), got {n}"
        ))),
        Some(n) => base
            .with_max_entry_size(n as u64)
            .map_err(|e| PyValueError::new_err(e.to_string())),
    }
}

fn non_negative(name: &str, value: i64) -> PyResult<u64> {
    u64::try_from(value)
        .map_err(|_| PyValueError::new_err(format!("{name} must be >= 0, got {value}")))
}

/// The key as a Python `str`: the argument itself when it already was the key.
fn key_object<'py>(
    py: Python<'py>,
    original: &Bound<'py, PyString>,
    key: Cow<'_, str>,
) -> Bound<'py, PyString> {
    match key {
        Cow::Borrowed(_) => original.clone(),
        Cow::Owned(s) => PyString::new(py, &s),
    }
}

fn opt_str_repr(value: Option<&str>) -> String {
    value.map_or_else(|| "None".to_owned(), |s| format!("{s:?}"))
}

/// Values an `LruCache` operation removed, released after the lock: the first two inline (no
/// allocation in the common case of at most one eviction plus one replaced value).
struct Doomed {
    first: Option<Py<PyAny>>,
    second: Option<Py<PyAny>>,
    rest: Vec<Py<PyAny>>,
}

impl Doomed {
    const fn new() -> Self {
        Self {
            first: None,
            second: None,
            rest: Vec::new(),
        }
    }

    #[inline]
    fn push(&mut self, value: Py<PyAny>) {
        if self.first.is_none() {
            self.first = Some(value);
        } else if self.second.is_none() {
            self.second = Some(value);
        } else {
            self.rest.push(value);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// LruCache
// ---------------------------------------------------------------------------------------------

type Lru = CoreLru<Box<str>, Py<PyAny>>;

/// A strict LRU bounded by entry count and total size, with npm lru-cache 11's semantics.
#[pyclass(frozen, module = "postcompact._core")]
pub struct LruCache {
    inner: Mutex<Lru>,
}

impl LruCache {
    fn lock(&self) -> PyResult<MutexGuard<'_, Lru>> {
        lock(&self.inner, "LruCache")
    }
}

#[pymethods]
impl LruCache {
    #[new]
    #[pyo3(signature = (max_entries = 100, max_size = 26_214_400, max_entry_size = None))]
    fn new(max_entries: i64, max_size: i64, max_entry_size: Option<i64>) -> PyResult<Self> {
        let limits = limits(max_entries, max_size, max_entry_size)?;
        Ok(Self {
            inner: Mutex::new(Lru::with_limits(limits)),
        })
    }

    /// Store `value` under `key`, accounted at `max(1, size)`; False if it was refused as larger
    /// than `max_entry_size` (an existing entry under `key` is then removed).
    fn set(&self, key: &str, value: Py<PyAny>, size: i64) -> PyResult<bool> {
        let size = non_negative("size", size)?;
        let mut doomed = Doomed::new();
        let stored = {
            let mut lru = self.lock()?;
            match lru.set_borrowed(key, value, size, |_, v| doomed.push(v)) {
                SetOutcome::Added => true,
                SetOutcome::Replaced(old) => {
                    doomed.push(old);
                    true
                }
                SetOutcome::Rejected(old) => {
                    if let Some(old) = old {
                        doomed.push(old);
                    }
                    false
                }
            }
        };
        drop(doomed);
        Ok(stored)
    }

    /// The value under `key` (making it the most recently used), or None.
    fn get(&self, py: Python<'_>, key: &str) -> PyResult<Option<Py<PyAny>>> {
        Ok(self.lock()?.get(key).map(|v| v.clone_ref(py)))
    }

    /// The value under `key` without touching the order, or None.
    fn peek(&self, py: Python<'_>, key: &str) -> PyResult<Option<Py<PyAny>>> {
        Ok(self.lock()?.peek(key).map(|v| v.clone_ref(py)))
    }

    /// Whether `key` is present (does not touch the order).
    fn has(&self, key: &str) -> PyResult<bool> {
        Ok(self.lock()?.contains(key))
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        match key.cast::<PyString>() {
            Ok(s) => self.has(s.to_str()?),
            Err(_) => Ok(false),
        }
    }

    /// The size `key` is accounted at, without touching the order, or None.
    fn size_of(&self, key: &str) -> PyResult<Option<u64>> {
        Ok(self.lock()?.peek_entry(key).map(|(_, _, size)| size))
    }

    /// Remove `key`; True if it was present.
    fn delete(&self, key: &str) -> PyResult<bool> {
        let removed = self.lock()?.delete(key);
        Ok(removed.is_some())
    }

    /// Remove every entry.
    fn clear(&self) -> PyResult<()> {
        let old = self.lock()?.take();
        drop(old);
        Ok(())
    }

    fn __len__(&self) -> PyResult<usize> {
        Ok(self.lock()?.len())
    }

    /// Sum of the entries' sizes.
    #[getter]
    fn total_size(&self) -> PyResult<u64> {
        Ok(self.lock()?.total_size())
    }

    /// Entries evicted to respect the bounds since the cache was made.
    #[getter]
    fn evictions(&self) -> PyResult<u64> {
        Ok(self.lock()?.evictions())
    }

    #[getter]
    fn max_entries(&self) -> PyResult<usize> {
        Ok(self.lock()?.limits().max_entries())
    }

    #[getter]
    fn max_size(&self) -> PyResult<u64> {
        Ok(self.lock()?.limits().max_size())
    }

    #[getter]
    fn max_entry_size(&self) -> PyResult<u64> {
        Ok(self.lock()?.limits().max_entry_size())
    }

    /// Keys, most recently used first.
    fn keys<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let keys: Vec<Bound<'py, PyString>> = {
            let lru = self.lock()?;
            lru.keys().map(|k| PyString::new(py, k)).collect()
        };
        PyList::new(py, keys)
    }

    /// `(key, value)` pairs, most recently used first.
    fn items<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items: Vec<(Bound<'py, PyString>, Py<PyAny>)> = {
            let lru = self.lock()?;
            lru.iter()
                .map(|(k, v, _)| (PyString::new(py, k), v.clone_ref(py)))
                .collect()
        };
        PyList::new(py, items)
    }

    /// `(key, value, size)` triples, most recently used first; `load` takes them back.
    fn dump<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items: Vec<(Bound<'py, PyString>, Py<PyAny>, u64)> = {
            let lru = self.lock()?;
            lru.iter()
                .map(|(k, v, size)| (PyString::new(py, k), v.clone_ref(py), size))
                .collect()
        };
        PyList::new(py, items)
    }

    /// Replace the contents with `(key, value, size)` triples given most recently used first.
    fn load(&self, entries: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut prepared: Vec<(Box<str>, Py<PyAny>, u64)> = Vec::new();
        for item in entries.try_iter()? {
            let (key, value, size): (String, Py<PyAny>, i64) = item?.extract()?;
            prepared.push((key.into(), value, non_negative("size", size)?));
        }
        let old = {
            let mut lru = self.lock()?;
            let old = lru.take();
            let mut doomed = Vec::new();
            for (k, v, size) in prepared.into_iter().rev() {
                match lru.set_with(k, v, size, |_, v| doomed.push(v)) {
                    SetOutcome::Added => {}
                    SetOutcome::Replaced(v) | SetOutcome::Rejected(Some(v)) => doomed.push(v),
                    SetOutcome::Rejected(None) => {}
                }
            }
            (old, doomed)
        };
        drop(old);
        Ok(())
    }

    fn __repr__(&self) -> PyResult<String> {
        let lru = self.lock()?;
        Ok(format!(
            "LruCache(len={}, total_size={}, max_entries={}, max_size={}, max_entry_size={})",
            lru.len(),
            lru.total_size(),
            lru.limits().max_entries(),
            lru.limits().max_size(),
            lru.limits().max_entry_size()
        ))
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        // Never block inside the collector; a busy cache is simply not traversed this time,
        // which only keeps its values alive longer.
        if let Ok(lru) = self.inner.try_lock() {
            for (_, v, _) in lru.iter() {
                visit.call(v)?;
            }
        }
        Ok(())
    }

    fn __clear__(&self) {
        let old = self.inner.try_lock().ok().map(|mut lru| lru.take());
        drop(old);
    }
}

// ---------------------------------------------------------------------------------------------
// FileState
// ---------------------------------------------------------------------------------------------

/// One file-state entry; immutable. `content` is held by reference, never copied.
#[pyclass(frozen, module = "postcompact._core")]
pub struct FileState {
    #[pyo3(get)]
    content: Py<PyBytes>,
    content_len: usize,
    #[pyo3(get)]
    timestamp: i64,
    #[pyo3(get)]
    offset: Option<u64>,
    #[pyo3(get)]
    limit: Option<u64>,
    #[pyo3(get)]
    partial_view: bool,
}

impl FileStateValue for Py<FileState> {
    #[inline]
    fn timestamp(&self) -> i64 {
        self.get().timestamp
    }

    #[inline]
    fn content_len(&self) -> usize {
        self.get().content_len
    }
}

#[pymethods]
impl FileState {
    #[new]
    #[pyo3(signature = (content, timestamp, offset = None, limit = None, partial_view = false))]
    fn new(
        content: Bound<'_, PyBytes>,
        timestamp: i64,
        offset: Option<i64>,
        limit: Option<i64>,
        partial_view: bool,
    ) -> PyResult<Self> {
        let offset = offset.map(|v| non_negative("offset", v)).transpose()?;
        let limit = limit.map(|v| non_negative("limit", v)).transpose()?;
        Ok(Self {
            content_len: content.as_bytes().len(),
            content: content.unbind(),
            timestamp,
            offset,
            limit,
            partial_view,
        })
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let Ok(other) = other.cast::<FileState>() else {
            return Ok(py.NotImplemented());
        };
        let other = other.get();
        let equal = self.timestamp == other.timestamp
            && self.offset == other.offset
            && self.limit == other.limit
            && self.partial_view == other.partial_view
            && self.content_len == other.content_len
            && (self.content.is(&other.content)
                || self.content.as_bytes(py) == other.content.as_bytes(py));
        Ok(equal.into_pyobject(py)?.to_owned().into_any().unbind())
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        let key = (
            self.content.clone_ref(py),
            self.timestamp,
            self.offset,
            self.limit,
            self.partial_view,
        );
        key.into_pyobject(py)?.hash()
    }

    fn __repr__(&self) -> String {
        fn opt(v: Option<u64>) -> String {
            v.map_or_else(|| "None".to_owned(), |v| v.to_string())
        }
        format!(
            "FileState(content=<{} bytes>, timestamp={}, offset={}, limit={}, partial_view={})",
            self.content_len,
            self.timestamp,
            opt(self.offset),
            opt(self.limit),
            if self.partial_view { "True" } else { "False" }
        )
    }
}

// ---------------------------------------------------------------------------------------------
// FileStateCache
// ---------------------------------------------------------------------------------------------

type Fsc = CoreFileStateCache<Py<FileState>>;

/// Claude Code's `readFileState`: an LRU of `FileState` keyed by normalised paths.
///
/// `FileState` values release nothing but `bytes` when dropped (no finalisers can run), so
/// evicted values are dropped under the lock.
#[pyclass(frozen, module = "postcompact._core")]
pub struct FileStateCache {
    inner: Mutex<Fsc>,
}

impl FileStateCache {
    fn lock(&self) -> PyResult<MutexGuard<'_, Fsc>> {
        lock(&self.inner, "FileStateCache")
    }

    fn wrap(inner: Fsc) -> Self {
        Self {
            inner: Mutex::new(inner),
        }
    }
}

#[pymethods]
impl FileStateCache {
    #[new]
    #[pyo3(signature = (max_entries = 100, max_size = 26_214_400, cwd = None, home = None))]
    fn new(
        max_entries: i64,
        max_size: i64,
        cwd: Option<&str>,
        home: Option<&str>,
    ) -> PyResult<Self> {
        let limits = limits(max_entries, max_size, None)?;
        let inner = Fsc::new(limits.max_entries(), limits.max_size(), cwd, home)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Self::wrap(inner))
    }

    /// Record `state` under `path`; returns the key (the normalised path). A state larger than
    /// `max_size` is not stored and removes any entry under the key.
    fn set<'py>(
        &self,
        py: Python<'py>,
        path: &Bound<'py, PyString>,
        state: &Bound<'py, FileState>,
    ) -> PyResult<Bound<'py, PyString>> {
        let text = path.to_str()?;
        let key = {
            let mut cache = self.lock()?;
            let (key, _) = cache.set(text, state.clone().unbind()).map_err(path_err)?;
            key
        };
        Ok(key_object(py, path, key))
    }

    /// The state under `path` (making it the most recently used), or None.
    fn get(&self, py: Python<'_>, path: &str) -> PyResult<Option<Py<FileState>>> {
        let mut cache = self.lock()?;
        Ok(cache.get(path).map_err(path_err)?.map(|v| v.clone_ref(py)))
    }

    /// The state under `path` without touching the order, or None.
    fn peek(&self, py: Python<'_>, path: &str) -> PyResult<Option<Py<FileState>>> {
        let cache = self.lock()?;
        Ok(cache.peek(path).map_err(path_err)?.map(|v| v.clone_ref(py)))
    }

    /// Whether `path` is cached (does not touch the order).
    fn has(&self, path: &str) -> PyResult<bool> {
        self.lock()?.has(path).map_err(path_err)
    }

    fn __contains__(&self, path: &Bound<'_, PyAny>) -> PyResult<bool> {
        match path.cast::<PyString>() {
            Ok(s) => self.has(s.to_str()?),
            Err(_) => Ok(false),
        }
    }

    /// Remove `path`; True if it was cached.
    fn delete(&self, path: &str) -> PyResult<bool> {
        let removed = self.lock()?.delete(path).map_err(path_err)?;
        Ok(removed.is_some())
    }

    /// Remove every entry.
    fn clear(&self) -> PyResult<()> {
        self.lock()?.clear();
        Ok(())
    }

    fn __len__(&self) -> PyResult<usize> {
        Ok(self.lock()?.len())
    }

    /// Sum of the entries' content sizes in bytes (each at least 1).
    #[getter]
    fn total_size(&self) -> PyResult<u64> {
        Ok(self.lock()?.total_size())
    }

    /// Entries evicted to respect the bounds since the cache was made.
    #[getter]
    fn evictions(&self) -> PyResult<u64> {
        Ok(self.lock()?.evictions())
    }

    #[getter]
    fn max_entries(&self) -> PyResult<usize> {
        Ok(self.lock()?.limits().max_entries())
    }

    #[getter]
    fn max_size(&self) -> PyResult<u64> {
        Ok(self.lock()?.limits().max_size())
    }

    #[getter]
    fn cwd(&self) -> PyResult<Option<String>> {
        Ok(self.lock()?.cwd().map(str::to_owned))
    }

    #[getter]
    fn home(&self) -> PyResult<Option<String>> {
        Ok(self.lock()?.home().map(str::to_owned))
    }

    /// The key `path` is stored under (the argument itself when it already is one).
    fn normalize<'py>(
        &self,
        py: Python<'py>,
        path: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyString>> {
        let text = path.to_str()?;
        let key = self.lock()?.key(text).map_err(path_err)?;
        Ok(key_object(py, path, key))
    }

    /// Keys, most recently used first.
    fn keys<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let keys: Vec<Bound<'py, PyString>> = {
            let cache = self.lock()?;
            cache.keys().map(|k| PyString::new(py, k)).collect()
        };
        PyList::new(py, keys)
    }

    /// `(path, state)` pairs, most recently used first (Claude Code's `cacheToObject` order).
    fn snapshot<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items: Vec<(Bound<'py, PyString>, Py<FileState>)> = {
            let cache = self.lock()?;
            cache
                .snapshot()
                .map(|(k, v)| (PyString::new(py, k), v.clone_ref(py)))
                .collect()
        };
        let tuples = items
            .into_iter()
            .map(|(k, v)| PyTuple::new(py, [k.into_any(), v.into_bound(py).into_any()]))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, tuples)
    }

    /// Replace the contents with `(path, state)` pairs given most recently used first (the
    /// order of `snapshot`). Paths are normalised; nothing changes if one is refused.
    fn load(&self, entries: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut prepared: Vec<(String, Py<FileState>)> = Vec::new();
        for item in entries.try_iter()? {
            let (path, state): (String, Py<FileState>) = item?.extract()?;
            prepared.push((path, state));
        }
        self.lock()?.load(prepared).map_err(path_err)
    }

    /// A copy with the same bounds, cwd, home, entries and order (`cloneFileStateCache`).
    fn clone(&self, py: Python<'_>) -> PyResult<Self> {
        let copy = self.lock()?.clone_with(|v| v.clone_ref(py));
        Ok(Self::wrap(copy))
    }

    /// `mergeFileStateCaches(self, other)`: a copy of this cache in which each entry of `other`
    /// replaces ours only when the path is missing or its timestamp is strictly newer. Every
    /// path of `other` is looked up with a promoting get, so they end up most recently used.
    fn merge(slf: &Bound<'_, Self>, other: &Bound<'_, Self>) -> PyResult<Self> {
        let py = slf.py();
        let this = slf.get();
        let merged = if slf.is(other) {
            let a = this.lock()?;
            a.merge_with(&a, |v| v.clone_ref(py), |_, _| {})
        } else {
            let a = this.lock()?;
            let b = other.get().lock()?;
            a.merge_with(&b, |v| v.clone_ref(py), |_, _| {})
        };
        Ok(Self::wrap(merged))
    }

    fn __repr__(&self) -> PyResult<String> {
        let cache = self.lock()?;
        Ok(format!(
            "FileStateCache(len={}, total_size={}, max_entries={}, max_size={}, cwd={}, home={})",
            cache.len(),
            cache.total_size(),
            cache.limits().max_entries(),
            cache.limits().max_size(),
            opt_str_repr(cache.cwd()),
            opt_str_repr(cache.home()),
        ))
    }
}

/// Claude Code's `expandPath`: trim, refuse NUL, expand `~` (with `home`), resolve against
/// `cwd`, normalise, NFC. Returns `path` itself when it already is in that form.
#[pyfunction]
#[pyo3(signature = (path, cwd, home = None))]
fn expand_path<'py>(
    py: Python<'py>,
    path: &Bound<'py, PyString>,
    cwd: &str,
    home: Option<&str>,
) -> PyResult<Bound<'py, PyString>> {
    let text = path.to_str()?;
    let key = expand_key(text, Some(cwd), home).map_err(path_err)?;
    Ok(key_object(py, path, key))
}
