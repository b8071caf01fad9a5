//! Python bindings of [`crate::tokens`] and [`crate::truncate`]: `estimate`, `count`,
//! `truncate_to_tokens`, `utf16_len` and their batch forms.
//!
//! * `str` input: the UTF-16 length is O(1) when CPython stores the string as Latin-1 or UCS-2
//!   (it is then `len(s)`); only UCS-4 strings (with astral characters) are scanned. The
//!   storage kind is read from the string header (see [`kind`]), guarded by a self-test at
//!   first use, with a portable fallback.
//! * Text is borrowed, never copied, for counting (`str` through CPython's cached UTF-8,
//!   `bytes` directly); the GIL is released above [`DETACH_BYTES`] of input, and big batches
//!   are split across threads.
//! * Truncated `str` results are built by slicing the original string (`PyUnicode_Substring`),
//!   so no UTF-8 decode is paid; unchanged inputs are returned as the same object.

use std::borrow::Cow;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};

use crate::tokens::{
    self, astral_count, char_count_valid, estimate_from_units, Counter, Encoding, TokenError,
};
use crate::truncate::{self, Cut};

/// Release the GIL for work on at least this many bytes of input (exact counting and
/// truncation). Releasing and re-taking it costs ~0.3 µs; exact counting runs at ~50-100 MB/s,
/// so 8 KB is ~100 µs of work.
const DETACH_BYTES: usize = 8 * 1024;
/// The same for the rough estimate of `bytes` (tens of GB/s: 1 MB is ~30 µs).
const DETACH_ESTIMATE_BYTES: usize = 1 << 20;
/// `enc`, its exact counting tables built first with the GIL released when they are not yet:
/// built inside a call holding the GIL, they would stop every other Python thread (the daemon's
/// event loop among them) for the 0.2-1.7 s they take.
pub(crate) fn exact_tables(py: Python<'_>, enc: Encoding) -> Encoding {
    if !enc.exact_ready() {
        py.detach(|| enc.build_exact());
    }
    enc
}

/// Split batches across threads above this many bytes of exact-counting work.
const PARALLEL_BYTES: usize = 256 * 1024;

fn value_error(e: TokenError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

fn type_error(what: &str, obj: &Bound<'_, PyAny>) -> PyErr {
    let ty = obj
        .get_type()
        .qualname()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".to_owned());
    PyTypeError::new_err(format!("{what} must be str or bytes, not {ty}"))
}

fn encoding(name: &str) -> PyResult<Encoding> {
    Encoding::from_name(name).map_err(value_error)
}

// ---------------------------------------------------------------------------------------------
// The storage kind of a str
// ---------------------------------------------------------------------------------------------

/// The PEP 393 storage kind of a `str` (1, 2 or 4 bytes per character).
///
/// The limited API has no `PyUnicode_KIND`, so this reads the `state` bit field of the
/// `PyASCIIObject` header directly. Its layout (after `ob_refcnt`, `ob_type`, `length` and
/// `hash`: `interned:2, kind:3, compact:1, ascii:1`) is the same in every CPython that can load
/// an abi3 module (3.11 to 3.14, GIL builds). The read is only used after a self-test on
/// strings of known kinds agrees; otherwise [`kind`] returns `None` and callers scan the text.
mod kind {
    use std::sync::OnceLock;

    use pyo3::ffi;
    use pyo3::prelude::*;
    use pyo3::types::PyString;

    const STATE_OFFSET: usize = 4 * std::mem::size_of::<usize>();

    static TRUSTED: OnceLock<bool> = OnceLock::new();

    /// Raw (kind, ascii) of a str, from its header.
    ///
    /// # Safety
    /// `s` must be a live `str` object.
    unsafe fn raw(s: *mut ffi::PyObject) -> (u32, bool) {
        // SAFETY: every str object starts with a PyASCIIObject header at least
        // STATE_OFFSET + 4 bytes long; the read is aligned (offset 32 on 64-bit).
        let state = unsafe { s.cast::<u8>().add(STATE_OFFSET).cast::<u32>().read() };
        ((state >> 2) & 0b111, (state >> 6) & 1 == 1)
    }

    fn self_test(py: Python<'_>) -> bool {
        let v = py.version_info();
        if !((3, 11)..(3, 15)).contains(&(v.major, v.minor))
            || cfg!(not(target_pointer_width = "64"))
        {
            return false;
        }
        let cases: [(&str, u32, bool); 6] = [
            ("a", 1, true),
            ("plain ascii text", 1, true),
            ("é", 1, false),
            ("€uro", 2, false),
            ("😀", 4, false),
            ("a😀€", 4, false),
        ];
        cases.iter().all(|&(text, kind, ascii)| {
            let s = PyString::new(py, text);
            // SAFETY: `s` is a live str.
            unsafe { raw(s.as_ptr()) == (kind, ascii) }
        })
    }

    /// The kind (1, 2 or 4) of `s`, or `None` when the header cannot be trusted.
    #[inline]
    pub(super) fn of(s: &Bound<'_, PyString>) -> Option<u32> {
        if !*TRUSTED.get_or_init(|| self_test(s.py())) {
            return None;
        }
        // SAFETY: `s` is a live str.
        let (kind, _) = unsafe { raw(s.as_ptr()) };
        matches!(kind, 1 | 2 | 4).then_some(kind)
    }
}

/// `len(s)` in code points (O(1)).
fn str_len(s: &Bound<'_, PyString>) -> PyResult<usize> {
    // SAFETY: `s` is a live str.
    let n = unsafe { ffi::PyUnicode_GetLength(s.as_ptr()) };
    usize::try_from(n).map_err(|_| PyErr::fetch(s.py()))
}

/// The UTF-16 length (JavaScript `.length`) of a `str`: O(1) unless it holds astral characters.
/// A lone surrogate counts 1, as in JavaScript.
fn str_utf16_len(s: &Bound<'_, PyString>) -> PyResult<usize> {
    let n = str_len(s)?;
    if matches!(kind::of(s), Some(1 | 2)) {
        return Ok(n);
    }
    match s.to_str() {
        Ok(utf8) => Ok(n + astral_count(utf8.as_bytes())),
        // Lone surrogates (no UTF-8 form): count UTF-16 code units directly.
        Err(_) => Ok(utf16_code_units(s)?.len()),
    }
}

/// `s` as UTF-16 code units, lone surrogates kept (the fallback for unencodable strings).
fn utf16_code_units(s: &Bound<'_, PyString>) -> PyResult<Vec<u16>> {
    let b = s.call_method1("encode", ("utf-16-le", "surrogatepass"))?;
    let b = b.cast::<PyBytes>()?.as_bytes();
    Ok(b.chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect())
}

/// The UTF-8 text of a `str` (borrowed from CPython's cache). Lone surrogates, which have no
/// UTF-8 form, become U+FFFD — what tiktoken does before encoding such a string.
fn str_utf8<'a>(s: &'a Bound<'_, PyString>) -> PyResult<(Cow<'a, str>, bool)> {
    match s.to_str() {
        Ok(t) => Ok((Cow::Borrowed(t), false)),
        Err(_) => {
            let units = utf16_code_units(s)?;
            Ok((Cow::Owned(String::from_utf16_lossy(&units)), true))
        }
    }
}

/// `s[:end] + marker` without leaving the str's own representation.
fn str_prefix_plus<'py>(
    s: &Bound<'py, PyString>,
    end: usize,
    marker: &Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyString>> {
    let py = s.py();
    // SAFETY: `s` is a live str and `end <= len(s)`; the result is a new reference or NULL.
    let prefix = unsafe {
        Bound::from_owned_ptr_or_err(py, ffi::PyUnicode_Substring(s.as_ptr(), 0, end as isize))?
    };
    if str_len(marker)? == 0 {
        return Ok(prefix.cast_into::<PyString>()?);
    }
    // SAFETY: both are live str objects; the result is a new reference or NULL.
    let joined = unsafe {
        Bound::from_owned_ptr_or_err(py, ffi::PyUnicode_Concat(prefix.as_ptr(), marker.as_ptr()))?
    };
    Ok(joined.cast_into::<PyString>()?)
}

// ---------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------

/// One `str | bytes` argument, borrowed.
enum Input<'a, 'py> {
    Str(&'a Bound<'py, PyString>),
    Bytes(&'a [u8]),
}

impl<'a, 'py> Input<'a, 'py> {
    fn new(obj: &'a Bound<'py, PyAny>, what: &str) -> PyResult<Self> {
        if let Ok(s) = obj.cast::<PyString>() {
            Ok(Input::Str(s))
        } else if let Ok(b) = obj.cast::<PyBytes>() {
            Ok(Input::Bytes(b.as_bytes()))
        } else {
            Err(type_error(what, obj))
        }
    }

    /// The text as UTF-8 for exact counting; invalid UTF-8 bytes are an error.
    fn utf8(&self) -> PyResult<Cow<'a, str>> {
        match self {
            Input::Str(s) => Ok(str_utf8(s)?.0),
            Input::Bytes(b) => Ok(Cow::Borrowed(valid_utf8(b)?)),
        }
    }
}

fn valid_utf8(b: &[u8]) -> PyResult<&str> {
    if simdutf8::basic::from_utf8(b).is_ok() {
        // SAFETY: just validated.
        return Ok(unsafe { std::str::from_utf8_unchecked(b) });
    }
    let e = std::str::from_utf8(b).expect_err("simdutf8 rejected it");
    Err(value_error(TokenError::InvalidUtf8 {
        valid_up_to: e.valid_up_to(),
    }))
}

fn extract_items<'py>(items: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if items.is_instance_of::<PyString>() || items.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err(
            "expected a sequence of str or bytes, not a single str or bytes",
        ));
    }
    items.try_iter()?.collect()
}

/// Runs `f` over `items`, on several threads when the total `weight` is large.
///
/// The threads (this one among them) take blocks of items from a shared counter until none
/// are left, so that items whose cost per byte differs (CJK counts slower than code) still
/// keep every thread busy to the end.
fn par_map<T: Sync, R: Send>(
    items: &[T],
    weight: impl Fn(&T) -> usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};

    let total: usize = items.iter().map(&weight).sum();
    if items.len() < 2 || total < PARALLEL_BYTES {
        return items.iter().map(f).collect();
    }
    let threads = crate::pool::threads();
    if threads < 2 {
        return items.iter().map(f).collect();
    }
    // Blocks of ~64 KB of text: few claims, fine enough balance.
    let per_item = (total / items.len()).max(1);
    let block = (64 * 1024 / per_item).clamp(1, items.len().div_ceil(threads * 4).max(1));
    let next = AtomicUsize::new(0);
    let done = std::sync::Mutex::new(Vec::new());
    // The pool's workers keep their piece-count caches from batch to batch (crate::pool).
    crate::pool::broadcast(&|| {
        let mut out = Vec::new();
        loop {
            let start = next.fetch_add(block, Ordering::Relaxed);
            if start >= items.len() {
                break;
            }
            let end = (start + block).min(items.len());
            out.push((start, items[start..end].iter().map(&f).collect::<Vec<R>>()));
        }
        done.lock().unwrap_or_else(|e| e.into_inner()).extend(out);
    });
    let mut parts = done.into_inner().unwrap_or_else(|e| e.into_inner());
    parts.sort_unstable_by_key(|(start, _)| *start);
    parts.into_iter().flat_map(|(_, rs)| rs).collect()
}

// ---------------------------------------------------------------------------------------------
// estimate / utf16_len
// ---------------------------------------------------------------------------------------------

fn input_utf16_len(py: Python<'_>, input: &Input<'_, '_>) -> PyResult<usize> {
    match input {
        Input::Str(s) => str_utf16_len(s),
        Input::Bytes(b) if b.len() >= DETACH_ESTIMATE_BYTES => {
            Ok(py.detach(|| tokens::utf16_len_bytes(b)))
        }
        Input::Bytes(b) => Ok(tokens::utf16_len_bytes(b)),
    }
}

/// Claude Code's rough token estimate (see the stub for the full contract).
#[pyfunction]
#[pyo3(signature = (text, ext=None))]
fn estimate(py: Python<'_>, text: &Bound<'_, PyAny>, ext: Option<&str>) -> PyResult<usize> {
    let units = input_utf16_len(py, &Input::new(text, "text")?)?;
    Ok(estimate_from_units(
        units,
        tokens::bytes_per_token_for_ext(ext),
    ))
}

/// The JavaScript `.length` of a text: its UTF-16 code units.
#[pyfunction]
fn utf16_len(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<usize> {
    input_utf16_len(py, &Input::new(text, "text")?)
}

/// `[estimate(t, ext) for t in items]`.
#[pyfunction]
#[pyo3(signature = (items, ext=None))]
fn estimate_batch(
    py: Python<'_>,
    items: &Bound<'_, PyAny>,
    ext: Option<&str>,
) -> PyResult<Vec<usize>> {
    let bpt = tokens::bytes_per_token_for_ext(ext);
    let objs = extract_items(items)?;
    let mut out = vec![0usize; objs.len()];
    let mut raw: Vec<(usize, &[u8])> = Vec::new();
    for (i, obj) in objs.iter().enumerate() {
        match Input::new(obj, "item")? {
            Input::Str(s) => out[i] = estimate_from_units(str_utf16_len(s)?, bpt),
            Input::Bytes(b) => raw.push((i, b)),
        }
    }
    let total: usize = raw.iter().map(|(_, b)| b.len()).sum();
    let units = |raw: &[(usize, &[u8])]| -> Vec<usize> {
        raw.iter()
            .map(|(_, b)| tokens::utf16_len_bytes(b))
            .collect()
    };
    let units = if total >= DETACH_ESTIMATE_BYTES {
        py.detach(|| units(&raw))
    } else {
        units(&raw)
    };
    for ((i, _), u) in raw.iter().zip(units) {
        out[*i] = estimate_from_units(u, bpt);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// count
// ---------------------------------------------------------------------------------------------

/// Exact BPE token count, equal to tiktoken's `len(encoding.encode_ordinary(text))`.
#[pyfunction]
#[pyo3(signature = (text, encoding="o200k_base"))]
fn count(py: Python<'_>, text: &Bound<'_, PyAny>, encoding: &str) -> PyResult<usize> {
    let enc = exact_tables(py, self::encoding(encoding)?);
    let text = Input::new(text, "text")?.utf8()?;
    if text.len() >= DETACH_BYTES {
        Ok(py.detach(|| tokens::count(&text, enc)))
    } else {
        Ok(tokens::count(&text, enc))
    }
}

/// `[count(t, encoding) for t in texts]`, without the GIL and on several threads when big.
#[pyfunction]
#[pyo3(signature = (texts, encoding="o200k_base"))]
fn count_batch(py: Python<'_>, texts: &Bound<'_, PyAny>, encoding: &str) -> PyResult<Vec<usize>> {
    let enc = exact_tables(py, self::encoding(encoding)?);
    let objs = extract_items(texts)?;
    let strs = objs
        .iter()
        .map(|o| Input::new(o, "item")?.utf8())
        .collect::<PyResult<Vec<_>>>()?;
    let total: usize = strs.iter().map(|s| s.len()).sum();
    let run = || par_map(&strs, |s| s.len(), |s| tokens::count(s, enc));
    if total >= DETACH_BYTES {
        Ok(py.detach(run))
    } else {
        Ok(run())
    }
}

// ---------------------------------------------------------------------------------------------
// truncate_to_tokens
// ---------------------------------------------------------------------------------------------

/// Parsed, validated truncation settings.
struct TruncateSpec<'a> {
    max_tokens: usize,
    marker: &'a str,
    counter: Counter,
    /// Rough: UTF-16 units kept of a text over the budget.
    keep_units: usize,
}

impl<'a> TruncateSpec<'a> {
    fn new(
        py: Python<'_>,
        max_tokens: i64,
        marker: &'a str,
        counter: &str,
        encoding: &str,
    ) -> PyResult<Self> {
        let max_tokens = truncate::check_budget(max_tokens).map_err(value_error)?;
        let enc = self::encoding(encoding)?;
        let counter = Counter::from_name(counter, enc).map_err(value_error)?;
        if let Counter::Exact(enc) = counter {
            exact_tables(py, enc); // (the marker is counted below)
        }
        let keep_units = match counter {
            Counter::Rough => truncate::rough_keep_units(max_tokens, marker),
            Counter::Exact(enc) => {
                truncate::exact_marker_tokens(max_tokens, marker, enc).map(|_| 0)
            }
        }
        .map_err(value_error)?;
        Ok(Self {
            max_tokens,
            marker,
            counter,
            keep_units,
        })
    }

    /// The cut of UTF-8 text (the work that can run without the GIL).
    fn cut(&self, text: &str) -> Cut {
        match self.counter {
            Counter::Rough => truncate::rough_cut_units(
                text,
                tokens::utf16_len(text),
                self.max_tokens,
                self.keep_units,
            )
            .expect("the budget was checked"),
            Counter::Exact(enc) => {
                truncate::exact_cut_verified(text, self.max_tokens, self.marker, enc)
                    .expect("the marker was checked")
            }
        }
    }
}

/// The code-point length of `s` (without surrogate handling) a rough cut keeps, for strings
/// whose UTF-16 length is their code-point length (no astral characters).
fn rough_cut_bmp(s: &Bound<'_, PyString>, keep_units: usize) -> usize {
    let mut end = keep_units;
    if end > 0 {
        // A surrogate pair spelled as two code points (possible in a Python str): keep both
        // or neither, as UTF-16 would.
        // SAFETY: `s` is a live str and `end` < len(s) (the text is over the budget).
        let (hi, lo) = unsafe {
            (
                ffi::PyUnicode_ReadChar(s.as_ptr(), end as isize - 1),
                ffi::PyUnicode_ReadChar(s.as_ptr(), end as isize),
            )
        };
        if (0xD800..0xDC00).contains(&hi) && (0xDC00..0xE000).contains(&lo) {
            end -= 1;
        }
    }
    end
}

/// The number of code points of `s` that `head` (a prefix of `str_utf8(s)`'s lossy copy) stands
/// for. Each char of the copy is one code point of `s`, except an astral one, which is either one
/// astral code point or a pair of surrogate code points spelled out in `s` (the copy merged them).
/// A lone surrogate became one U+FFFD: still one for one.
fn str_index_of_cut(s: &Bound<'_, PyString>, head: &str) -> PyResult<usize> {
    let mut index = 0usize;
    for c in head.chars() {
        if (c as u32) < 0x10000 {
            index += 1;
            continue;
        }
        // SAFETY: `s` is a live str and `index` is within it (the copy has no more chars).
        let cp = unsafe { ffi::PyUnicode_ReadChar(s.as_ptr(), index as isize) };
        if cp == u32::MAX {
            return Err(PyErr::fetch(s.py()));
        }
        index += if (0xD800..0xDC00).contains(&cp) { 2 } else { 1 };
    }
    Ok(index)
}

/// Truncates one `str`/`bytes` item; `cut` is precomputed (batch) or computed here.
fn truncate_one<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
    spec: &TruncateSpec<'_>,
    marker_obj: &Bound<'py, PyString>,
    precomputed: Option<Cut>,
) -> PyResult<Bound<'py, PyAny>> {
    match Input::new(obj, "text")? {
        Input::Str(s) => {
            if let Counter::Rough = spec.counter {
                let units = str_utf16_len(s)?;
                if estimate_from_units(units, 4) <= spec.max_tokens {
                    return Ok(obj.clone());
                }
                if matches!(kind::of(s), Some(1 | 2)) {
                    let end = rough_cut_bmp(s, spec.keep_units);
                    return Ok(str_prefix_plus(s, end, marker_obj)?.into_any());
                }
            }
            let (text, replaced) = str_utf8(s)?;
            let cut = match precomputed {
                Some(c) => c,
                None if text.len() >= DETACH_BYTES && !matches!(spec.counter, Counter::Rough) => {
                    py.detach(|| spec.cut(&text))
                }
                None => spec.cut(&text),
            };
            match cut {
                Cut::Unchanged => Ok(obj.clone()),
                Cut::At(n) if replaced => {
                    // Slice the original, not the lossy copy: the result stays a prefix of `s`.
                    let end = str_index_of_cut(s, &text[..n])?;
                    Ok(str_prefix_plus(s, end, marker_obj)?.into_any())
                }
                Cut::At(n) => {
                    let chars = char_count_valid(&text.as_bytes()[..n]);
                    Ok(str_prefix_plus(s, chars, marker_obj)?.into_any())
                }
            }
        }
        Input::Bytes(b) => {
            let text = valid_utf8(b)?;
            let cut = match precomputed {
                Some(c) => c,
                None if text.len() >= DETACH_BYTES && !matches!(spec.counter, Counter::Rough) => {
                    py.detach(|| spec.cut(text))
                }
                None => spec.cut(text),
            };
            match cut {
                Cut::Unchanged => Ok(obj.clone()),
                Cut::At(n) => {
                    let out = PyBytes::new_with(py, n + spec.marker.len(), |buf| {
                        buf[..n].copy_from_slice(&b[..n]);
                        buf[n..].copy_from_slice(spec.marker.as_bytes());
                        Ok(())
                    })?;
                    Ok(out.into_any())
                }
            }
        }
    }
}

/// Head-truncates `text` to a token budget, the marker included.
#[pyfunction]
#[pyo3(
    signature = (text, max_tokens, marker=None, counter="rough", encoding="o200k_base"),
    text_signature = "(text, max_tokens, marker='', counter='rough', encoding='o200k_base')"
)]
fn truncate_to_tokens<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    max_tokens: i64,
    marker: Option<&Bound<'py, PyString>>,
    counter: &str,
    encoding: &str,
) -> PyResult<Bound<'py, PyAny>> {
    if let Some(same) = rough_fits(text, max_tokens, marker, counter, encoding) {
        return Ok(same);
    }
    let empty;
    let marker = match marker {
        Some(m) => m,
        None => {
            empty = PyString::new(py, "");
            &empty
        }
    };
    let marker_text = marker.to_str()?;
    let spec = TruncateSpec::new(py, max_tokens, marker_text, counter, encoding)?;
    truncate_one(py, text, &spec, marker, None)
}

/// `text` itself when a valid rough call leaves it unchanged, judged from the lengths alone (a
/// `str` knows its UTF-16 length without a scan when it has no astral characters); `None`
/// sends the call the full way, which also reports any bad argument.
#[inline]
fn rough_fits<'py>(
    text: &Bound<'py, PyAny>,
    max_tokens: i64,
    marker: Option<&Bound<'py, PyString>>,
    counter: &str,
    encoding: &str,
) -> Option<Bound<'py, PyAny>> {
    if counter != "rough" || Encoding::from_name(encoding).is_err() {
        return None;
    }
    let max_tokens = usize::try_from(max_tokens).ok()?;
    let marker_units = match marker {
        Some(m) if matches!(kind::of(m), Some(1 | 2)) => str_len(m).ok()?,
        Some(_) => return None,
        None => 0,
    };
    let s = text.cast::<PyString>().ok()?;
    if !matches!(kind::of(s), Some(1 | 2)) {
        return None;
    }
    let fits = estimate_from_units(marker_units, 4) <= max_tokens
        && estimate_from_units(str_len(s).ok()?, 4) <= max_tokens;
    fits.then(|| text.clone())
}

/// `[truncate_to_tokens(t, ...) for t in texts]`; the exact counter runs without the GIL and on
/// several threads when the batch is big.
#[pyfunction]
#[pyo3(
    signature = (texts, max_tokens, marker=None, counter="rough", encoding="o200k_base"),
    text_signature = "(texts, max_tokens, marker='', counter='rough', encoding='o200k_base')"
)]
fn truncate_batch<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    max_tokens: i64,
    marker: Option<&Bound<'py, PyString>>,
    counter: &str,
    encoding: &str,
) -> PyResult<Bound<'py, PyList>> {
    let empty;
    let marker = match marker {
        Some(m) => m,
        None => {
            empty = PyString::new(py, "");
            &empty
        }
    };
    let marker_text = marker.to_str()?;
    let spec = TruncateSpec::new(py, max_tokens, marker_text, counter, encoding)?;
    let objs = extract_items(texts)?;
    let cuts: Vec<Option<Cut>> = match spec.counter {
        // Rough truncation is O(1) or one fast pass per item: no point leaving the GIL.
        Counter::Rough => vec![None; objs.len()],
        Counter::Exact(_) => {
            let strs = objs
                .iter()
                .map(|o| Input::new(o, "item")?.utf8())
                .collect::<PyResult<Vec<_>>>()?;
            let total: usize = strs.iter().map(|s| s.len()).sum();
            let run = || par_map(&strs, |s| s.len(), |s| Some(spec.cut(s)));
            if total >= DETACH_BYTES {
                py.detach(run)
            } else {
                run()
            }
        }
    };
    let out = objs
        .iter()
        .zip(cuts)
        .map(|(o, c)| truncate_one(py, o, &spec, marker, c))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, out)
}

/// Adds the token functions to `postcompact._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(estimate, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_batch, m)?)?;
    m.add_function(wrap_pyfunction!(utf16_len, m)?)?;
    m.add_function(wrap_pyfunction!(count, m)?)?;
    m.add_function(wrap_pyfunction!(count_batch, m)?)?;
    m.add_function(wrap_pyfunction!(truncate_to_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(truncate_batch, m)?)?;
    m.add(
        "ENCODINGS",
        pyo3::types::PyTuple::new(m.py(), Encoding::NAMES)?,
    )?;
    Ok(())
}
