//! The `postcompact._core` extension module. Each domain registers its own classes and
//! functions; the typed surface is described in `daemon/postcompact/_core.pyi`. `LruCache`
//! (`py_lru.rs`, `py_lru_fast.rs`), which only the benchmarks and its tests use, is compiled only
//! with the `bench` feature; its surface is in `tests/_bench_core.pyi`.

use pyo3::prelude::*;

mod py_cache;
mod py_compactwire;
mod py_fileanswer;
mod py_fsutil;
mod py_ledger;
mod py_linediff;
#[cfg(feature = "bench")]
mod py_lru;
#[cfg(feature = "bench")]
mod py_lru_fast;
mod py_render;
mod py_tokens;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    py_cache::register(m)?;
    #[cfg(feature = "bench")]
    py_lru::register(m)?;
    py_tokens::register(m)?;
    py_render::register(m)?;
    py_fsutil::register(m)?;
    py_fileanswer::register(m)?;
    py_compactwire::register(m)?;
    py_ledger::register(m)?;
    py_linediff::register(m)?;
    Ok(())
}
