//! Python binding of [`crate::compactwire`]: `compact_tail`, the decisions, totals and count of a
//! Compact's answer as protobuf bytes, from `Decision` and `Totals` (see `_core.pyi`).

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::compactwire;

/// One decision of a Compact (a `Decision` message's fields). Its strings are the caller's
/// objects (no copy); `compact_tail` reads them as UTF-8.
#[pyclass(frozen, module = "postcompact._core")]
pub struct Decision {
    #[pyo3(get)]
    subject: i32,
    #[pyo3(get)]
    name: Py<PyString>,
    #[pyo3(get)]
    outcome: i32,
    #[pyo3(get)]
    tokens: i64,
    #[pyo3(get)]
    rank: i32,
    #[pyo3(get)]
    detail: Py<PyString>,
    #[pyo3(get)]
    content_tokens: i64,
}

#[pymethods]
impl Decision {
    #[new]
    #[pyo3(signature = (subject, name, outcome, tokens = 0, rank = 0, detail = None, content_tokens = 0))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        subject: i32,
        name: Py<PyString>,
        outcome: i32,
        tokens: i64,
        rank: i32,
        detail: Option<Py<PyString>>,
        content_tokens: i64,
    ) -> Self {
        Self {
            subject,
            name,
            outcome,
            tokens,
            rank,
            detail: detail.unwrap_or_else(|| PyString::intern(py, "").unbind()),
            content_tokens,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "Decision(subject={}, name={}, outcome={}, tokens={}, rank={}, detail={}, \
             content_tokens={})",
            self.subject,
            self.name,
            self.outcome,
            self.tokens,
            self.rank,
            self.detail,
            self.content_tokens
        )
    }
}

/// One category's totals of a Compact (a `CategoryTotals` message's fields).
#[pyclass(frozen, module = "postcompact._core")]
pub struct Totals {
    #[pyo3(get)]
    category: Py<PyString>,
    #[pyo3(get)]
    attachments: i32,
    #[pyo3(get)]
    dropped: i32,
    #[pyo3(get)]
    tokens: i64,
}

#[pymethods]
impl Totals {
    #[new]
    #[pyo3(signature = (category, attachments = 0, dropped = 0, tokens = 0))]
    fn new(category: Py<PyString>, attachments: i32, dropped: i32, tokens: i64) -> Self {
        Self {
            category,
            attachments,
            dropped,
            tokens,
        }
    }
}

/// `CompactResponse(decisions=..., totals=..., compaction=...)` serialised.
#[pyfunction]
fn compact_tail<'py>(
    py: Python<'py>,
    decisions: Vec<Bound<'py, Decision>>,
    totals: Vec<Bound<'py, Totals>>,
    compaction: i64,
) -> PyResult<Bound<'py, PyBytes>> {
    let decisions: Vec<compactwire::Decision<'_>> = decisions
        .iter()
        .map(|d| {
            let d = d.get();
            Ok(compactwire::Decision {
                subject: d.subject,
                name: d.name.bind(py).to_str()?,
                outcome: d.outcome,
                tokens: d.tokens,
                rank: d.rank,
                detail: d.detail.bind(py).to_str()?,
                content_tokens: d.content_tokens,
            })
        })
        .collect::<PyResult<_>>()?;
    let totals: Vec<compactwire::Totals<'_>> = totals
        .iter()
        .map(|t| {
            let t = t.get();
            Ok(compactwire::Totals {
                category: t.category.bind(py).to_str()?,
                attachments: t.attachments,
                dropped: t.dropped,
                tokens: t.tokens,
            })
        })
        .collect::<PyResult<_>>()?;
    Ok(PyBytes::new(
        py,
        &compactwire::compact_tail(&decisions, &totals, compaction),
    ))
}

/// Adds `compact_tail`, `Decision` and `Totals` to `postcompact._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Decision>()?;
    m.add_class::<Totals>()?;
    m.add_function(wrap_pyfunction!(compact_tail, m)?)
}
