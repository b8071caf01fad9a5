//! Python bindings of [`crate::fsutil`] (`realpath`) and [`crate::diskread`] (`read_whole`,
//! `read_range`, their results `Whole` and `Ranged`, and `Refusal`, why a read was refused).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::diskread::{self, Inline, Limits, Range, ReadFailure};
use crate::fsutil;

pyo3::create_exception!(
    _core,
    ReadRefused,
    PyException,
    "A read refused or failed: args are (refusal,), a `Refusal`; see `read_whole`."
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

/// Why a read was refused or failed (`diskread::ReadFailure`, named for `diskaccess.py`).
#[pyclass(frozen, eq, eq_int, hash, module = "postcompact._core")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RefusalKind {
    /// `stat` failed (with the errno).
    #[pyo3(name = "STAT")]
    Stat,
    #[pyo3(name = "DIRECTORY")]
    Directory,
    /// A device, FIFO or socket: not a regular file.
    #[pyo3(name = "DEVICE")]
    Device,
    /// The caller flagged the name as binary.
    #[pyo3(name = "BINARY_NAME")]
    BinaryName,
    /// Over the byte cap at `stat` time (with the size).
    #[pyo3(name = "TOO_LARGE")]
    TooLarge,
    /// An inline read that would wait for the disk (retry on a thread).
    #[pyo3(name = "WOULD_BLOCK")]
    WouldBlock,
    /// `open` failed (with the errno).
    #[pyo3(name = "OPEN")]
    Open,
    /// The file opened is not the one `stat` saw, or the path holds a symlink now.
    #[pyo3(name = "CHANGED")]
    Changed,
    /// A NUL byte.
    #[pyo3(name = "BINARY")]
    Binary,
    /// Grew past the byte cap since `stat`.
    #[pyo3(name = "GREW")]
    Grew,
    /// The answer would be over the answer limit (with the bytes it would take).
    #[pyo3(name = "ANSWER_TOO_LARGE")]
    AnswerTooLarge,
    /// `read` failed (with the errno).
    #[pyo3(name = "READ")]
    Read,
}

/// A read refused or failed: what, and the errno or size that goes with it (0 when none).
#[pyclass(frozen, module = "postcompact._core")]
#[derive(Clone, Copy, Debug)]
pub struct Refusal {
    #[pyo3(get)]
    pub kind: RefusalKind,
    #[pyo3(get)]
    pub errno: i32,
    #[pyo3(get)]
    pub size: u64,
}

#[pymethods]
impl Refusal {
    fn __repr__(&self) -> String {
        format!(
            "Refusal(kind={:?}, errno={}, size={})",
            self.kind, self.errno, self.size
        )
    }
}

impl Refusal {
    /// The refusal of a failure.
    pub fn of(f: &ReadFailure) -> Self {
        let errno = |e: &std::io::Error| e.raw_os_error().unwrap_or(0);
        let (kind, errno, size) = match f {
            ReadFailure::Stat(e) => (RefusalKind::Stat, errno(e), 0),
            ReadFailure::Directory => (RefusalKind::Directory, 0, 0),
            ReadFailure::NotRegular => (RefusalKind::Device, 0, 0),
            ReadFailure::BinaryName => (RefusalKind::BinaryName, 0, 0),
            ReadFailure::TooLarge(size) => (RefusalKind::TooLarge, 0, *size),
            ReadFailure::WouldBlock => (RefusalKind::WouldBlock, 0, 0),
            ReadFailure::Open(e) => (RefusalKind::Open, errno(e), 0),
            ReadFailure::Changed => (RefusalKind::Changed, 0, 0),
            ReadFailure::Binary => (RefusalKind::Binary, 0, 0),
            ReadFailure::Grew => (RefusalKind::Grew, 0, 0),
            ReadFailure::AnswerTooLarge(need) => (RefusalKind::AnswerTooLarge, 0, *need),
            ReadFailure::Read(e) => (RefusalKind::Read, errno(e), 0),
        };
        Self { kind, errno, size }
    }

    fn raise(f: &ReadFailure) -> PyErr {
        ReadRefused::new_err((Self::of(f),))
    }
}

/// A modification time in nanoseconds as Python takes it (an i64, as `os.stat` gives it).
pub(super) fn ns(mtime_ns: i128) -> i64 {
    mtime_ns.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// What `read_whole` read.
#[pyclass(frozen, module = "postcompact._core")]
pub struct Whole {
    /// The file's bytes.
    #[pyo3(get)]
    content: Py<PyBytes>,
    #[pyo3(get)]
    mtime_ns: i64,
    #[pyo3(get)]
    size: u64,
    /// Newlines + 1; 0 for an empty file.
    #[pyo3(get)]
    total_lines: usize,
}

/// Read the regular file at `path` (a real path) whole, without the GIL (see `_core.pyi`).
/// Raises `ReadRefused(refusal)`; see `diskread.rs`.
#[pyfunction]
#[pyo3(signature = (path, max_bytes, sniff_bytes, binary_name = false, inline_max = None))]
fn read_whole(
    py: Python<'_>,
    path: PathBuf,
    max_bytes: u64,
    sniff_bytes: usize,
    binary_name: bool,
    inline_max: Option<u64>,
) -> PyResult<Whole> {
    let limits = limits(max_bytes, sniff_bytes, binary_name, inline_max);
    match py.detach(|| diskread::read_whole(&path, limits)) {
        Ok(w) => Ok(Whole {
            content: PyBytes::new(py, &w.data).unbind(),
            mtime_ns: ns(w.mtime_ns),
            size: w.size,
            total_lines: w.total_lines,
        }),
        Err(f) => Err(Refusal::raise(&f)),
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

/// What `read_range` read.
#[pyclass(frozen, module = "postcompact._core")]
pub struct Ranged {
    /// The range's bytes.
    #[pyo3(get)]
    content: Py<PyBytes>,
    #[pyo3(get)]
    mtime_ns: i64,
    #[pyo3(get)]
    size: u64,
    #[pyo3(get)]
    total_lines: u64,
    #[pyo3(get)]
    num_lines: u64,
    /// `head_bytes` cut the range short.
    #[pyo3(get)]
    truncated: bool,
}

/// Read lines `[start, start + limit)` of the regular file at `path` (a real path), without the
/// GIL (see `_core.pyi`). Raises `ReadRefused(refusal)` as `read_whole` does (never TOO_LARGE or
/// GREW), and ANSWER_TOO_LARGE with the bytes the answer would take when over `max_answer`.
#[pyfunction]
#[pyo3(signature = (
    path, start, limit, head_bytes, sniff_bytes, binary_name = false, inline_max = None,
    max_answer = None
))]
#[allow(clippy::too_many_arguments)]
fn read_range(
    py: Python<'_>,
    path: PathBuf,
    start: u64,
    limit: Option<u64>,
    head_bytes: Option<u64>,
    sniff_bytes: usize,
    binary_name: bool,
    inline_max: Option<u64>,
    max_answer: Option<u64>,
) -> PyResult<Ranged> {
    let limits = limits(u64::MAX, sniff_bytes, binary_name, inline_max);
    let range = Range {
        start,
        limit,
        head_bytes,
        max_answer,
    };
    match py.detach(|| diskread::read_range(&path, limits, range)) {
        Ok(r) => Ok(Ranged {
            content: PyBytes::new(py, &r.data).unbind(),
            mtime_ns: ns(r.mtime_ns),
            size: r.size,
            total_lines: r.total_lines,
            num_lines: r.num_lines,
            truncated: r.truncated,
        }),
        Err(f) => Err(Refusal::raise(&f)),
    }
}

/// Adds the file-system helpers to `postcompact._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(realpath, m)?)?;
    m.add_function(wrap_pyfunction!(read_whole, m)?)?;
    m.add_function(wrap_pyfunction!(read_range, m)?)?;
    m.add("ReadRefused", m.py().get_type::<ReadRefused>())?;
    m.add_class::<RefusalKind>()?;
    m.add_class::<Refusal>()?;
    m.add_class::<Whole>()?;
    m.add_class::<Ranged>()?;
    Ok(())
}
