//! Python bindings of the file-state cache: `FileState`, `FileStateCache`, `expand_path`.
//!
//! Values are Python objects held by reference (`Py<…>`): a `FileState`'s `content` is the
//! caller's `bytes` object, never a copy.
//!
//! Locking: the cache is a frozen pyclass whose state sits behind an [`Exclusive`] — one
//! atomic swap to enter, one store to leave — held for the few nanoseconds of each operation. No
//! Python code runs while it is held: arguments are extracted before, GC-tracked objects (lists,
//! tuples) are built after. A re-entrant call therefore cannot happen through the cache itself;
//! should one happen anyway (from another thread on a free-threaded build), it raises
//! `RuntimeError` instead of deadlocking.

use std::borrow::Cow;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

use crate::exclusive::{Exclusive, ExclusiveGuard};
use crate::filestate::{
    FileStateCache as CoreFileStateCache, FileStateValue, DEFAULT_MAX_ENTRIES, DEFAULT_MAX_SIZE,
};
use crate::lru::{Limits, MAX_ENTRIES_LIMIT};
use crate::path::{expand_key, PathError};

// The literal defaults in the `#[pyo3(signature)]`s (literals so that Python sees them).
const _: () = assert!(DEFAULT_MAX_ENTRIES == 100 && DEFAULT_MAX_SIZE == 26_214_400);

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<FileState>()?;
    m.add_class::<FileStateCache>()?;
    m.add_function(wrap_pyfunction!(expand_path, m)?)?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// The error of a cache entered while in use: a re-entrant call, or a concurrent one from another
/// thread (the cache's state sits behind an [`Exclusive`], which never waits).
fn in_use(what: &str) -> PyErr {
    PyRuntimeError::new_err(format!(
        "{what} is already in use (a re-entrant call or a concurrent call from another thread)"
    ))
}

fn path_err(e: PathError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The bounds of a cache as Python gives them (entries are bounded by `max_size` alone).
fn limits(max_entries: i64, max_size: i64) -> PyResult<Limits> {
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
    Limits::new(max_entries as usize, max_size as u64)
        .map_err(|e| PyValueError::new_err(e.to_string()))
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

impl Drop for FileState {
    fn drop(&mut self) {
        super::py_ledger::sub(self.content_len);
    }
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
        let content_len = content.as_bytes().len();
        super::py_ledger::add(content_len);
        Ok(Self {
            content_len,
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

    /// Whether `other` is this entry but for its timestamp: the same range and view, and the
    /// same content (the very object, or equal bytes). The state store asks it of every row of
    /// an agent's write (a re-seeded entry is only moved), in one call rather than six getters.
    fn same_but_time(&self, py: Python<'_>, other: &Bound<'_, FileState>) -> bool {
        let other = other.get();
        self.offset == other.offset
            && self.limit == other.limit
            && self.partial_view == other.partial_view
            && self.content_len == other.content_len
            && (self.content.is(&other.content)
                || self.content.as_bytes(py) == other.content.as_bytes(py))
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
    inner: Exclusive<Fsc>,
}

impl FileStateCache {
    #[inline]
    fn lock(&self) -> PyResult<ExclusiveGuard<'_, Fsc>> {
        self.inner
            .try_lock()
            .ok_or_else(|| in_use("FileStateCache"))
    }

    fn wrap(inner: Fsc) -> Self {
        Self {
            inner: Exclusive::new(inner),
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
        let limits = limits(max_entries, max_size)?;
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
