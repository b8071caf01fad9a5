//! Python binding of [`crate::compactwire`]: `compact_tail`, the decisions, totals and count of a
//! Compact's answer as protobuf bytes (see `_core.pyi`).

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyBytes;

use crate::compactwire::{self, Decision, Totals};

/// (subject, name, outcome, tokens, rank, detail, content_tokens)
type DecisionArgs = (i32, PyBackedStr, i32, i64, i32, PyBackedStr, i64);
/// (category, attachments, dropped, tokens)
type TotalsArgs = (PyBackedStr, i32, i32, i64);

/// `CompactResponse(decisions=..., totals=..., compaction=...)` serialised, from plain values.
#[pyfunction]
fn compact_tail<'py>(
    py: Python<'py>,
    decisions: Vec<DecisionArgs>,
    totals: Vec<TotalsArgs>,
    compaction: i64,
) -> Bound<'py, PyBytes> {
    let decisions: Vec<Decision<'_>> = decisions
        .iter()
        .map(
            |(subject, name, outcome, tokens, rank, detail, content_tokens)| Decision {
                subject: *subject,
                name,
                outcome: *outcome,
                tokens: *tokens,
                rank: *rank,
                detail,
                content_tokens: *content_tokens,
            },
        )
        .collect();
    let totals: Vec<Totals<'_>> = totals
        .iter()
        .map(|(category, attachments, dropped, tokens)| Totals {
            category,
            attachments: *attachments,
            dropped: *dropped,
            tokens: *tokens,
        })
        .collect();
    PyBytes::new(
        py,
        &compactwire::compact_tail(&decisions, &totals, compaction),
    )
}

/// Adds `compact_tail` to `postcompact._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(compact_tail, m)?)
}
