//! Python bindings of [`crate::textops`]: `number_lines`, `escape_reminder_tags`,
//! `json_utf16_len` and `estimate_from_utf16_len`.
//!
//! `str` input is borrowed through CPython's cached UTF-8 (no copy for ASCII); `bytes` input is
//! decoded as Python's `bytes.decode("utf-8", "replace")` does (each maximal invalid subpart
//! becomes one U+FFFD). The GIL is released above [`DETACH_BYTES`] of input.

use std::borrow::Cow;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::textops;
use crate::tokens;

/// Work on at least this many bytes runs without the GIL (~10 µs of numbering).
const DETACH_BYTES: usize = 64 * 1024;

fn type_error(obj: &Bound<'_, PyAny>) -> PyErr {
    let ty = obj
        .get_type()
        .qualname()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".to_owned());
    PyTypeError::new_err(format!("text must be str or bytes, not {ty}"))
}

/// The text of a `str` (its UTF-8, borrowed; lone surrogates raise UnicodeEncodeError) or of a
/// `bytes` (lossy UTF-8 decode).
fn text_of<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, str>> {
    if let Ok(s) = obj.cast::<PyString>() {
        Ok(Cow::Borrowed(s.to_str()?))
    } else if let Ok(b) = obj.cast::<PyBytes>() {
        let b = b.as_bytes();
        if simdutf8::basic::from_utf8(b).is_ok() {
            // SAFETY: just validated.
            Ok(Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(b) }))
        } else {
            Ok(String::from_utf8_lossy(b))
        }
    } else {
        Err(type_error(obj))
    }
}

/// Claude Code's `addLineNumbers`: `{n}\t{line}` per line (lines split on `\r?\n`), joined by
/// `"\n"`, numbered from `start_line`; `""` for empty text.
#[pyfunction]
#[pyo3(signature = (text, start_line = 1))]
fn number_lines<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    start_line: i64,
) -> PyResult<Bound<'py, PyString>> {
    let t = text_of(text)?;
    let out = if t.len() >= DETACH_BYTES {
        py.detach(|| textops::number_lines(&t, start_line))
    } else {
        textops::number_lines(&t, start_line)
    };
    Ok(PyString::new(py, &out))
}

/// `text` with the `<` of each closing `</system-reminder` tag (with `opening`, of each opening
/// one too) written as `&lt;`; `None` when there is nothing to escape. A `str` with lone
/// surrogates raises UnicodeEncodeError (the caller falls back to its own path).
#[pyfunction]
#[pyo3(signature = (text, opening = false))]
fn escape_reminder_tags<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    opening: bool,
) -> PyResult<Option<Bound<'py, PyString>>> {
    let t = text.to_str()?;
    let out = if t.len() >= DETACH_BYTES {
        py.detach(|| textops::escape_reminder_tags(t, opening))
    } else {
        textops::escape_reminder_tags(t, opening)
    };
    Ok(out.map(|o| PyString::new(py, &o)))
}

/// The UTF-16 length of `JSON.stringify(text)`, quotes included (lone surrogates in a `str`
/// cost 6 units, as well-formed JSON.stringify escapes them).
#[pyfunction]
fn json_utf16_len(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<usize> {
    if let Ok(s) = text.cast::<PyString>() {
        if s.to_str().is_err() {
            let b = s.call_method1("encode", ("utf-16-le", "surrogatepass"))?;
            let units: Vec<u16> = b
                .cast::<PyBytes>()?
                .as_bytes()
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
            return Ok(textops::json_utf16_len_units(&units));
        }
    }
    let t = text_of(text)?;
    Ok(if t.len() >= DETACH_BYTES {
        py.detach(|| textops::json_utf16_len(&t))
    } else {
        textops::json_utf16_len(&t)
    })
}

/// The rough token estimate of a text whose UTF-16 length is `units` (what `estimate` computes
/// from a text): `round(units / 4)`, or `/ 2` when `ext` is json, jsonl or jsonc; halves up.
#[pyfunction]
#[pyo3(signature = (units, ext = None))]
fn estimate_from_utf16_len(units: i64, ext: Option<&str>) -> PyResult<usize> {
    let units = usize::try_from(units)
        .map_err(|_| PyValueError::new_err(format!("units must be >= 0, got {units}")))?;
    Ok(tokens::estimate_from_units(
        units,
        tokens::bytes_per_token_for_ext(ext),
    ))
}

/// Adds the rendering functions to `postcompact._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(number_lines, m)?)?;
    m.add_function(wrap_pyfunction!(escape_reminder_tags, m)?)?;
    m.add_function(wrap_pyfunction!(json_utf16_len, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_from_utf16_len, m)?)?;
    Ok(())
}
