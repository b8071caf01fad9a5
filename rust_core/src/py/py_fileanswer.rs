//! Python bindings of [`crate::fileanswer`]: `restore_files` (Compact's restored files, a batch
//! in one call) and `read_answer` (ReadFile's answer). Both read and render without the GIL and
//! return, per file, either the answer's protobuf bytes with the measures the caller decides
//! on (`RestoredFile`, `ReadAnswer`), or why the caller's general path must take the file (a
//! `Skip`, or the read's `Refusal`); see `_core.pyi`.

use std::os::raw::c_int;
use std::path::{Path, PathBuf};

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::fileanswer::{self, FileSpec, Frame, ReadRequest, Restored};
use crate::readfile::{Inline, Limits};

use super::py_fsutil::{ns, Refusal};

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

/// Why the core leaves a file to the caller's general path (the read itself succeeded).
#[pyclass(frozen, eq, eq_int, hash, module = "postcompact._core")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Skip {
    /// Not valid UTF-8.
    #[pyo3(name = "NOT_UTF8")]
    NotUtf8,
    /// Nothing to number (the empty-file or past-the-end warning).
    #[pyo3(name = "EMPTY")]
    Empty,
    /// A UTF-8 byte-order mark at the start.
    #[pyo3(name = "BOM")]
    Bom,
    /// A closing reminder tag in the text.
    #[pyo3(name = "ESCAPE")]
    Escape,
    /// A head was asked for and the file has more lines.
    #[pyo3(name = "HEAD_ONLY")]
    HeadOnly,
    /// A ReadFile answer over the answer limit.
    #[pyo3(name = "ANSWER_TOO_LARGE")]
    AnswerTooLarge,
}

/// `Skip` or `Refusal`, as a Python object.
fn skipped<'py>(py: Python<'py>, skip: &fileanswer::Skip) -> PyResult<Bound<'py, PyAny>> {
    let s = match skip {
        fileanswer::Skip::Read(f) => return Bound::new(py, Refusal::of(f)).map(Bound::into_any),
        fileanswer::Skip::NotUtf8 => Skip::NotUtf8,
        fileanswer::Skip::Empty => Skip::Empty,
        fileanswer::Skip::Bom => Skip::Bom,
        fileanswer::Skip::Escape => Skip::Escape,
        fileanswer::Skip::HeadOnly => Skip::HeadOnly,
        fileanswer::Skip::AnswerTooLarge => Skip::AnswerTooLarge,
    };
    Bound::new(py, s).map(Bound::into_any)
}

/// How the core reads: the byte cap of a whole read, the bytes sniffed for NUL first, and (an
/// inline read, on the event loop) the largest file read from the page cache only.
#[pyclass(frozen, module = "postcompact._core")]
#[derive(Clone, Copy, Debug)]
pub struct ReadLimits {
    #[pyo3(get)]
    max_bytes: u64,
    #[pyo3(get)]
    sniff_bytes: usize,
    #[pyo3(get)]
    inline_max: Option<u64>,
}

#[pymethods]
impl ReadLimits {
    #[new]
    #[pyo3(signature = (*, max_bytes, sniff_bytes, inline_max = None))]
    fn new(max_bytes: u64, sniff_bytes: usize, inline_max: Option<u64>) -> Self {
        Self {
            max_bytes,
            sniff_bytes,
            inline_max,
        }
    }
}

impl ReadLimits {
    fn of(&self, binary_name: bool, max_answer: Option<u64>) -> fileanswer::ReadLimits {
        fileanswer::ReadLimits {
            limits: Limits {
                max_bytes: self.max_bytes,
                sniff_bytes: self.sniff_bytes,
                binary_name,
                inline: self.inline_max.map(|max_size| Inline { max_size }),
            },
            max_answer,
        }
    }
}

/// A restored file's result block around its numbered text (the caller's templates, rendered):
/// `prefix`, the text, `malware` ("" when the policy has none), `suffix`.
#[pyclass(frozen, eq, module = "postcompact._core")]
#[derive(Debug, PartialEq)]
pub struct FileFrame {
    #[pyo3(get)]
    prefix: String,
    #[pyo3(get)]
    malware: String,
    #[pyo3(get)]
    suffix: String,
}

#[pymethods]
impl FileFrame {
    #[new]
    #[pyo3(signature = (*, prefix, malware, suffix))]
    fn new(prefix: String, malware: String, suffix: String) -> Self {
        Self {
            prefix,
            malware,
            suffix,
        }
    }
}

/// One file for `restore_files`.
#[pyclass(frozen, module = "postcompact._core")]
pub struct RestoreSpec {
    /// The real path to read (symlinks resolved, checked by the caller).
    #[pyo3(get)]
    real: Py<PyString>,
    #[pyo3(get)]
    binary_name: bool,
    /// The first line, 1-based.
    #[pyo3(get)]
    start: u64,
    /// How many lines (None: to the end).
    #[pyo3(get)]
    limit: Option<u64>,
    /// `FileAttachment.path`.
    #[pyo3(get)]
    path: Py<PyString>,
    /// `FileAttachment.display_path`.
    #[pyo3(get)]
    display: Py<PyString>,
    /// The attachment's first block (the Read call, wrapped).
    #[pyo3(get)]
    call_block: Py<PyString>,
    /// The content the cache held.
    #[pyo3(get)]
    held: Option<Py<PyBytes>>,
    /// The file as the last compaction restored it, from `held` with the same inputs.
    #[pyo3(get)]
    prior: Option<Py<RestoredFile>>,
}

#[pymethods]
impl RestoreSpec {
    #[new]
    #[pyo3(signature = (
        *, real, binary_name, start, limit, path, display, call_block, held = None, prior = None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        real: Py<PyString>,
        binary_name: bool,
        start: u64,
        limit: Option<u64>,
        path: Py<PyString>,
        display: Py<PyString>,
        call_block: Py<PyString>,
        held: Option<Py<PyBytes>>,
        prior: Option<Py<RestoredFile>>,
    ) -> Self {
        Self {
            real,
            binary_name,
            start,
            limit,
            path,
            display,
            call_block,
            held,
            prior,
        }
    }
}

/// A restored file: its attachment (`framed`) and its measures (see `_core.pyi`).
#[pyclass(frozen, module = "postcompact._core")]
pub struct RestoredFile {
    #[pyo3(get)]
    framed: Py<Framed>,
    /// The bytes read (the object the cache held when they are the same).
    #[pyo3(get)]
    content: Py<PyBytes>,
    #[pyo3(get)]
    mtime_ns: i64,
    #[pyo3(get)]
    total_lines: u64,
    #[pyo3(get)]
    num_lines: u64,
    /// `Attachment.tokens`: the rough estimate of the blocks joined by "\n".
    #[pyo3(get)]
    tokens: u64,
    /// UTF-16 units of the blocks joined by "\n".
    #[pyo3(get)]
    blocks_units: u64,
    /// UTF-16 units of the text as attached.
    #[pyo3(get)]
    text_units: u64,
    /// UTF-16 units of `JSON.stringify` of that text.
    #[pyo3(get)]
    json_units: u64,
    /// The bytes read are the spec's `held` and `framed` is its `prior`'s, not rendered again.
    #[pyo3(get)]
    reused: bool,
}

/// Each file of `specs` restored (see `fileanswer::restored_file` and `_core.pyi`): a
/// `RestoredFile`, or why the general path must take it (a `Skip`, or the read's `Refusal`).
#[pyfunction]
#[pyo3(signature = (specs, frame, limits, *, include_content))]
fn restore_files<'py>(
    py: Python<'py>,
    specs: Vec<Bound<'py, RestoreSpec>>,
    frame: &Bound<'py, FileFrame>,
    limits: &ReadLimits,
    include_content: bool,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let f = frame.get();
    let frame = Frame {
        prefix: &f.prefix,
        malware: &f.malware,
        suffix: &f.suffix,
    };
    // The held bytes a re-read may be skipped for (read-only views of live `bytes` objects,
    // which `specs` keeps alive until the end).
    let held: Vec<Option<&[u8]>> = specs
        .iter()
        .map(|s| s.get().held.as_ref().map(|h| h.bind(py).as_bytes()))
        .collect();
    let refs: Vec<&RestoreSpec> = specs.iter().map(Bound::get).collect();
    // The strings' UTF-8, borrowed from the objects `specs` keeps alive.
    let texts: Vec<[&str; 4]> = refs
        .iter()
        .map(|s| {
            Ok([
                s.real.bind(py).to_str()?,
                s.path.bind(py).to_str()?,
                s.display.bind(py).to_str()?,
                s.call_block.bind(py).to_str()?,
            ])
        })
        .collect::<PyResult<_>>()?;
    let done: Vec<_> = py.detach(|| {
        refs.iter()
            .zip(&held)
            .zip(&texts)
            .map(|((s, held), [real, path, display, call_block])| {
                let spec = FileSpec {
                    real: Path::new(real),
                    binary_name: s.binary_name,
                    start: s.start,
                    limit: s.limit,
                    path,
                    display,
                    call_block,
                };
                let skip_if = if s.prior.is_some() { *held } else { None };
                let lim = limits.of(s.binary_name, None);
                fileanswer::restored_file(&spec, &frame, include_content, lim, skip_if)
            })
            .collect()
    });
    done.into_iter()
        .zip(refs)
        .map(|(r, spec)| match r {
            Ok(Restored::Unchanged {
                mtime_ns,
                total_lines,
                num_lines,
            }) => {
                let (Some(prior), Some(held)) = (&spec.prior, &spec.held) else {
                    unreachable!("only a spec with a prior is read unchanged")
                };
                let p = prior.get();
                let file = RestoredFile {
                    framed: p.framed.clone_ref(py),
                    content: held.clone_ref(py),
                    mtime_ns: ns(mtime_ns),
                    total_lines,
                    num_lines,
                    tokens: p.tokens,
                    blocks_units: p.blocks_units,
                    text_units: p.text_units,
                    json_units: p.json_units,
                    reused: true,
                };
                Bound::new(py, file).map(Bound::into_any)
            }
            Ok(Restored::Rendered(f)) => {
                let content = match &spec.held {
                    Some(held) if held.bind(py).as_bytes() == f.content.as_slice() => {
                        held.clone_ref(py)
                    }
                    _ => PyBytes::new(py, &f.content).unbind(),
                };
                let file = RestoredFile {
                    framed: Py::new(py, Framed { data: f.framed })?,
                    content,
                    mtime_ns: ns(f.mtime_ns),
                    total_lines: f.total_lines,
                    num_lines: f.num_lines,
                    tokens: f.tokens,
                    blocks_units: f.blocks_units,
                    text_units: f.text_units,
                    json_units: f.json_units,
                    reused: false,
                };
                Bound::new(py, file).map(Bound::into_any)
            }
            Err(skip) => skipped(py, &skip),
        })
        .collect()
}

/// One ReadFile answer for `read_answer`.
#[pyclass(frozen, module = "postcompact._core")]
pub struct ReadSpec {
    /// The real path to read.
    #[pyo3(get)]
    real: PathBuf,
    #[pyo3(get)]
    binary_name: bool,
    /// The first line, 1-based.
    #[pyo3(get)]
    start: u64,
    /// How many lines (None: to the end).
    #[pyo3(get)]
    limit: Option<u64>,
    /// `ReadFileResponse.path`.
    #[pyo3(get)]
    path: String,
    /// After the numbered lines ("" when the policy has none).
    #[pyo3(get)]
    malware: String,
    /// The entry's timestamp (None: the file's mtime in milliseconds).
    #[pyo3(get)]
    timestamp_ms: Option<i64>,
    /// Refuse an answer over this many bytes (`Skip.ANSWER_TOO_LARGE`).
    #[pyo3(get)]
    max_answer: Option<u64>,
}

#[pymethods]
impl ReadSpec {
    #[new]
    #[pyo3(signature = (
        *, real, binary_name, start, limit, path, malware, timestamp_ms, max_answer
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        real: PathBuf,
        binary_name: bool,
        start: u64,
        limit: Option<u64>,
        path: String,
        malware: String,
        timestamp_ms: Option<i64>,
        max_answer: Option<u64>,
    ) -> Self {
        Self {
            real,
            binary_name,
            start,
            limit,
            path,
            malware,
            timestamp_ms,
            max_answer,
        }
    }
}

/// A ReadFile answer (see `_core.pyi`).
#[pyclass(frozen, module = "postcompact._core")]
pub struct ReadAnswer {
    /// The `ReadFileResponse`, serialised.
    #[pyo3(get)]
    wire: Py<PyBytes>,
    /// The bytes read.
    #[pyo3(get)]
    content: Py<PyBytes>,
    #[pyo3(get)]
    mtime_ns: i64,
    #[pyo3(get)]
    total_lines: u64,
    #[pyo3(get)]
    num_lines: u64,
    /// UTF-16 units of the content, decoded.
    #[pyo3(get)]
    text_units: u64,
}

/// ReadFile's answer for `spec` (see `fileanswer::read_answer` and `_core.pyi`): a
/// `ReadAnswer`, or why the general path must take it (a `Skip`, or the read's `Refusal`).
#[pyfunction]
fn read_answer<'py>(
    py: Python<'py>,
    spec: &Bound<'py, ReadSpec>,
    limits: &ReadLimits,
) -> PyResult<Bound<'py, PyAny>> {
    let s = spec.get();
    let req = ReadRequest {
        real: &s.real,
        binary_name: s.binary_name,
        start: s.start,
        limit: s.limit,
        path: &s.path,
        malware: &s.malware,
        timestamp_ms: s.timestamp_ms,
    };
    let lim = limits.of(s.binary_name, s.max_answer);
    match py.detach(|| fileanswer::read_answer(&req, lim)) {
        Ok(a) => {
            let answer = ReadAnswer {
                wire: PyBytes::new(py, &a.wire).unbind(),
                content: PyBytes::new(py, &a.content).unbind(),
                mtime_ns: ns(a.mtime_ns),
                total_lines: a.total_lines,
                num_lines: a.num_lines,
                text_units: a.text_units,
            };
            Bound::new(py, answer).map(Bound::into_any)
        }
        Err(skip) => skipped(py, &skip),
    }
}

/// Adds the file answers to `postcompact._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Framed>()?;
    m.add_class::<Skip>()?;
    m.add_class::<ReadLimits>()?;
    m.add_class::<FileFrame>()?;
    m.add_class::<RestoreSpec>()?;
    m.add_class::<RestoredFile>()?;
    m.add_class::<ReadSpec>()?;
    m.add_class::<ReadAnswer>()?;
    m.add_function(wrap_pyfunction!(restore_files, m)?)?;
    m.add_function(wrap_pyfunction!(read_answer, m)?)?;
    Ok(())
}
