//! `LruCache.get` and `LruCache.set` as plain METH_FASTCALL functions, the way a C extension
//! defines its hot methods.
//!
//! B1 (docs/benchmarks.md) is a Python loop of `get`/`set` calls where each call does ~10 ns of
//! cache work; PyO3's generated entry point adds its own bookkeeping around that (GIL-count and
//! reference-pool maintenance, the receiver's type check, generic argument extraction). These
//! entry points handle the common call — positional arguments, an exact `str` key, an exact
//! `int` size within bounds, the cache not in use — and pass every other call, unchanged, to the
//! `#[pymethods]` they replace on the type, which remain the one definition of the behaviour,
//! including every error.
//!
//! Soundness: the module targets the limited API (abi3), which free-threaded CPython cannot
//! load, so a call arrives holding the GIL; the method descriptor has already checked that the
//! receiver is an `LruCache` (a final class); Python objects are only borrowed or released
//! through `Bound` (an immediate decref, as the GIL is held).

use std::ffi::CString;
use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::ffi;
use pyo3::panic::PanicException;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple};

use crate::LruCache;

/// The `#[pymethods]` versions, called for everything the fast paths do not take.
static GENERIC_GET: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static GENERIC_SET: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Install the fast `get` and `set` on `LruCache` (once, when the module is initialised).
pub fn install(py: Python<'_>) -> PyResult<()> {
    let ty = py.get_type::<LruCache>();
    for (name, generic, fast) in [
        (
            "get",
            &GENERIC_GET,
            get_fast as ffi::PyCFunctionFastWithKeywords,
        ),
        (
            "set",
            &GENERIC_SET,
            set_fast as ffi::PyCFunctionFastWithKeywords,
        ),
    ] {
        let method = ty.getattr(name)?;
        // Keep the signature and docstring: `name(sig)\n--\n\ndoc` is CPython's convention for
        // `__text_signature__` of a builtin.
        let sig: String = method.getattr("__text_signature__")?.extract()?;
        let doc: Option<String> = method.getattr("__doc__")?.extract()?;
        let doc = format!("{name}{sig}\n--\n\n{}", doc.unwrap_or_default());
        let _ = generic.set(py, method.unbind());
        // The method table entry must outlive the type: leak it (two small entries, once).
        let def: &'static mut ffi::PyMethodDef = Box::leak(Box::new(ffi::PyMethodDef {
            ml_name: leak_cstr(name)?,
            ml_meth: ffi::PyMethodDefPointer {
                PyCFunctionFastWithKeywords: fast,
            },
            ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
            ml_doc: leak_cstr(&doc)?,
        }));
        // SAFETY: `ty` is a type object and `def` lives forever.
        let descr = unsafe {
            Bound::from_owned_ptr_or_err(py, ffi::PyDescr_NewMethod(ty.as_type_ptr(), def))?
        };
        ty.setattr(name, descr)?;
    }
    Ok(())
}

fn leak_cstr(text: &str) -> PyResult<*const std::ffi::c_char> {
    let c = CString::new(text).map_err(|e| PyErr::new::<PanicException, _>(e.to_string()))?;
    Ok(Box::leak(c.into_boxed_c_str()).as_ptr())
}

/// The arguments of a METH_FASTCALL|METH_KEYWORDS call: receiver, vector, count, names.
type Args = (
    *mut ffi::PyObject,
    *const *mut ffi::PyObject,
    ffi::Py_ssize_t,
    *mut ffi::PyObject,
);

/// The common call (no keywords) to `fast` with the receiver and the positional arguments;
/// what it declines (`None`) goes to `method`, the generic version.
///
/// # Safety
/// `args` is a METH_FASTCALL argument vector (`nargs` positional arguments, then one per name
/// in `kwnames`), called with the GIL held on an `LruCache` receiver (see the module doc).
unsafe fn enter(
    (slf, args, nargs, kwnames): Args,
    method: &PyOnceLock<Py<PyAny>>,
    fast: impl FnOnce(Python<'_>, &LruCache, &[*mut ffi::PyObject]) -> Option<*mut ffi::PyObject>,
) -> *mut ffi::PyObject {
    // SAFETY: as the function's contract says.
    unsafe {
        let py = Python::assume_attached();
        if kwnames.is_null() {
            let positional = std::slice::from_raw_parts(args, usize::try_from(nargs).unwrap_or(0));
            let done = guard(py, || {
                let cache = Bound::from_borrowed_ptr(py, slf);
                fast(py, cache.cast_unchecked::<LruCache>().get(), positional)
            });
            if let Some(result) = done {
                return result;
            }
        }
        generic(py, method, slf, args, nargs, kwnames)
    }
}

/// `LruCache.get(key)`.
unsafe extern "C" fn get_fast(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls this as the METH_FASTCALL method it was installed as.
    unsafe { enter((slf, args, nargs, kwnames), &GENERIC_GET, get_common) }
}

fn get_common(
    py: Python<'_>,
    cache: &LruCache,
    args: &[*mut ffi::PyObject],
) -> Option<*mut ffi::PyObject> {
    let [key] = *args else { return None };
    // SAFETY: a borrowed argument of the running call; checked to be an exact `str`.
    unsafe {
        if ffi::PyUnicode_CheckExact(key) == 0 {
            return None;
        }
        let key = Bound::from_borrowed_ptr(py, key);
        cache
            .get_exact(key.cast_unchecked::<PyString>())
            .map(Bound::into_ptr)
    }
}

/// `LruCache.set(key, value, size)`.
unsafe extern "C" fn set_fast(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls this as the METH_FASTCALL method it was installed as.
    unsafe { enter((slf, args, nargs, kwnames), &GENERIC_SET, set_common) }
}

fn set_common(
    py: Python<'_>,
    cache: &LruCache,
    args: &[*mut ffi::PyObject],
) -> Option<*mut ffi::PyObject> {
    let [key, value, size] = *args else {
        return None;
    };
    // SAFETY: borrowed arguments of the running call; `key` checked to be an exact `str` and
    // `size` an exact `int`.
    unsafe {
        if ffi::PyUnicode_CheckExact(key) == 0 || ffi::PyLong_CheckExact(size) == 0 {
            return None;
        }
        let size = ffi::PyLong_AsLongLong(size);
        if size == -1 && !ffi::PyErr_Occurred().is_null() {
            ffi::PyErr_Clear(); // out of range: the generic `set` reports it
            return None;
        }
        let size = u64::try_from(size).ok()?;
        let key = Bound::from_borrowed_ptr(py, key);
        let value = Bound::from_borrowed_ptr(py, value);
        let stored = cache.set_exact(key.cast_unchecked::<PyString>(), &value, size)?;
        Some(bool_ptr(py, stored))
    }
}

fn bool_ptr(py: Python<'_>, value: bool) -> *mut ffi::PyObject {
    pyo3::types::PyBool::new(py, value).to_owned().into_ptr()
}

/// Run a fast path; a panic becomes `PanicException` (as PyO3 reports one), returned as the
/// call's NULL result.
fn guard(
    py: Python<'_>,
    body: impl FnOnce() -> Option<*mut ffi::PyObject>,
) -> Option<*mut ffi::PyObject> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(done) => done,
        Err(_) => {
            PanicException::new_err("LruCache fast path panicked").restore(py);
            Some(std::ptr::null_mut())
        }
    }
}

/// Call the `#[pymethods]` version with the same arguments (`self` first).
unsafe fn generic(
    py: Python<'_>,
    method: &PyOnceLock<Py<PyAny>>,
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: as in `get_fast`.
    let call = || -> PyResult<Bound<'_, PyAny>> {
        let method = method
            .get(py)
            .ok_or_else(|| PanicException::new_err("LruCache fast path not installed"))?;
        let n = usize::try_from(nargs).unwrap_or(0);
        let arg = |i: usize| unsafe { Bound::from_borrowed_ptr(py, *args.add(i)) };
        let mut items = Vec::with_capacity(n + 1);
        items.push(unsafe { Bound::from_borrowed_ptr(py, slf) });
        items.extend((0..n).map(arg));
        let positional = PyTuple::new(py, items)?;
        let kwargs = if kwnames.is_null() {
            None
        } else {
            let names = unsafe { Bound::from_borrowed_ptr(py, kwnames) };
            let names = names.cast::<PyTuple>()?;
            let dict = PyDict::new(py);
            for (i, name) in names.iter().enumerate() {
                dict.set_item(name, arg(n + i))?;
            }
            Some(dict)
        };
        method.bind(py).call(positional, kwargs.as_ref())
    };
    match call() {
        Ok(result) => result.into_ptr(),
        Err(err) => {
            err.restore(py);
            std::ptr::null_mut()
        }
    }
}
