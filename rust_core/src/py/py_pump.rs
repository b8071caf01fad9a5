//! `Pump`: the TCP front's authenticated connections forwarded off the event loop
//! (src/pump.rs).

use std::time::Duration;

use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;

use crate::pump;

/// Copies bytes both ways between two connected sockets on threads of its own, until either
/// side closes, a write makes no progress for `stall_ms`, or `close()`. Takes ownership of both
/// descriptors (blocking sockets): they are closed when both directions have ended and this
/// object is gone.
#[pyclass(frozen, module = "postcompact._core")]
pub struct Pump {
    inner: pump::Pump,
}

#[pymethods]
impl Pump {
    #[new]
    fn new(a: i32, b: i32, stall_ms: u64) -> PyResult<Self> {
        if a < 0 || b < 0 || a == b {
            return Err(PyOSError::new_err(
                "Pump needs two distinct open descriptors",
            ));
        }
        // SAFETY: the caller hands over two descriptors it owns (documented above; the daemon
        // passes fresh dups of its sockets and never touches them again).
        let inner = unsafe { pump::Pump::start(a, b, Duration::from_millis(stall_ms)) }
            .map_err(|e| PyOSError::new_err(e.to_string()))?;
        Ok(Self { inner })
    }

    /// Whether both directions have ended.
    fn done(&self) -> bool {
        self.inner.done()
    }

    /// Ends both directions (the threads return soon after).
    fn close(&self) {
        self.inner.close()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Pump>()
}
