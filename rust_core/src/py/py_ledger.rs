//! The daemon-wide ledger of recorded content (docs/reliability.md, "Memory").
//!
//! Every live `FileState` adds its content's length while it exists, and a `Charge` adds the
//! size it was made with (the daemon gives one to each skill, plan, catalogue and task it
//! holds). Both subtract on drop, so the ledger follows the objects' lifetimes with no
//! bookkeeping by the callers: closing a session, an eviction or a replaced entry release their
//! bytes when the last reference goes. Content shared by reference (a cloned agent's cache) is
//! counted once.

use std::sync::atomic::{AtomicU64, Ordering};

use pyo3::prelude::*;

static HELD: AtomicU64 = AtomicU64::new(0);

pub fn add(n: usize) {
    HELD.fetch_add(n as u64, Ordering::Relaxed);
}

pub fn sub(n: usize) {
    HELD.fetch_sub(n as u64, Ordering::Relaxed);
}

/// Bytes of content held by live `FileState`s and `Charge`s.
#[pyfunction]
fn held_bytes() -> u64 {
    HELD.load(Ordering::Relaxed)
}

/// `size` bytes counted in `held_bytes` for as long as this object lives.
#[pyclass(frozen, module = "postcompact._core")]
pub struct Charge {
    #[pyo3(get)]
    size: usize,
}

#[pymethods]
impl Charge {
    #[new]
    fn new(size: usize) -> Self {
        add(size);
        Self { size }
    }

    fn __repr__(&self) -> String {
        format!("Charge({})", self.size)
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        sub(self.size);
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Charge>()?;
    m.add_function(wrap_pyfunction!(held_bytes, m)?)?;
    Ok(())
}
