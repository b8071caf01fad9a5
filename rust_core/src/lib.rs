//! postcompact's Rust core.
//!
//! The hot, data-heavy parts of the daemon:
//!
//! - the caches: a strict, entry- and byte-bounded LRU with npm lru-cache 11 semantics
//!   ([`lru`]) and the file-state cache over it ([`filestate`], keys from [`path`]);
//! - tokens: Claude Code's rough estimate and exact BPE counting ([`tokens`], on the
//!   pre-tokeniser of [`pretok`] and the BPE tables of [`bpe_engine`], their scans in [`scan`]),
//!   truncation to a budget ([`truncate`]), the worker threads of large batches ([`pool`]);
//! - files: the daemon's reads ([`readfile`], real paths in [`fsutil`]); the one renderer of a
//!   file as the model sees it ([`fileview`], over the daemon's templates: [`template`], and
//!   the text helpers of [`render`]); the answers written with it, a restored file's attachment
//!   and ReadFile's answer ([`fileanswer`]), and the tail of a Compact's answer
//!   ([`compactwire`]), in protobuf bytes ([`pbwire`], its field numbers generated from the
//!   `.proto`); the line diff of a write ([`linediff`]).
//!
//! Everything here is plain Rust; the PyO3 bindings live in `py` behind the `python` feature so
//! `cargo test` needs no libpython, and the Python `LruCache`, which only the benchmarks and its
//! tests use, behind `bench` (which implies it).

pub mod bpe_engine;
pub mod compactwire;
pub mod fileanswer;
pub mod filestate;
pub mod fileview;
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
pub mod template;
pub mod tokens;
pub mod truncate;

#[cfg(feature = "python")]
mod py;
