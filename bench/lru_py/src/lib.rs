//! `postcompact_bench_lru._lru`: the Python `LruCache`, postcompact's core LRU
//! ([`_core::lru`]) holding arbitrary Python values under `str` keys. Only the benchmarks (B1,
//! `bench/b1_cache.py`) and its tests (`bench/lru_py/tests`) use it; the daemon never does, so it
//! is a crate of its own beside the product, built by `make bench` and `make test-bench` alone
//! (`make build-bench-lru`). Its typed surface is `python/postcompact_bench_lru/_lru.pyi`.
//!
//! Values are held by reference (`Py<…>`): `get` returns the very object that was `set`. The
//! cache's state sits behind an [`Exclusive`] as the core's `FileStateCache`'s does, and values
//! an operation drops (arbitrary objects, perhaps with finalisers) are released only once it is
//! free.
//!
//! `LruCache.get` and `.set` are entered through METH_FASTCALL functions (`fast.rs`) that take
//! the common call and hand everything else to the `#[pymethods]` here.
//!
//! Keys are the caller's `str` objects (exact `str`; a subclass is copied): lookups use
//! Python's cached string hash and compare by identity first, then by text, so a get hashes
//! nothing and a set of a new key allocates nothing.

use std::borrow::Cow;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use pyo3::PyTraverseError;

use _core::exclusive::{Exclusive, ExclusiveGuard};
use _core::lru::{Limits, LruCache as CoreLru, SetOutcome, MAX_ENTRIES_LIMIT};

mod fast;

#[pymodule]
fn _lru(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<LruCache>()?;
    fast::install(m.py())
}

/// The bounds as Python gives them, refused with the same words as the core's `FileStateCache`
/// (`rust_core/src/py/py_cache.rs`), plus `max_entry_size`.
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

/// Values an `LruCache` operation removed, released after the lock: the first two inline (no
/// allocation in the common case of at most one eviction plus one replaced value). Held as
/// `Bound` so that releasing them is a plain decref.
struct Doomed<'py> {
    first: Option<Bound<'py, PyAny>>,
    second: Option<Bound<'py, PyAny>>,
    rest: Option<Vec<Bound<'py, PyAny>>>,
}

impl<'py> Doomed<'py> {
    const fn new() -> Self {
        Self {
            first: None,
            second: None,
            rest: None,
        }
    }

    #[inline]
    fn push(&mut self, value: Bound<'py, PyAny>) {
        if self.first.is_none() {
            self.first = Some(value);
        } else if self.second.is_none() {
            self.second = Some(value);
        } else {
            self.rest.get_or_insert_with(Vec::new).push(value);
        }
    }
}

/// A key: an exact `str` object.
struct PyKey(Py<PyString>);

type Lru = CoreLru<PyKey, Py<PyAny>>;

/// An exact `str` with the same text as `key` (`key` itself unless it is a subclass instance,
/// whose `__hash__`/`__eq__` could run Python code) and Python's hash of it.
#[inline]
fn exact_key<'a, 'py>(
    key: &'a Bound<'py, PyString>,
) -> PyResult<(Cow<'a, Bound<'py, PyString>>, u64)> {
    let exact = if key.is_exact_instance_of::<PyString>() {
        Cow::Borrowed(key)
    } else {
        Cow::Owned(PyString::new(key.py(), key.to_str()?))
    };
    // Cached in the object after the first call; exact `str` hashing runs no Python code.
    let hash = exact.hash()? as u64;
    Ok((exact, hash))
}

/// Whether a stored key equals `key`: the same object, or the same text.
#[inline(always)]
fn key_eq(stored: &PyKey, key: &Bound<'_, PyString>) -> bool {
    stored.0.as_ptr() == key.as_ptr() || same_text(stored, key)
}

#[cold]
#[inline(never)]
fn same_text(stored: &PyKey, key: &Bound<'_, PyString>) -> bool {
    let stored = stored.0.bind(key.py());
    match (stored.to_str(), key.to_str()) {
        (Ok(a), Ok(b)) => a == b,
        // Lone surrogates have no UTF-8: compare as Python does (no Python code runs for exact
        // `str`).
        _ => stored.as_any().eq(key).unwrap_or(false),
    }
}

/// A strict LRU bounded by entry count and total size, with npm lru-cache 11's semantics.
#[pyclass(frozen, module = "postcompact_bench_lru._lru")]
pub struct LruCache {
    inner: Exclusive<Lru>,
}

impl LruCache {
    #[inline]
    fn lock(&self) -> PyResult<ExclusiveGuard<'_, Lru>> {
        self.inner.try_lock().ok_or_else(|| {
            PyRuntimeError::new_err(
                "LruCache is already in use (a re-entrant call or a concurrent call from another \
                 thread)",
            )
        })
    }

    /// Store one entry, collecting what it displaces into `doomed`.
    fn store<'py>(
        lru: &mut Lru,
        key: &Bound<'py, PyString>,
        value: Py<PyAny>,
        size: u64,
        doomed: &mut Doomed<'py>,
    ) -> PyResult<bool> {
        let py = key.py();
        let (key, hash) = exact_key(key)?;
        let outcome = lru.set_hashed(
            hash,
            |k| key_eq(k, &key),
            || PyKey(key.as_ref().clone().unbind()),
            value,
            size,
            |_, v| doomed.push(v.into_bound(py)),
        );
        Ok(match outcome {
            SetOutcome::Added => true,
            SetOutcome::Replaced(old) => {
                doomed.push(old.into_bound(py));
                true
            }
            SetOutcome::Rejected(old) => {
                if let Some(old) = old {
                    doomed.push(old.into_bound(py));
                }
                false
            }
        })
    }
}

/// The bodies of the METH_FASTCALL entry points (`fast.rs`) for the common call: an
/// exact `str` key, positional arguments, a size within bounds, the cache not in use. `None`
/// sends the call to the `#[pymethods]` below, which handle (or reject) everything else.
impl LruCache {
    /// `get(key)`: a new reference to the value, or to None.
    #[inline]
    pub(crate) fn get_exact<'py>(&self, key: &Bound<'py, PyString>) -> Option<Bound<'py, PyAny>> {
        let hash = key.hash().ok()? as u64; // cached in the str after its first hash
        let mut lru = self.inner.try_lock()?;
        let found = lru
            .get_hashed(hash, |k| key_eq(k, key))
            .map(|v| v.clone_ref(key.py()));
        drop(lru);
        Some(found.map_or_else(
            || key.py().None().into_bound(key.py()),
            |v| v.into_bound(key.py()),
        ))
    }

    /// `set(key, value, size)` for an entry the cache can hold (`size <= max_entry_size`: the
    /// refusal path stays in `set`).
    #[inline]
    pub(crate) fn set_exact<'py>(
        &self,
        key: &Bound<'py, PyString>,
        value: &Bound<'py, PyAny>,
        size: u64,
    ) -> Option<bool> {
        let py = key.py();
        let hash = key.hash().ok()? as u64;
        let mut lru = self.inner.try_lock()?;
        if _core::lru::entry_size(size) > lru.limits().max_entry_size() {
            return None;
        }
        let mut doomed = Doomed::new();
        let outcome = lru.set_hashed(
            hash,
            |k| key_eq(k, key),
            || PyKey(key.clone().unbind()),
            value.clone().unbind(),
            size,
            // Keys are exact `str`: releasing one runs no Python code, so it may happen here.
            |k, v| {
                drop(k.0.into_bound(py));
                doomed.push(v.into_bound(py));
            },
        );
        drop(lru);
        if let SetOutcome::Replaced(old) = outcome {
            doomed.push(old.into_bound(py));
        }
        drop(doomed); // after the lock: finalisers may run
        Some(true)
    }
}

#[pymethods]
impl LruCache {
    #[new]
    #[pyo3(signature = (max_entries = 100, max_size = 26_214_400, max_entry_size = None))]
    fn new(max_entries: i64, max_size: i64, max_entry_size: Option<i64>) -> PyResult<Self> {
        let limits = limits(max_entries, max_size, max_entry_size)?;
        Ok(Self {
            inner: Exclusive::new(Lru::with_limits(limits)),
        })
    }

    /// Store `value` under `key`, accounted at `max(1, size)`; False if it was refused as larger
    /// than `max_entry_size` (an existing entry under `key` is then removed).
    fn set<'py>(&self, key: &Bound<'py, PyString>, value: Py<PyAny>, size: i64) -> PyResult<bool> {
        let size = non_negative("size", size)?;
        let mut doomed = Doomed::new();
        let stored = Self::store(&mut *self.lock()?, key, value, size, &mut doomed);
        drop(doomed); // after the lock: finalisers may run
        stored
    }

    /// The value under `key` (making it the most recently used), or None.
    fn get(&self, key: &Bound<'_, PyString>) -> PyResult<Option<Py<PyAny>>> {
        let (key, hash) = exact_key(key)?;
        let mut lru = self.lock()?;
        Ok(lru
            .get_hashed(hash, |k| key_eq(k, &key))
            .map(|v| v.clone_ref(key.py())))
    }

    /// The value under `key` without touching the order, or None.
    fn peek(&self, key: &Bound<'_, PyString>) -> PyResult<Option<Py<PyAny>>> {
        let (key, hash) = exact_key(key)?;
        let lru = self.lock()?;
        Ok(lru
            .peek_hashed(hash, |k| key_eq(k, &key))
            .map(|(_, v, _)| v.clone_ref(key.py())))
    }

    /// Whether `key` is present (does not touch the order).
    fn has(&self, key: &Bound<'_, PyString>) -> PyResult<bool> {
        let (key, hash) = exact_key(key)?;
        let lru = self.lock()?;
        Ok(lru.peek_hashed(hash, |k| key_eq(k, &key)).is_some())
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        match key.cast::<PyString>() {
            Ok(s) => self.has(s),
            Err(_) => Ok(false),
        }
    }

    /// The size `key` is accounted at, without touching the order, or None.
    fn size_of(&self, key: &Bound<'_, PyString>) -> PyResult<Option<u64>> {
        let (key, hash) = exact_key(key)?;
        let lru = self.lock()?;
        Ok(lru
            .peek_hashed(hash, |k| key_eq(k, &key))
            .map(|(_, _, size)| size))
    }

    /// Remove `key`; True if it was present.
    fn delete(&self, key: &Bound<'_, PyString>) -> PyResult<bool> {
        let (key, hash) = exact_key(key)?;
        let removed = self.lock()?.delete_hashed(hash, |k| key_eq(k, &key));
        Ok(removed
            .map(|(k, v)| (k.0.into_bound(key.py()), v.into_bound(key.py())))
            .is_some())
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
        let keys: Vec<Py<PyString>> = {
            let lru = self.lock()?;
            lru.keys().map(|k| k.0.clone_ref(py)).collect()
        };
        PyList::new(py, keys)
    }

    /// `(key, value)` pairs, most recently used first.
    fn items<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items: Vec<(Py<PyString>, Py<PyAny>)> = {
            let lru = self.lock()?;
            lru.iter()
                .map(|(k, v, _)| (k.0.clone_ref(py), v.clone_ref(py)))
                .collect()
        };
        PyList::new(py, items)
    }

    /// `(key, value, size)` triples, most recently used first; `load` takes them back.
    fn dump<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items: Vec<(Py<PyString>, Py<PyAny>, u64)> = {
            let lru = self.lock()?;
            lru.iter()
                .map(|(k, v, size)| (k.0.clone_ref(py), v.clone_ref(py), size))
                .collect()
        };
        PyList::new(py, items)
    }

    /// Replace the contents with `(key, value, size)` triples given most recently used first.
    fn load(&self, entries: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut prepared: Vec<(Bound<'_, PyString>, Py<PyAny>, u64)> = Vec::new();
        for item in entries.try_iter()? {
            let (key, value, size): (Bound<'_, PyString>, Py<PyAny>, i64) = item?.extract()?;
            let key = exact_key(&key)?.0.into_owned(); // hashed now, outside the lock
            prepared.push((key, value, non_negative("size", size)?));
        }
        let mut doomed = Doomed::new();
        let old = {
            let mut lru = self.lock()?;
            let old = lru.take();
            for (key, value, size) in prepared.into_iter().rev() {
                Self::store(&mut lru, &key, value, size, &mut doomed)?;
            }
            old
        };
        drop(old);
        drop(doomed);
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
        // which only keeps its values alive longer. Keys are exact `str`: not GC-tracked.
        if let Some(lru) = self.inner.try_lock() {
            for (_, v, _) in lru.iter() {
                visit.call(v)?;
            }
        }
        Ok(())
    }

    fn __clear__(&self) {
        let old = self.inner.try_lock().map(|mut lru| lru.take());
        drop(old);
    }
}
