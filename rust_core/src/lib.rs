//! postcompact's Rust core: the hot, data-heavy parts of the daemon, in plain Rust. The PyO3
//! bindings (`postcompact._core`, typed in `daemon/postcompact/_core.pyi`) are the private `py`
//! module, compiled only with the `python` feature, so `cargo test` needs no libpython.
//!
//! - The file-state cache: a strict, entry- and byte-bounded LRU with npm lru-cache 11 semantics
//!   ([`lru`]), the file-state cache over it ([`filestate`]) keyed by Claude Code's `expandPath`
//!   ([`path`]), and the one-flag lock its Python class keeps it behind ([`exclusive`]).
//! - Tokens: Claude Code's rough estimate and exact o200k/cl100k counts ([`tokens`]), on the
//!   pre-tokeniser of their split patterns ([`pretok`]) and BPE tables of our own
//!   ([`bpe_engine`]); truncation to a token budget ([`truncate`]); the worker threads the batch
//!   calls share ([`pool`]).
//! - Files: the daemon's reads, whole or a line range, symlink-safe, inline when the page cache
//!   has them ([`diskread`]); byte scans over their contents, line counts and line ends
//!   ([`scan`]); `realpath` without the interpreter ([`fsutil`]); what a write changed, by lines
//!   ([`linediff`]).
//! - The one renderer of a file as the model sees it ([`fileview`]), over the daemon's parsed
//!   templates ([`template`]) and the text helpers of [`textops`] (the Read result's numbering,
//!   the reminder-tag escape, JSON lengths).
//! - Answers as protobuf bytes, written with that renderer: a restored file's attachment and a
//!   ReadFile answer, read and rendered in one pass ([`fileanswer`]); the tail of a
//!   `CompactResponse` ([`compactwire`]); the wire format they need ([`pbwire`], its field
//!   numbers generated from the `.proto` into `pbwire/fields.rs`).
//!
//! (The Python `LruCache` that only the benchmarks use is a crate of its own, `bench/lru_py`,
//! over [`lru`] and [`exclusive`].)

pub mod bpe_engine;
pub mod compactwire;
pub mod diskread;
pub mod exclusive;
pub mod fastcount;
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
pub mod scan;
pub mod template;
pub mod textops;
pub mod tokens;
pub mod truncate;

#[cfg(feature = "python")]
mod py;
