//! postcompact's Rust core.
//!
//! The hot, data-heavy parts of the daemon: a strict, entry- and byte-bounded LRU with npm
//! lru-cache 11 semantics ([`lru`]), the file-state cache over it ([`filestate`], keys from
//! [`path`]), Claude Code's rough token estimate and exact BPE counting ([`tokens`], on the
//! pre-tokeniser of [`pretok`] and the BPE tables of [`bpe_engine`]), truncation to a token
//! budget ([`truncate`]) and the line diff of a write ([`linediff`]). Everything here is plain
//! Rust; the PyO3 bindings live in [`py`] behind the `python` feature so `cargo test` needs no
//! libpython. (The Python `LruCache` that only the benchmarks use is a crate of its own,
//! `bench/lru_py`, over [`lru`] and [`exclusive`].)

pub mod bpe_engine;
pub mod compactwire;
pub mod exclusive;
pub mod fileanswer;
pub mod filestate;
pub mod fsutil;
pub mod linediff;
pub mod lru;
pub mod path;
pub mod pbwire;
pub mod pool;
pub mod pretok;
pub mod readfile;
pub mod render;
pub mod scan;
pub mod tokens;
pub mod truncate;

#[cfg(feature = "python")]
mod py;
