//! Python bindings of [`crate::fsutil`] (`realpath`) and [`crate::readfile`] (`read_whole`,
//! `read_range`).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::fsutil;
use crate::readfile::{self, Inline, Limits, Range, ReadFailure};

pyo3::create_exception!(
    _core,
    ReadRefused,
    PyException,
    "read_whole refused or failed: args are (code, errno, size); see `read_whole`."
);

/// `os.path.realpath(path)` for an absolute path, or `None` where the caller must fall back to
/// Python (a relative path, a symlink loop, a link that cannot be read). With `base` (a real
/// absolute directory, e.g. an earlier result), `path` is relative to it and only its own
/// components are looked up: `realpath(base + "/" + path)`.
#[pyfunction]
#[pyo3(signature = (path, base = None))]
fn realpath(py: Python<'_>, path: PathBuf, base: Option<PathBuf>) -> Option<OsString> {
    let bytes = path.as_os_str().as_bytes();
    let real = match &base {
        None => py.detach(|| fsutil::realpath(bytes)),
        Some(b) => {
            let b = b.as_os_str().as_bytes();
            py.detach(|| fsutil::realpath_under(b, bytes))
        }
    };
    real.map(|v| OsStr::from_bytes(&v).to_owned())
}

/// The code of a failure alone (see [`failure`]).
pub(super) fn failure_code(f: &ReadFailure) -> &'static str {
    failure(f).0
}

/// `(code, errno, size)` of a failure: the code names what `fileread.py` reports.
fn failure(f: &ReadFailure) -> (&'static str, i32, u64) {
    let errno = |e: &std::io::Error| e.raw_os_error().unwrap_or(0);
    match f {
        ReadFailure::Stat(e) => ("stat", errno(e), 0),
        ReadFailure::Directory => ("directory", 0, 0),
        ReadFailure::NotRegular => ("device", 0, 0),
        ReadFailure::BinaryName => ("binary_name", 0, 0),
        ReadFailure::TooLarge(size) => ("too_large", 0, *size),
        ReadFailure::WouldBlock => ("would_block", 0, 0),
        ReadFailure::Open(e) => ("open", errno(e), 0),
        ReadFailure::Changed => ("changed", 0, 0),
        ReadFailure::Binary => ("binary", 0, 0),
        ReadFailure::Grew => ("grew", 0, 0),
        ReadFailure::AnswerTooLarge(need) => ("answer_too_large", 0, *need),
        ReadFailure::Read(e) => ("read", errno(e), 0),
    }
}

/// Read the regular file at `path` (a real path) whole, without the GIL: `(content, mtime_ns,
/// size, total_lines)`. Raises `ReadRefused(code, errno, size)`; see `readfile.rs`.
#[pyfunction]
#[pyo3(signature = (path, max_bytes, sniff_bytes, binary_name = false, inline_max = None))]
fn read_whole<'py>(
    py: Python<'py>,
    path: PathBuf,
    max_bytes: u64,
    sniff_bytes: usize,
    binary_name: bool,
    inline_max: Option<u64>,
) -> PyResult<(Bound<'py, PyBytes>, i128, u64, usize)> {
    let limits = limits(max_bytes, sniff_bytes, binary_name, inline_max);
    match py.detach(|| readfile::read_whole(&path, limits)) {
        Ok(w) => Ok((PyBytes::new(py, &w.data), w.mtime_ns, w.size, w.total_lines)),
        Err(f) => Err(ReadRefused::new_err(failure(&f))),
    }
}

fn limits(
    max_bytes: u64,
    sniff_bytes: usize,
    binary_name: bool,
    inline_max: Option<u64>,
) -> Limits {
    Limits {
        max_bytes,
        sniff_bytes,
        binary_name,
        inline: inline_max.map(|max_size| Inline { max_size }),
    }
}

/// Read lines `[start, start + limit)` of the regular file at `path` (a real path), without the
/// GIL: `(content, mtime_ns, size, total_lines, num_lines, truncated)`. Raises
/// `ReadRefused(code, errno, size)` as `read_whole` does (never "too_large" or "grew"), and
/// "answer_too_large" with the bytes the answer would take when over `max_answer`.
#[pyfunction]
#[pyo3(signature = (
    path, start, limit, head_bytes, sniff_bytes, binary_name = false, inline_max = None,
    max_answer = None
))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn read_range<'py>(
    py: Python<'py>,
    path: PathBuf,
    start: u64,
    limit: Option<u64>,
    head_bytes: Option<u64>,
    sniff_bytes: usize,
    binary_name: bool,
    inline_max: Option<u64>,
    max_answer: Option<u64>,
) -> PyResult<(Bound<'py, PyBytes>, i128, u64, u64, u64, bool)> {
    let limits = limits(u64::MAX, sniff_bytes, binary_name, inline_max);
    let range = Range {
        start,
        limit,
        head_bytes,
        max_answer,
    };
    match py.detach(|| readfile::read_range(&path, limits, range)) {
        Ok(r) => Ok((
            PyBytes::new(py, &r.data),
            r.mtime_ns,
            r.size,
            r.total_lines,
            r.num_lines,
            r.truncated,
        )),
        Err(f) => Err(ReadRefused::new_err(failure(&f))),
    }
}

/// Adds the file-system helpers to `postcompact._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(realpath, m)?)?;
    m.add_function(wrap_pyfunction!(read_whole, m)?)?;
    m.add_function(wrap_pyfunction!(read_range, m)?)?;
    m.add("ReadRefused", m.py().get_type::<ReadRefused>())?;
    Ok(())
}
