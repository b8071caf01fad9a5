//! Token estimation and exact BPE counting.
//!
//! * **Rough estimate** — Claude Code's `roughTokenCountEstimation`: `Math.round(length / 4)`
//!   where `length` is the JavaScript string length, i.e. the number of **UTF-16 code units**;
//!   2 instead of 4 bytes per token for `json`, `jsonl` and `jsonc` files
//!   (`roughTokenCountEstimationForFileType`). `Math.round` rounds halves up, so the estimate
//!   is `(units + bpt / 2) / bpt` in integer arithmetic.
//! * **UTF-16 length of UTF-8** — one unit per character, two for characters outside the BMP:
//!   the number of bytes that are not continuation bytes (`10xxxxxx`) plus the number of 4-byte
//!   leaders (`11110xxx`). [`utf16_len_bytes`] counts that in a blocked loop the compiler
//!   vectorises. Invalid UTF-8 counts the way a JavaScript caller would see the text after a
//!   lossy decode (`TextDecoder`, `Buffer.toString`, Rust's `from_utf8_lossy`): every maximal
//!   invalid subpart becomes one U+FFFD, i.e. one unit.
//! * **Exact count** — `o200k_base` / `cl100k_base`, equal to tiktoken's
//!   `len(encode_ordinary(text))`; special tokens such as `<|endoftext|>` are ordinary text.
//!   The vocabularies come from the `bpe-openai` crate (embedded data, no network). A text of
//!   64 bytes or more is counted on fastokens' tables (`crate::fastcount`; but for a text with
//!   an apostrophe before `ſ`, which fastokens counts wrong), a shorter one, the early-stopping
//!   count and the piece-wise paths of truncation on our own scanner and tables.
//!   See [`count`].

use std::cell::RefCell;
use std::fmt;
use std::sync::OnceLock;

use bpe_openai::Tokenizer;

use crate::bpe_engine::{Engine, Scratch};
use crate::fastcount;
use crate::pretok::{self, Pattern};

fn build_engine(encoding: Encoding) -> Engine {
    let bpe = &encoding.tokenizer().bpe;
    Engine::build((0..bpe.num_tokens() as u32).map(|id| bpe.token_bytes(id)))
}

/// An exact BPE encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// `o200k_base` (GPT-4o and later).
    O200kBase,
    /// `cl100k_base` (GPT-4, GPT-3.5).
    Cl100kBase,
}

impl Encoding {
    /// Every supported encoding name, in a stable order.
    pub const NAMES: [&'static str; 2] = ["o200k_base", "cl100k_base"];

    /// The encoding called `name` (exact, case-sensitive tiktoken names).
    pub fn from_name(name: &str) -> Result<Self, TokenError> {
        match name {
            "o200k_base" => Ok(Self::O200kBase),
            "cl100k_base" => Ok(Self::Cl100kBase),
            other => Err(TokenError::UnknownEncoding(other.to_owned())),
        }
    }

    /// The tiktoken name of the encoding.
    pub fn name(self) -> &'static str {
        match self {
            Self::O200kBase => "o200k_base",
            Self::Cl100kBase => "cl100k_base",
        }
    }

    /// `bpe-openai`'s tokenizer of the encoding (built on first use, then cached for the
    /// process): the source of our tables' vocabulary, and a reference in tests.
    pub fn tokenizer(self) -> &'static Tokenizer {
        match self {
            Self::O200kBase => bpe_openai::o200k_base(),
            Self::Cl100kBase => bpe_openai::cl100k_base(),
        }
    }

    /// Our counting tables of the encoding (built on first use, then cached for the process).
    pub fn engine(self) -> &'static Engine {
        self.engine_cell().get_or_init(|| build_engine(self))
    }

    fn engine_cell(self) -> &'static OnceLock<Engine> {
        static O200K: OnceLock<Engine> = OnceLock::new();
        static CL100K: OnceLock<Engine> = OnceLock::new();
        match self {
            Self::O200kBase => &O200K,
            Self::Cl100kBase => &CL100K,
        }
    }

    /// Whether the exact counter's tables of the encoding (ours and fastokens') are built: a
    /// first exact count builds them inside its call (0.2-1.7 s), so a caller holding a lock
    /// others wait on (Python's GIL) builds them first without it ([`Encoding::build_exact`]).
    pub fn exact_ready(self) -> bool {
        self.engine_cell().get().is_some() && fastcount::built(self)
    }

    /// Build the exact counter's tables of the encoding now (nothing once built).
    pub fn build_exact(self) {
        self.engine();
        fastcount::tokenizer(self);
    }

    fn pattern(self) -> Pattern {
        match self {
            Self::O200kBase => Pattern::O200k,
            Self::Cl100kBase => Pattern::Cl100k,
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Errors of the token functions; the Python layer turns each into a `ValueError`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenError {
    /// An encoding other than [`Encoding::NAMES`].
    UnknownEncoding(String),
    /// A counter other than `rough` / `exact`.
    UnknownCounter(String),
    /// A negative token budget.
    NegativeBudget(i64),
    /// The truncation marker alone needs more than the budget.
    MarkerTooLarge {
        /// Tokens the marker needs on its own (under the chosen counter).
        marker_tokens: usize,
        /// The budget.
        max_tokens: usize,
    },
    /// Exact counting of bytes that are not valid UTF-8.
    InvalidUtf8 {
        /// Offset of the first invalid byte.
        valid_up_to: usize,
    },
}

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownEncoding(name) => write!(
                f,
                "unknown encoding '{name}': expected one of {}",
                quoted_list(&Encoding::NAMES)
            ),
            Self::UnknownCounter(name) => write!(
                f,
                "unknown counter '{name}': expected one of {}",
                quoted_list(&Counter::NAMES)
            ),
            Self::NegativeBudget(n) => {
                write!(f, "max_tokens must be >= 0, got {n}")
            }
            Self::MarkerTooLarge {
                marker_tokens,
                max_tokens,
            } => write!(
                f,
                "the truncation marker alone needs {marker_tokens} tokens, more than \
                 max_tokens={max_tokens}: raise the budget or shorten the marker"
            ),
            Self::InvalidUtf8 { valid_up_to } => write!(
                f,
                "exact token counting needs valid UTF-8: invalid byte at offset {valid_up_to} \
                 (decode the bytes first, e.g. with errors='replace')"
            ),
        }
    }
}

impl std::error::Error for TokenError {}

fn quoted_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// How a truncation budget is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Counter {
    /// Claude Code's rough estimate (UTF-16 units / 4, half up).
    Rough,
    /// Exact BPE tokens of the given encoding.
    Exact(Encoding),
}

impl Counter {
    /// Every counter name.
    pub const NAMES: [&'static str; 2] = ["rough", "exact"];

    /// Parses `rough` / `exact`; the encoding is used by `exact` only.
    pub fn from_name(name: &str, encoding: Encoding) -> Result<Self, TokenError> {
        match name {
            "rough" => Ok(Self::Rough),
            "exact" => Ok(Self::Exact(encoding)),
            other => Err(TokenError::UnknownCounter(other.to_owned())),
        }
    }

    /// Tokens of `text` under this counter.
    pub fn count(self, text: &str) -> usize {
        match self {
            Self::Rough => estimate(text, None),
            Self::Exact(enc) => count(text, enc),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Rough estimate
// ---------------------------------------------------------------------------------------------

/// Bytes per token for a file extension: 2 for `json`, `jsonl`, `jsonc` (any case, with or
/// without the leading dot), 4 for everything else and for `None`.
pub fn bytes_per_token_for_ext(ext: Option<&str>) -> usize {
    let Some(ext) = ext else { return 4 };
    let ext = ext.strip_prefix('.').unwrap_or(ext);
    if ext.eq_ignore_ascii_case("json")
        || ext.eq_ignore_ascii_case("jsonl")
        || ext.eq_ignore_ascii_case("jsonc")
    {
        2
    } else {
        4
    }
}

/// `Math.round(units / bytes_per_token)` for non-negative integers: halves round up.
#[inline]
pub fn estimate_from_units(units: usize, bytes_per_token: usize) -> usize {
    debug_assert!(bytes_per_token > 0);
    units / bytes_per_token + usize::from(units % bytes_per_token * 2 >= bytes_per_token)
}

/// Claude Code's rough estimate of `text` (see the module docs).
#[inline]
pub fn estimate(text: &str, ext: Option<&str>) -> usize {
    estimate_from_units(utf16_len(text), bytes_per_token_for_ext(ext))
}

/// The rough estimate of UTF-8 bytes; invalid sequences count as U+FFFD (one unit each
/// maximal invalid subpart), as after a lossy decode.
#[inline]
pub fn estimate_bytes(bytes: &[u8], ext: Option<&str>) -> usize {
    estimate_from_units(utf16_len_bytes(bytes), bytes_per_token_for_ext(ext))
}

/// The UTF-16 length (JavaScript `.length`) of a string.
#[inline]
pub fn utf16_len(text: &str) -> usize {
    utf16_units_valid(text.as_bytes())
}

/// The UTF-16 length of `bytes` after a lossy UTF-8 decode: valid text counts one unit per
/// BMP character and two per astral character, each maximal invalid subpart counts one
/// (the U+FFFD that replaces it).
pub fn utf16_len_bytes(bytes: &[u8]) -> usize {
    // Validation and counting go block by block so both passes read cache-resident data; the
    // common all-valid case costs one validation and one counting pass.
    const BLOCK: usize = 16 * 1024;
    let mut total = 0;
    let mut rest = bytes;
    while !rest.is_empty() {
        let mut end = rest.len().min(BLOCK);
        // End the block on a character boundary (valid UTF-8 has at most 3 continuation bytes
        // in a row), so a sequence is never cut: a cut one would fail the fast validation.
        let mut back = 0;
        while back < 3 && end < rest.len() && (rest[end] as i8) < -64 {
            end -= 1;
            back += 1;
        }
        let block = &rest[..end];
        if simdutf8::basic::from_utf8(block).is_ok() {
            total += utf16_units_valid(block);
            rest = &rest[end..];
            continue;
        }
        // Invalid somewhere in the block: std's error tells where and how long.
        match std::str::from_utf8(block) {
            Ok(_) => unreachable!("simdutf8 and std disagree"),
            Err(e) => {
                let good = e.valid_up_to();
                total += utf16_units_valid(&block[..good]);
                match e.error_len() {
                    // A maximal invalid subpart: one U+FFFD.
                    Some(len) => {
                        total += 1;
                        rest = &rest[good + len..];
                    }
                    // The input ends inside a sequence: one U+FFFD for the truncated tail.
                    None if end == rest.len() => {
                        total += 1;
                        rest = &[];
                    }
                    // The block boundary cut a sequence: go on from its first byte (the next
                    // block holds all of it, as `good` > 0 for blocks longer than 3 bytes).
                    None => rest = &rest[good..],
                }
            }
        }
    }
    total
}

/// UTF-16 units of bytes known to be valid UTF-8: non-continuation bytes plus 4-byte leaders.
#[inline]
pub fn utf16_units_valid(bytes: &[u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        if bytes.len() >= 256 && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { units_avx2(bytes) };
        }
    }
    units_portable(bytes)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn units_avx2(bytes: &[u8]) -> usize {
    // The same code as the portable loop; compiled for AVX2 it handles 32 bytes per instruction.
    units_portable(bytes)
}

#[inline(always)]
fn units_portable(bytes: &[u8]) -> usize {
    const LANES: usize = 64;
    // Each lane gains at most 2 per step; 127 steps keep a u8 accumulator from overflowing.
    const STEPS: usize = 127;
    let mut total = 0usize;
    let mut blocks = bytes.chunks_exact(LANES * STEPS);
    for block in &mut blocks {
        total += count_lanes(block);
    }
    let rest = blocks.remainder();
    let whole = rest.len() / LANES * LANES;
    total += count_lanes(&rest[..whole]);
    for &b in &rest[whole..] {
        total += unit_weight(b) as usize;
    }
    total
}

#[inline(always)]
fn unit_weight(b: u8) -> u8 {
    u8::from((b as i8) >= -64) + u8::from(b >= 0xF0)
}

/// Sums [`unit_weight`] over `block` (a multiple of 64 bytes, at most 127 vectors long).
#[inline(always)]
fn count_lanes(block: &[u8]) -> usize {
    const LANES: usize = 64;
    let mut acc = [0u8; LANES];
    for v in block.chunks_exact(LANES) {
        for i in 0..LANES {
            acc[i] = acc[i].wrapping_add(unit_weight(v[i]));
        }
    }
    acc.iter().map(|&x| x as usize).sum()
}

/// Number of characters in valid UTF-8 (its non-continuation bytes): the code-point length.
#[inline]
pub fn char_count_valid(bytes: &[u8]) -> usize {
    bytes.len() - bytes.iter().filter(|&&b| (b as i8) < -64).count()
}

/// Number of astral (outside the BMP) characters in valid UTF-8: its 4-byte leaders.
#[inline]
pub fn astral_count(bytes: &[u8]) -> usize {
    let mut n = 0usize;
    let mut blocks = bytes.chunks_exact(64 * 255);
    for block in &mut blocks {
        n += count_ge_f0(block);
    }
    let rest = blocks.remainder();
    n += count_ge_f0(&rest[..rest.len() / 64 * 64]);
    n + rest[rest.len() / 64 * 64..]
        .iter()
        .filter(|&&b| b >= 0xF0)
        .count()
}

#[inline(always)]
fn count_ge_f0(block: &[u8]) -> usize {
    let mut acc = [0u8; 64];
    for v in block.chunks_exact(64) {
        for i in 0..64 {
            acc[i] = acc[i].wrapping_add(u8::from(v[i] >= 0xF0));
        }
    }
    acc.iter().map(|&x| x as usize).sum()
}

// ---------------------------------------------------------------------------------------------
// Exact counting
// ---------------------------------------------------------------------------------------------

/// Exact number of tokens of `text`, equal to tiktoken's `len(enc.encode_ordinary(text))`.
///
/// A text of [`fastcount::MIN_BYTES`] or more is counted on fastokens' tables
/// ([`crate::fastcount`]), a shorter one on ours ([`count_own`]).
pub fn count(text: &str, encoding: Encoding) -> usize {
    if text.len() >= fastcount::MIN_BYTES {
        if let Some(n) = fastcount::count(text, encoding) {
            return n;
        }
    }
    count_own(text, encoding)
}

/// [`count`] on our own scanner and tables only.
///
/// Pre-tokenises with a hand-written scanner of the encoding's split pattern ([`crate::pretok`]),
/// then counts each piece on our BPE tables ([`crate::bpe_engine`]): a piece that is itself a
/// token (most words and spaces) costs one hash probe, the rest go through the backtracking
/// encoder. No token list is built.
pub fn count_own(text: &str, encoding: Encoding) -> usize {
    let engine = encoding.engine();
    let b = text.as_bytes();
    with_scratch(encoding, |scratch| {
        let mut total = 0usize;
        pretok::for_each_piece(text, encoding.pattern(), |s, e| {
            total += engine.piece(b, s, e, scratch);
            true
        });
        total
    })
}

/// Exact tokens of `text` if they are at most `limit`, else `None`; stops early.
pub fn count_till_limit(text: &str, encoding: Encoding, limit: usize) -> Option<usize> {
    let engine = encoding.engine();
    let b = text.as_bytes();
    with_scratch(encoding, |scratch| {
        let mut total = 0usize;
        pretok::for_each_piece(text, encoding.pattern(), |s, e| {
            total += engine.piece(b, s, e, scratch);
            total <= limit
        });
        (total <= limit).then_some(total)
    })
}

/// Runs `f` with this thread's counting scratch space for `encoding` (its piece-count cache
/// lives across calls).
fn with_scratch<R>(encoding: Encoding, f: impl FnOnce(&mut Scratch) -> R) -> R {
    thread_local! {
        static SCRATCH: RefCell<[Option<Scratch>; 2]> = const { RefCell::new([None, None]) };
    }
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut all) => f(all[encoding as usize].get_or_insert_with(Scratch::with_cache)),
        // Not reentrant in practice; a fresh scratch keeps it correct if it ever were.
        Err(_) => f(&mut Scratch::default()),
    })
}

/// Iterates `(piece, tokens)` over the pre-tokenised pieces of `text` (they tile the text).
pub fn piece_counts(text: &str, encoding: Encoding) -> impl Iterator<Item = (&str, usize)> {
    let engine = encoding.engine();
    let mut scratch = Scratch::default();
    let mut start = 0;
    pieces(text, encoding).map(move |p| {
        let n = engine.piece(text.as_bytes(), start, start + p.len(), &mut scratch);
        start += p.len();
        (p, n)
    })
}

/// The pre-tokenisation of `text`: the pieces tiktoken's regex for `encoding` splits it into
/// before BPE (they tile the text).
pub fn pieces(text: &str, encoding: Encoding) -> Pieces<'_> {
    Pieces {
        text,
        pos: 0,
        pattern: encoding.pattern(),
    }
}

/// Iterator of [`pieces`].
pub struct Pieces<'a> {
    text: &'a str,
    pos: usize,
    pattern: Pattern,
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        let start = self.pos;
        if start >= self.text.len() {
            return None;
        }
        let end = pretok::piece_end(self.text, self.pattern, start);
        self.pos = end;
        Some(&self.text[start..end])
    }
}

/// Exact token count of UTF-8 bytes; invalid UTF-8 is an error (tiktoken only takes `str`).
pub fn count_bytes(bytes: &[u8], encoding: Encoding) -> Result<usize, TokenError> {
    let text = std::str::from_utf8(bytes).map_err(|e| TokenError::InvalidUtf8 {
        valid_up_to: e.valid_up_to(),
    })?;
    Ok(count(text, encoding))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference_units(bytes: &[u8]) -> usize {
        String::from_utf8_lossy(bytes).encode_utf16().count()
    }

    #[test]
    fn rounding_is_half_up() {
        assert_eq!(estimate_from_units(0, 4), 0);
        assert_eq!(estimate_from_units(1, 4), 0);
        assert_eq!(estimate_from_units(2, 4), 1);
        assert_eq!(estimate_from_units(5, 4), 1);
        assert_eq!(estimate_from_units(6, 4), 2);
        assert_eq!(estimate_from_units(1, 2), 1);
        assert_eq!(estimate_from_units(3, 2), 2);
        assert_eq!(estimate_from_units(4, 2), 2);
    }

    #[test]
    fn ext_rules() {
        for e in ["json", "JSON", ".json", "jsonl", ".JsonC"] {
            assert_eq!(bytes_per_token_for_ext(Some(e)), 2, "{e}");
        }
        for e in ["", ".", "js", "jsonx", "txt", "..json"] {
            assert_eq!(bytes_per_token_for_ext(Some(e)), 4, "{e}");
        }
        assert_eq!(bytes_per_token_for_ext(None), 4);
    }

    #[test]
    fn utf16_counts() {
        for s in ["", "a", "héllo", "日本語", "😀", "a😀b", "𝕏𝕐"] {
            assert_eq!(utf16_len(s), s.encode_utf16().count(), "{s}");
        }
        let long = "abc日本😀é".repeat(5000);
        assert_eq!(utf16_len(&long), long.encode_utf16().count());
        assert_eq!(
            utf16_len_bytes(long.as_bytes()),
            long.encode_utf16().count()
        );
        assert_eq!(astral_count(long.as_bytes()), 5000);
    }

    #[test]
    fn invalid_utf8_counts_like_lossy_decode() {
        let cases: &[&[u8]] = &[
            b"\xff",
            b"a\x80b",
            b"\xe6\x97",
            b"\xe6\x97a",
            b"\xf0\x9f\x98",
            b"\xf0\x9f\x98\x80\x80",
            b"\xc0\xaf",
            b"\xed\xa0\x80",
            b"\xf4\x90\x80\x80",
            b"\x80\x80\x80",
        ];
        for c in cases {
            assert_eq!(utf16_len_bytes(c), reference_units(c), "{c:?}");
        }
        // Sequences cut by the internal block boundary.
        let mut v = vec![b'a'; 16 * 1024 - 1];
        v.extend_from_slice("😀".as_bytes());
        v.extend_from_slice(b"\xe6\x97");
        v.extend(std::iter::repeat_n(b'b', 20_000));
        v.extend_from_slice(b"\xe6\x97");
        assert_eq!(utf16_len_bytes(&v), reference_units(&v));
        // Valid text whose characters straddle the block boundary.
        for s in ["日".repeat(10_000), "😀".repeat(9_000), "é".repeat(20_000)] {
            for skip in 0..4 {
                let t = &s.as_bytes()[skip..];
                assert_eq!(utf16_len_bytes(t), reference_units(t), "{skip}");
            }
        }
        // Invalid runs straddling it.
        let mut v = vec![b'a'; 16 * 1024 - 2];
        v.extend_from_slice(b"\xe6\x97\x80\x80\x80\x80\xf0\x9f");
        assert_eq!(utf16_len_bytes(&v), reference_units(&v));
    }

    #[test]
    fn encoding_names() {
        assert_eq!(Encoding::from_name("o200k_base"), Ok(Encoding::O200kBase));
        let err = Encoding::from_name("p50k_base").unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown encoding 'p50k_base': expected one of 'o200k_base', 'cl100k_base'"
        );
    }

    #[test]
    fn exact_counts_known_values() {
        // tiktoken: len(get_encoding(...).encode_ordinary(...))
        assert_eq!(count("", Encoding::O200kBase), 0);
        assert_eq!(count("hello world", Encoding::O200kBase), 2);
        assert_eq!(count("hello world", Encoding::Cl100kBase), 2);
        assert_eq!(count("<|endoftext|>", Encoding::Cl100kBase), 7);
        assert!(count_bytes(b"\xff", Encoding::O200kBase).is_err());
        assert_eq!(
            count_till_limit("hello world", Encoding::O200kBase, 1),
            None
        );
        assert_eq!(
            count_till_limit("hello world", Encoding::O200kBase, 2),
            Some(2)
        );
    }
}
