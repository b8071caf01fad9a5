//! Python bindings of [`crate::fileanswer`]: `restore_files` (Compact's restored files, a batch
//! in one call) and `read_answer` (ReadFile's answer). Both read and render without the GIL and
//! return, per file, either the answer's protobuf bytes with the measures the caller decides
//! on, or the code of why the caller's general path must take the file (see `_core.pyi`).

use std::os::raw::c_int;
use std::path::PathBuf;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use pyo3::IntoPyObjectExt;

use crate::fileanswer::{self, Codes, FileSpec, Frame, ReadLimits, ReadRequest, Restored, Skip};
use crate::readfile::{Inline, Limits};

use super::py_fsutil::failure_code;

/// A restored file's attachment bytes as the core wrote them, read through the buffer protocol
/// (`b"".join` copies them once, into the answer, without a `bytes` copy of their own).
#[pyclass(frozen, module = "postcompact._core")]
pub struct Framed {
    data: Vec<u8>,
}

#[pymethods]
impl Framed {
    fn __len__(&self) -> usize {
        self.data.len()
    }

    fn __bytes__<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.data)
    }

    /// A read-only view of the bytes; the view holds a reference to this object.
    ///
    /// # Safety
    /// `view` is the buffer CPython passes to `bf_getbuffer`.
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        let data = &slf.get().data;
        // SAFETY: `view` is CPython's; the data lives as long as this object, which the view
        // references (PyBuffer_FillInfo takes a new reference to it), and is never written.
        let filled = unsafe {
            ffi::PyBuffer_FillInfo(
                view,
                slf.as_ptr(),
                data.as_ptr().cast_mut().cast(),
                data.len() as ffi::Py_ssize_t,
                1,
                flags,
            )
        };
        if filled == -1 {
            return Err(PyErr::fetch(slf.py()));
        }
        Ok(())
    }
}

fn skip_code(skip: &Skip) -> &'static str {
    match skip {
        Skip::Read(f) => failure_code(f),
        Skip::NotUtf8 => "not_utf8",
        Skip::Empty => "empty",
        Skip::Bom => "bom",
        Skip::Escape => "escape",
        Skip::HeadOnly => "head_only",
        Skip::AnswerTooLarge => "answer_too_large",
    }
}

fn read_limits(
    max_bytes: u64,
    sniff_bytes: usize,
    inline_max: Option<u64>,
    binary_name: bool,
    max_answer: Option<u64>,
) -> ReadLimits {
    ReadLimits {
        limits: Limits {
            max_bytes,
            sniff_bytes,
            binary_name,
            inline: inline_max.map(|max_size| Inline { max_size }),
        },
        max_answer,
    }
}

/// (real path, binary name, first line, limit, attachment path, display path, Read call
/// block, the content the cache held, the attachment rendered of that content before)
type Spec<'py> = (
    PathBuf,
    bool,
    u64,
    Option<u64>,
    String,
    String,
    String,
    Option<Bound<'py, PyBytes>>,
    Option<Bound<'py, Framed>>,
);

/// Each file of `specs` restored (see `fileanswer::restored_file`): a tuple `(framed, content,
/// mtime_ns, total_lines, num_lines, tokens, blocks_units, text_units, json_units)`, or the code
/// of why the general path must take it. `content` is the object the cache held when the bytes
/// read are the same (no copy; the caller sees the entry unchanged by identity); and when the
/// spec also gives the attachment rendered of those bytes, nothing is rendered: `framed` is that
/// very object and the four measures are 0 (the caller has them).
#[pyfunction]
#[pyo3(signature = (
    specs, prefix, malware, suffix, max_bytes, sniff_bytes, inline_max, include_content, kind,
    placement
))]
#[allow(clippy::too_many_arguments)]
fn restore_files<'py>(
    py: Python<'py>,
    specs: Vec<Spec<'py>>,
    prefix: &str,
    malware: &str,
    suffix: &str,
    max_bytes: u64,
    sniff_bytes: usize,
    inline_max: Option<u64>,
    include_content: bool,
    kind: u64,
    placement: u64,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let frame = Frame {
        prefix,
        malware,
        suffix,
    };
    let codes = Codes { kind, placement };
    let (files, known): (Vec<_>, Vec<_>) = specs
        .into_iter()
        .map(|(r, b, s, l, p, d, c, held, reuse)| ((r, b, s, l, p, d, c), (held, reuse)))
        .unzip();
    // The held bytes a re-read may be skipped for (read-only views of live `bytes` objects,
    // which `known` keeps alive until the end).
    let skip_if: Vec<Option<&[u8]>> = known
        .iter()
        .map(|(held, reuse)| match (held, reuse) {
            (Some(held), Some(_)) => Some(held.as_bytes()),
            _ => None,
        })
        .collect();
    let done: Vec<_> = py.detach(|| {
        files
            .iter()
            .zip(&skip_if)
            .map(
                |((real, binary_name, start, limit, path, display, call_block), skip_if)| {
                    let spec = FileSpec {
                        real,
                        binary_name: *binary_name,
                        start: *start,
                        limit: *limit,
                        path,
                        display,
                        call_block,
                    };
                    let lim = read_limits(max_bytes, sniff_bytes, inline_max, *binary_name, None);
                    fileanswer::restored_file(&spec, &frame, codes, include_content, lim, *skip_if)
                },
            )
            .collect()
    });
    done.into_iter()
        .zip(known)
        .map(|(r, (held, reuse))| match r {
            Ok(Restored::Unchanged {
                mtime_ns,
                total_lines,
                num_lines,
            }) => (reuse, held, mtime_ns, total_lines, num_lines, 0, 0, 0, 0).into_bound_py_any(py),
            Ok(Restored::Rendered(f)) => (
                Bound::new(py, Framed { data: f.framed })?,
                match held {
                    Some(held) if held.as_bytes() == f.content.as_slice() => held,
                    _ => PyBytes::new(py, &f.content),
                },
                f.mtime_ns,
                f.total_lines,
                f.num_lines,
                f.tokens,
                f.blocks_units,
                f.text_units,
                f.json_units,
            )
                .into_bound_py_any(py),
            Err(skip) => skip_code(&skip).into_bound_py_any(py),
        })
        .collect()
}

/// ReadFile's answer for lines `[start, start + limit)` of `real` (see
/// `fileanswer::read_answer`): `(wire, content, mtime_ns, total_lines, num_lines, text_units)`,
/// or the code of why the general path must take it.
#[pyfunction]
#[pyo3(signature = (
    real, binary_name, start, limit, path, malware, timestamp_ms, max_bytes, sniff_bytes,
    inline_max, max_answer
))]
#[allow(clippy::too_many_arguments)]
fn read_answer<'py>(
    py: Python<'py>,
    real: PathBuf,
    binary_name: bool,
    start: u64,
    limit: Option<u64>,
    path: &str,
    malware: &str,
    timestamp_ms: Option<i64>,
    max_bytes: u64,
    sniff_bytes: usize,
    inline_max: Option<u64>,
    max_answer: Option<u64>,
) -> PyResult<Bound<'py, PyAny>> {
    let req = ReadRequest {
        real: &real,
        binary_name,
        start,
        limit,
        path,
        malware,
        timestamp_ms,
    };
    let lim = read_limits(max_bytes, sniff_bytes, inline_max, binary_name, max_answer);
    match py.detach(|| fileanswer::read_answer(&req, lim)) {
        Ok(a) => PyTuple::new(
            py,
            [
                PyBytes::new(py, &a.wire).into_any(),
                PyBytes::new(py, &a.content).into_any(),
                a.mtime_ns.into_bound_py_any(py)?,
                a.total_lines.into_bound_py_any(py)?,
                a.num_lines.into_bound_py_any(py)?,
                a.text_units.into_bound_py_any(py)?,
            ],
        )
        .map(Bound::into_any),
        Err(skip) => skip_code(&skip).into_bound_py_any(py),
    }
}

/// Adds the file answers to `postcompact._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Framed>()?;
    m.add_function(wrap_pyfunction!(restore_files, m)?)?;
    m.add_function(wrap_pyfunction!(read_answer, m)?)?;
    Ok(())
}
