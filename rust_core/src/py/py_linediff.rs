//! Python binding of [`crate::linediff`]: `line_diff` and the `LineDiff` it answers. The diff
//! runs without the GIL above [`DETACH_BYTES`] of input.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::linediff;

/// Diffs of at least this many bytes (old and new) run without the GIL (~10 µs of scanning).
const DETACH_BYTES: usize = 64 * 1024;

/// What a write changed, by lines (see `_core.pyi`).
#[pyclass(frozen, module = "postcompact._core")]
pub struct LineDiff {
    inner: linediff::LineDiff,
}

#[pymethods]
impl LineDiff {
    #[getter]
    fn old_lines(&self) -> usize {
        self.inner.old_lines()
    }

    #[getter]
    fn new_lines(&self) -> usize {
        self.inner.new_lines()
    }

    /// The new content's changed lines as ranges (none, or the one changed region).
    #[getter]
    fn changed(&self) -> Vec<(usize, usize)> {
        self.inner.changed().into_iter().collect()
    }

    fn map_span(&self, first: i64, last: i64) -> PyResult<Option<(usize, usize)>> {
        if first < 1 || last < first {
            return Err(PyValueError::new_err(format!(
                "a span is 1 <= first <= last, got {first}..{last}"
            )));
        }
        let at = |x: i64| usize::try_from(x).unwrap_or(usize::MAX);
        Ok(self.inner.map_span(at(first), at(last)))
    }

    fn __repr__(&self) -> String {
        let d = self.inner;
        format!(
            "LineDiff(prefix={}, old_mid={}, new_mid={}, suffix={})",
            d.prefix, d.old_mid, d.new_mid, d.suffix
        )
    }
}

/// The change from `old` to `new`, by lines.
#[pyfunction]
fn line_diff(py: Python<'_>, old: &[u8], new: &[u8]) -> LineDiff {
    let inner = if old.len() + new.len() >= DETACH_BYTES {
        py.detach(|| linediff::diff(old, new))
    } else {
        linediff::diff(old, new)
    };
    LineDiff { inner }
}

/// Adds `line_diff` and `LineDiff` to `postcompact._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(line_diff, m)?)?;
    m.add_class::<LineDiff>()?;
    Ok(())
}
