//! The `postcompact._core` extension module. Each domain registers its own classes and
//! functions; the typed surface is described in `daemon/postcompact/_core.pyi`. (The Python
//! `LruCache` that only the benchmarks use is not here: it is a crate of its own,
//! `bench/lru_py`, over the same [`crate::lru`].)

use pyo3::prelude::*;

mod py_cache;
mod py_compactwire;
mod py_fileanswer;
mod py_fsutil;
mod py_ledger;
mod py_linediff;
mod py_textops;
mod py_tokens;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    py_cache::register(m)?;
    py_tokens::register(m)?;
    py_textops::register(m)?;
    py_fsutil::register(m)?;
    py_fileanswer::register(m)?;
    py_compactwire::register(m)?;
    py_ledger::register(m)?;
    py_linediff::register(m)?;
    Ok(())
}
