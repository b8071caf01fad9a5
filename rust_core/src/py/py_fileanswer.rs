//! Python bindings of [`crate::fileanswer`] and [`crate::fileview`]: `restore_files` (Compact's
//! restored files, a batch in one call), `read_file` (ReadFile's answer), and the renderer on
//! its own (`file_blocks`, `read_tool_result`). The reads and the rendering run without the GIL;
//! each file's answer is its protobuf bytes with what the caller decides on (`RestoredFile`,
//! `ReadAnswer`), or why the read failed (`Refusal`); see `_core.pyi`.

use std::borrow::Cow;
use std::os::raw::c_int;
use std::path::Path;

use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::diskread::{Inline, Limits};
use crate::fileanswer::{self, FileOutcome as Outcome, Held, ReadOutcome, Restored};
use crate::fileview::{self, Blocks, Body, TemplateTexts};
use crate::template::Template;
use crate::tokens::{Counter, Encoding};

use super::py_fsutil::{ns, Refusal};
use super::py_tokens;

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

/// The templates of a file's blocks (`render.Templates`' fields of the same names), parsed.
#[pyclass(frozen, eq, module = "postcompact._core")]
#[derive(Debug, PartialEq, Eq)]
pub struct FileTemplates {
    inner: fileview::FileTemplates,
    /// Of the template texts (a `FileTemplates` keys the daemon's caches).
    hash: u64,
}

#[pymethods]
impl FileTemplates {
    #[new]
    #[pyo3(signature = (
        *, system_reminder, read_call, read_result, read_path_key, malware_reminder,
        empty_file_warning, offset_beyond_end_warning, escaped_note, read_page_marker
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        system_reminder: &str,
        read_call: &str,
        read_result: &str,
        read_path_key: &str,
        malware_reminder: &str,
        empty_file_warning: &str,
        offset_beyond_end_warning: &str,
        escaped_note: &str,
        read_page_marker: &str,
    ) -> Self {
        let texts = TemplateTexts {
            system_reminder,
            read_call,
            read_result,
            read_path_key,
            malware_reminder,
            empty_file_warning,
            offset_beyond_end_warning,
            escaped_note,
            read_page_marker,
        };
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        std::hash::Hash::hash(&texts, &mut hasher);
        FileTemplates {
            inner: fileview::FileTemplates::new(&texts),
            hash: std::hash::Hasher::finish(&hasher),
        }
    }

    fn __hash__(&self) -> u64 {
        self.hash
    }
}

fn counter(py: Python<'_>, exact: bool, encoding: &str) -> PyResult<Counter> {
    let enc = Encoding::from_name(encoding).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(if exact {
        Counter::Exact(py_tokens::exact_tables(py, enc))
    } else {
        Counter::Rough
    })
}

fn limits(max_bytes: u64, sniff_bytes: usize, inline_max: Option<u64>) -> Limits {
    Limits {
        max_bytes,
        sniff_bytes,
        binary_name: false,
        inline: inline_max.map(|max_size| Inline { max_size }),
    }
}

/// What a restoration does with a file (see `_core.pyi`).
#[pyclass(frozen, module = "postcompact._core")]
pub struct RestorePlan {
    templates: Py<FileTemplates>,
    marker: Template,
    malware: bool,
    max_tokens: i64,
    max_bytes: u64,
    sniff_bytes: usize,
    oversize: i32,
    counter: Counter,
    cap_rendered: bool,
    api_units: Option<u64>,
    include_content: bool,
}

#[pymethods]
impl RestorePlan {
    #[new]
    #[pyo3(signature = (
        *, templates, marker, malware, max_tokens, max_bytes, sniff_bytes, oversize, exact,
        encoding, cap_rendered, api_units, include_content
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        templates: Py<FileTemplates>,
        marker: &str,
        malware: bool,
        max_tokens: i64,
        max_bytes: u64,
        sniff_bytes: usize,
        oversize: i32,
        exact: bool,
        encoding: &str,
        cap_rendered: bool,
        api_units: Option<u64>,
        include_content: bool,
    ) -> PyResult<Self> {
        Ok(RestorePlan {
            templates,
            marker: Template::parse(marker),
            malware,
            max_tokens,
            max_bytes,
            sniff_bytes,
            oversize,
            counter: counter(py, exact, encoding)?,
            cap_rendered,
            api_units: api_units.filter(|&u| u > 0),
            include_content,
        })
    }
}

/// What became of a restored file.
#[pyclass(frozen, eq, eq_int, hash, module = "postcompact._core")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileOutcome {
    #[pyo3(name = "RESTORED")]
    Restored,
    #[pyo3(name = "TRUNCATED")]
    Truncated,
    #[pyo3(name = "REFERENCED")]
    Referenced,
    #[pyo3(name = "DROPPED")]
    Dropped,
}

impl From<Outcome> for FileOutcome {
    fn from(o: Outcome) -> Self {
        match o {
            Outcome::Restored => FileOutcome::Restored,
            Outcome::Truncated => FileOutcome::Truncated,
            Outcome::Referenced => FileOutcome::Referenced,
            Outcome::Dropped => FileOutcome::Dropped,
        }
    }
}

/// One file for `restore_files`.
#[pyclass(frozen, module = "postcompact._core")]
pub struct RestoreSpec {
    #[pyo3(get)]
    path: Py<PyString>,
    #[pyo3(get)]
    real: Py<PyString>,
    #[pyo3(get)]
    display: Py<PyString>,
    #[pyo3(get)]
    binary_name: bool,
    #[pyo3(get)]
    first: u64,
    #[pyo3(get)]
    limit: Option<u64>,
    #[pyo3(get)]
    ranged: bool,
    #[pyo3(get)]
    held: Option<Py<PyBytes>>,
    #[pyo3(get)]
    prior: Option<Py<RestoredFile>>,
}

#[pymethods]
impl RestoreSpec {
    #[new]
    #[pyo3(signature = (
        *, path, real, display, binary_name, first = 1, limit = None, ranged = false, held = None,
        prior = None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        path: Py<PyString>,
        real: Py<PyString>,
        display: Py<PyString>,
        binary_name: bool,
        first: u64,
        limit: Option<u64>,
        ranged: bool,
        held: Option<Py<PyBytes>>,
        prior: Option<Py<RestoredFile>>,
    ) -> Self {
        RestoreSpec {
            path,
            real,
            display,
            binary_name,
            first,
            limit,
            ranged,
            held,
            prior,
        }
    }
}

/// A file `restore_files` restored, noted or left out (see `_core.pyi`).
#[pyclass(frozen, module = "postcompact._core")]
pub struct RestoredFile {
    #[pyo3(get)]
    outcome: FileOutcome,
    #[pyo3(get)]
    framed: Option<Py<Framed>>,
    #[pyo3(get)]
    content: Option<Py<PyBytes>>,
    #[pyo3(get)]
    mtime_ns: i64,
    #[pyo3(get)]
    total_lines: u64,
    #[pyo3(get)]
    start_line: u64,
    #[pyo3(get)]
    num_lines: u64,
    #[pyo3(get)]
    seed_limit: Option<u64>,
    #[pyo3(get)]
    tokens: u64,
    #[pyo3(get)]
    measured: u64,
    #[pyo3(get)]
    over_cap: bool,
    #[pyo3(get)]
    over_size: bool,
    #[pyo3(get)]
    ranged: bool,
    #[pyo3(get)]
    range_lines: u64,
    #[pyo3(get)]
    no_room: bool,
    #[pyo3(get)]
    cut: bool,
    #[pyo3(get)]
    json_units: u64,
    #[pyo3(get)]
    content_tokens: u64,
    #[pyo3(get)]
    reused: bool,
}

#[pymethods]
impl RestoredFile {
    /// Attached (RESTORED or TRUNCATED): `framed` and `content` are set.
    #[getter]
    fn attached(&self) -> bool {
        self.framed.is_some()
    }
}

impl RestoredFile {
    /// The prior's file again, read back unchanged now (as a range or not, as read now: the
    /// range of a whole file from line 1 renders as the file does).
    fn again(&self, py: Python<'_>, held: &Py<PyBytes>, mtime_ns: i128, ranged: bool) -> Self {
        RestoredFile {
            outcome: self.outcome,
            framed: self.framed.as_ref().map(|f| f.clone_ref(py)),
            content: Some(held.clone_ref(py)),
            mtime_ns: ns(mtime_ns),
            total_lines: self.total_lines,
            start_line: self.start_line,
            num_lines: self.num_lines,
            seed_limit: self.seed_limit,
            tokens: self.tokens,
            measured: self.measured,
            over_cap: self.over_cap,
            over_size: self.over_size,
            ranged,
            range_lines: self.num_lines,
            no_room: self.no_room,
            cut: self.cut,
            json_units: self.json_units,
            content_tokens: self.content_tokens,
            reused: true,
        }
    }

    fn of(
        py: Python<'_>,
        f: fileanswer::RestoredFile,
        held: Option<&Py<PyBytes>>,
    ) -> PyResult<Self> {
        let attached = matches!(f.outcome, Outcome::Restored | Outcome::Truncated);
        let content = if attached {
            Some(match held {
                Some(held) if held.bind(py).as_bytes() == f.seed.as_slice() => held.clone_ref(py),
                _ => PyBytes::new(py, &f.seed).unbind(),
            })
        } else {
            None
        };
        let framed = if attached {
            Some(Py::new(py, Framed { data: f.framed })?)
        } else {
            None
        };
        Ok(RestoredFile {
            outcome: f.outcome.into(),
            framed,
            content,
            mtime_ns: ns(f.mtime_ns),
            total_lines: f.total_lines,
            start_line: f.start_line,
            num_lines: f.num_lines,
            seed_limit: f.seed_limit,
            tokens: f.tokens,
            measured: f.measured,
            over_cap: f.over_cap,
            over_size: f.over_size,
            ranged: f.ranged,
            range_lines: f.range_lines,
            no_room: f.no_room,
            cut: f.cut,
            json_units: f.json_units,
            content_tokens: f.content_tokens,
            reused: false,
        })
    }
}

/// Each file of `specs` restored under `plan` (see `fileanswer::restore_file` and `_core.pyi`):
/// a `RestoredFile`, or the read's `Refusal`.
#[pyfunction]
#[pyo3(signature = (specs, plan, *, inline_max = None))]
fn restore_files<'py>(
    py: Python<'py>,
    specs: Vec<Bound<'py, RestoreSpec>>,
    plan: &Bound<'py, RestorePlan>,
    inline_max: Option<u64>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let p = plan.get();
    let core_plan = fileanswer::RestorePlan {
        templates: &p.templates.get().inner,
        marker: &p.marker,
        malware: p.malware,
        cap: p.max_tokens,
        limits: limits(p.max_bytes, p.sniff_bytes, inline_max),
        oversize: p.oversize,
        counter: p.counter,
        cap_rendered: p.cap_rendered,
        api_units: p.api_units,
        include_content: p.include_content,
    };
    let refs: Vec<&RestoreSpec> = specs.iter().map(Bound::get).collect();
    // What each spec names, borrowed from the objects `specs` keeps alive: its strings' UTF-8,
    // and the bytes the cache held when its prior (a file restored whole) may stand again.
    let borrowed: Vec<([&str; 3], Option<Held<'_>>)> = refs
        .iter()
        .map(|s| {
            let unchanged = match (&s.held, &s.prior) {
                (Some(held), Some(prior)) if prior.get().outcome == FileOutcome::Restored => {
                    let p = prior.get();
                    Some(Held {
                        content: held.bind(py).as_bytes(),
                        total_lines: p.total_lines,
                        ranged: p.ranged,
                    })
                }
                _ => None,
            };
            Ok((
                [
                    s.path.bind(py).to_str()?,
                    s.real.bind(py).to_str()?,
                    s.display.bind(py).to_str()?,
                ],
                unchanged,
            ))
        })
        .collect::<PyResult<_>>()?;
    let done: Vec<_> = py.detach(|| {
        refs.iter()
            .zip(&borrowed)
            .map(|(s, ([path, real, display], unchanged))| {
                let spec = fileanswer::RestoreSpec {
                    real: Path::new(real),
                    binary_name: s.binary_name,
                    path,
                    display,
                    first: s.first,
                    limit: s.limit,
                    ranged: s.ranged,
                    unchanged_if: *unchanged,
                };
                fileanswer::restore_file(&spec, &core_plan)
            })
            .collect()
    });
    done.into_iter()
        .zip(refs)
        .map(|(r, spec)| match r {
            Ok(Restored::Unchanged {
                mtime_ns, ranged, ..
            }) => {
                let (Some(prior), Some(held)) = (&spec.prior, &spec.held) else {
                    unreachable!("only a spec with a prior is read unchanged")
                };
                let again = prior.get().again(py, held, mtime_ns, ranged);
                Bound::new(py, again).map(Bound::into_any)
            }
            Ok(Restored::File(f)) => {
                Bound::new(py, RestoredFile::of(py, f, spec.held.as_ref())?).map(Bound::into_any)
            }
            Err(f) => Bound::new(py, Refusal::of(&f)).map(Bound::into_any),
        })
        .collect()
}

/// What ReadFile does with a file (see `_core.pyi`).
#[pyclass(frozen, module = "postcompact._core")]
pub struct ReadPlan {
    templates: Py<FileTemplates>,
    malware: bool,
    max_tokens: i64,
    max_bytes: u64,
    sniff_bytes: usize,
    counter: Counter,
    api_units: Option<u64>,
    page: bool,
}

#[pymethods]
impl ReadPlan {
    #[new]
    #[pyo3(signature = (
        *, templates, malware, max_tokens, max_bytes, sniff_bytes, exact, encoding, api_units, page
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        templates: Py<FileTemplates>,
        malware: bool,
        max_tokens: i64,
        max_bytes: u64,
        sniff_bytes: usize,
        exact: bool,
        encoding: &str,
        api_units: Option<u64>,
        page: bool,
    ) -> PyResult<Self> {
        Ok(ReadPlan {
            templates,
            malware,
            max_tokens,
            max_bytes,
            sniff_bytes,
            counter: counter(py, exact, encoding)?,
            api_units: api_units.filter(|&u| u > 0),
            page,
        })
    }
}

/// One ReadFile for `read_file`.
#[pyclass(frozen, module = "postcompact._core")]
pub struct ReadSpec {
    #[pyo3(get)]
    real: Py<PyString>,
    #[pyo3(get)]
    binary_name: bool,
    #[pyo3(get)]
    path: Py<PyString>,
    #[pyo3(get)]
    start: u64,
    #[pyo3(get)]
    limit: Option<u64>,
    #[pyo3(get)]
    timestamp_ms: Option<i64>,
    #[pyo3(get)]
    max_answer: Option<u64>,
}

#[pymethods]
impl ReadSpec {
    #[new]
    #[pyo3(signature = (
        *, real, binary_name, path, start = 1, limit = None, timestamp_ms = None, max_answer = None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        real: Py<PyString>,
        binary_name: bool,
        path: Py<PyString>,
        start: u64,
        limit: Option<u64>,
        timestamp_ms: Option<i64>,
        max_answer: Option<u64>,
    ) -> Self {
        ReadSpec {
            real,
            binary_name,
            path,
            start,
            limit,
            timestamp_ms,
            max_answer,
        }
    }
}

/// A ReadFile answer (see `_core.pyi`).
#[pyclass(frozen, module = "postcompact._core")]
pub struct ReadAnswer {
    #[pyo3(get)]
    wire: Py<PyBytes>,
    #[pyo3(get)]
    content: Py<PyBytes>,
    #[pyo3(get)]
    mtime_ns: i64,
    #[pyo3(get)]
    total_lines: u64,
    #[pyo3(get)]
    num_lines: u64,
    #[pyo3(get)]
    partial: bool,
}

/// A whole ReadFile over the token limit, refused: the file's tokens.
#[pyclass(frozen, module = "postcompact._core")]
pub struct ReadTokensExceeded {
    #[pyo3(get)]
    tokens: u64,
}

/// ReadFile's answer for `spec` under `plan` (see `fileanswer::read_file` and `_core.pyi`).
#[pyfunction]
#[pyo3(signature = (spec, plan, *, inline_max = None))]
fn read_file<'py>(
    py: Python<'py>,
    spec: &Bound<'py, ReadSpec>,
    plan: &Bound<'py, ReadPlan>,
    inline_max: Option<u64>,
) -> PyResult<Bound<'py, PyAny>> {
    let s = spec.get();
    let p = plan.get();
    let real = s.real.bind(py).to_str()?;
    let path = s.path.bind(py).to_str()?;
    let req = fileanswer::ReadSpec {
        real: Path::new(real),
        binary_name: s.binary_name,
        path,
        start: s.start,
        limit: s.limit,
        timestamp_ms: s.timestamp_ms,
        max_answer: s.max_answer,
    };
    let core_plan = fileanswer::ReadPlan {
        templates: &p.templates.get().inner,
        malware: p.malware,
        cap: p.max_tokens,
        limits: limits(p.max_bytes, p.sniff_bytes, inline_max),
        counter: p.counter,
        api_units: p.api_units,
        page: p.page,
    };
    match py.detach(|| fileanswer::read_file(&req, &core_plan)) {
        Ok(ReadOutcome::Answer(a)) => {
            let answer = ReadAnswer {
                wire: PyBytes::new(py, &a.wire).unbind(),
                content: PyBytes::new(py, &a.content).unbind(),
                mtime_ns: ns(a.mtime_ns),
                total_lines: a.total_lines,
                num_lines: a.num_lines,
                partial: a.partial,
            };
            Bound::new(py, answer).map(Bound::into_any)
        }
        Ok(ReadOutcome::TooManyTokens(tokens)) => {
            Bound::new(py, ReadTokensExceeded { tokens }).map(Bound::into_any)
        }
        Err(f) => Bound::new(py, Refusal::of(&f)).map(Bound::into_any),
    }
}

/// A restored file's blocks (`render.file_blocks`), from the renderer `restore_files` uses.
#[pyfunction]
#[pyo3(signature = (
    templates, path, text, *, total_lines, malware = true, marker = "", start_line = 1,
    read_limit = None
))]
#[allow(clippy::too_many_arguments)]
fn file_blocks(
    templates: &Bound<'_, FileTemplates>,
    path: &str,
    text: &str,
    total_lines: u64,
    malware: bool,
    marker: &str,
    start_line: u64,
    read_limit: Option<u64>,
) -> Vec<String> {
    let tpl = &templates.get().inner;
    Blocks::new(
        tpl,
        path,
        text,
        start_line,
        total_lines,
        malware,
        Cow::Borrowed(marker),
        read_limit,
    )
    .to_strings()
}

/// A Read tool result (`render.read_tool_result`), from the renderer `read_file` uses.
#[pyfunction]
#[pyo3(signature = (
    templates, text, *, start_line = 1, total_lines = 0, malware = true, marker = ""
))]
fn read_tool_result(
    templates: &Bound<'_, FileTemplates>,
    text: &str,
    start_line: u64,
    total_lines: u64,
    malware: bool,
    marker: &str,
) -> String {
    let tpl = &templates.get().inner;
    Body::new(
        tpl,
        text,
        start_line,
        total_lines,
        malware,
        Cow::Borrowed(marker),
        false,
    )
    .to_text()
}

/// A truncation marker (`render.file_truncation_marker`): `template` with the path made safe
/// for a note and the lines shown, as `restore_files` renders it.
#[pyfunction]
#[pyo3(signature = (template, path, *, shown_lines, total_lines))]
fn truncation_marker(template: &str, path: &str, shown_lines: u64, total_lines: u64) -> String {
    fileview::truncation_marker(&Template::parse(template), path, shown_lines, total_lines)
}

/// The note after the first page of a whole ReadFile (`render.read_page_marker`), as
/// `read_file` renders it.
#[pyfunction]
#[pyo3(signature = (templates, path, *, shown_lines, total_lines, tokens, max_tokens))]
fn page_marker(
    templates: &Bound<'_, FileTemplates>,
    path: &str,
    shown_lines: u64,
    total_lines: u64,
    tokens: u64,
    max_tokens: u64,
) -> String {
    let tpl = &templates.get().inner;
    tpl.page_marker(path, shown_lines, total_lines, tokens, max_tokens)
}

/// Adds the file answers and the renderer to `postcompact._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Framed>()?;
    m.add_class::<FileTemplates>()?;
    m.add_class::<FileOutcome>()?;
    m.add_class::<RestorePlan>()?;
    m.add_class::<RestoreSpec>()?;
    m.add_class::<RestoredFile>()?;
    m.add_class::<ReadPlan>()?;
    m.add_class::<ReadSpec>()?;
    m.add_class::<ReadAnswer>()?;
    m.add_class::<ReadTokensExceeded>()?;
    m.add_function(wrap_pyfunction!(restore_files, m)?)?;
    m.add_function(wrap_pyfunction!(read_file, m)?)?;
    m.add_function(wrap_pyfunction!(file_blocks, m)?)?;
    m.add_function(wrap_pyfunction!(read_tool_result, m)?)?;
    m.add_function(wrap_pyfunction!(truncation_marker, m)?)?;
    m.add_function(wrap_pyfunction!(page_marker, m)?)?;
    Ok(())
}
