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
//! * **Exact count** — `o200k_base` / `cl100k_base` through GitHub's `bpe-openai` tokenizers
//!   (embedded data, no network), equal to tiktoken's `len(encode_ordinary(text))`; special
//!   tokens such as `<|endoftext|>` are ordinary text. See [`count`].

use std::fmt;

use bpe_openai::Tokenizer;

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

    /// The shared tokenizer (built on first use, then cached for the process).
    pub fn tokenizer(self) -> &'static Tokenizer {
        match self {
            Self::O200kBase => bpe_openai::o200k_base(),
            Self::Cl100kBase => bpe_openai::cl100k_base(),
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
/// Pre-tokenises with the encoding's regex, then counts each piece: a piece that is itself a
/// token (most words and spaces) is found in a hash table; the rest go through `bpe`'s
/// backtracking encoder. No token list is built.
pub fn count(text: &str, encoding: Encoding) -> usize {
    let tok = encoding.tokenizer();
    let singles = single_tokens(encoding);
    pieces(text, encoding)
        .map(|p| piece_count(tok, singles, p))
        .sum()
}

/// Exact tokens of `text` if they are at most `limit`, else `None`; stops early.
pub fn count_till_limit(text: &str, encoding: Encoding, limit: usize) -> Option<usize> {
    let tok = encoding.tokenizer();
    let singles = single_tokens(encoding);
    let mut total = 0usize;
    for piece in pieces(text, encoding) {
        total += piece_count(tok, singles, piece);
        if total > limit {
            return None;
        }
    }
    Some(total)
}

/// Iterates `(piece, tokens)` over the pre-tokenised pieces of `text` (they tile the text).
pub fn piece_counts(text: &str, encoding: Encoding) -> impl Iterator<Item = (&str, usize)> {
    let tok = encoding.tokenizer();
    let singles = single_tokens(encoding);
    pieces(text, encoding).map(move |p| (p, piece_count(tok, singles, p)))
}

/// The pre-tokenisation of `text`: the pieces tiktoken's regex for `encoding` splits it into
/// before BPE (they tile the text).
///
/// Pieces made of ASCII (and decided by ASCII lookahead) come from a hand-written scanner that
/// implements the regex's leftmost-first semantics for ASCII; any piece that touches a
/// non-ASCII character is matched by `bpe-openai`'s regex instead. The regex's match at a
/// position depends only on the text from there on, so the two can alternate piece by piece.
pub fn pieces(text: &str, encoding: Encoding) -> Pieces<'_> {
    Pieces {
        text,
        pos: 0,
        encoding,
        tok: encoding.tokenizer(),
    }
}

/// Iterator of [`pieces`].
pub struct Pieces<'a> {
    text: &'a str,
    pos: usize,
    encoding: Encoding,
    tok: &'static Tokenizer,
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        let start = self.pos;
        if start >= self.text.len() {
            return None;
        }
        let bytes = self.text.as_bytes();
        let fast = match self.encoding {
            Encoding::O200kBase => ascii::o200k(bytes, start),
            Encoding::Cl100kBase => ascii::cl100k(bytes, start),
        };
        let end = match fast {
            Some(end) => end,
            None => {
                let rest = &self.text[start..];
                start + self.tok.split(rest).next().map_or(rest.len(), str::len)
            }
        };
        self.pos = end;
        Some(&self.text[start..end])
    }
}

/// The ASCII scanner of [`pieces`]: `Some(end)` of the piece starting at `i`, or `None` when
/// the decision depends on a non-ASCII character (the regex takes over for that piece).
///
/// tiktoken's patterns, with their ASCII meaning (`\p{L}` = letters, `\p{N}` = digits,
/// `\s` = `[\t\n\x0b\x0c\r ]`, `P` = `[^\r\n\p{L}\p{N}]`, `Q` = `[^\s\p{L}\p{N}]`):
///
/// * o200k_base: `P?[Lu..]*[Ll..]+C?` | `P?[Lu..]+[Ll..]*C?` | `\p{N}{1,3}` | ` ?Q+[\r\n/]*` |
///   `\s*[\r\n]+` | `\s+(?!\S)` | `\s+`, where `C` is `(?i:'s|'t|'re|'ve|'m|'ll|'d)`;
/// * cl100k_base: `'(?i:[sdmt]|ll|ve|re)` | `P?+\p{L}++` | `\p{N}{1,3}+` | ` ?Q++[\r\n]*+` |
///   `\s++$` | `\s*[\r\n]` | `\s+(?!\S)` | `\s`.
mod ascii {
    /// The character at `j`: `End`, an ASCII byte, or the start of a non-ASCII character.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Ch {
        End,
        A(u8),
        NonAscii,
    }

    #[inline(always)]
    fn ch(b: &[u8], j: usize) -> Ch {
        match b.get(j) {
            None => Ch::End,
            Some(&c) if c < 0x80 => Ch::A(c),
            Some(_) => Ch::NonAscii,
        }
    }

    #[inline(always)]
    fn is_ws(c: u8) -> bool {
        matches!(c, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ')
    }

    #[inline(always)]
    fn is_punct(c: u8) -> bool {
        !c.is_ascii_alphanumeric() && !is_ws(c)
    }

    /// End of the run of bytes satisfying `f` from `j`; `None` if it stops at a non-ASCII
    /// character (which might belong to the class).
    #[inline(always)]
    fn run(b: &[u8], mut j: usize, f: impl Fn(u8) -> bool) -> Option<usize> {
        loop {
            match ch(b, j) {
                Ch::A(c) if f(c) => j += 1,
                Ch::NonAscii => return None,
                _ => return Some(j),
            }
        }
    }

    /// `[\r\n]*` or `[\r\n/]*` from `j` (a non-ASCII character simply ends it).
    #[inline(always)]
    fn newlines(b: &[u8], mut j: usize, slash: bool) -> usize {
        while let Ch::A(c) = ch(b, j) {
            if c == b'\r' || c == b'\n' || (slash && c == b'/') {
                j += 1;
            } else {
                break;
            }
        }
        j
    }

    /// o200k's optional contraction suffix at `e` (`'s`, `'t`, `'re`, `'ve`, `'m`, `'ll`, `'d`,
    /// any case; `ſ` would match `s`, hence the bail-out on non-ASCII).
    #[inline(always)]
    fn o200k_contraction(b: &[u8], e: usize) -> Option<usize> {
        if ch(b, e) != Ch::A(b'\'') {
            return Some(e);
        }
        let x = match ch(b, e + 1) {
            Ch::NonAscii => return None,
            Ch::A(x) => x.to_ascii_lowercase(),
            Ch::End => return Some(e),
        };
        let second = |want: u8| match ch(b, e + 2) {
            Ch::NonAscii => None,
            Ch::A(y) if y.to_ascii_lowercase() == want => Some(e + 3),
            _ => Some(e),
        };
        match x {
            b's' | b't' | b'm' | b'd' => Some(e + 2),
            b'r' | b'v' => second(b'e'),
            b'l' => second(b'l'),
            _ => Some(e),
        }
    }

    /// o200k's letter alternatives from `s` (a letter): `[A-Z]*[a-z]*`, which is what
    /// `U*W+` then `U+W*` select in ASCII, then the contraction.
    #[inline(always)]
    fn o200k_letters(b: &[u8], s: usize) -> Option<usize> {
        let j = run(b, s, |c| c.is_ascii_uppercase())?;
        let k = run(b, j, |c| c.is_ascii_lowercase())?;
        o200k_contraction(b, k)
    }

    /// Whitespace run from `i` for both encodings; returns (end of run, last CR/LF + 1).
    #[inline(always)]
    fn ws_run(b: &[u8], i: usize) -> Option<(usize, Option<usize>)> {
        let mut j = i;
        let mut last_nl = None;
        loop {
            match ch(b, j) {
                Ch::A(c) if is_ws(c) => {
                    if c == b'\r' || c == b'\n' {
                        last_nl = Some(j + 1);
                    }
                    j += 1;
                }
                Ch::NonAscii => return None,
                _ => return Some((j, last_nl)),
            }
        }
    }

    pub(super) fn o200k(b: &[u8], i: usize) -> Option<usize> {
        let c = match ch(b, i) {
            Ch::A(c) => c,
            _ => return None,
        };
        if c.is_ascii_alphabetic() {
            return o200k_letters(b, i);
        }
        if c.is_ascii_digit() {
            return digits(b, i);
        }
        // `P` (not CR/LF, not a letter or digit) followed by a letter: alternatives 1-2.
        if c != b'\r' && c != b'\n' {
            match ch(b, i + 1) {
                Ch::NonAscii => return None,
                Ch::A(d) if d.is_ascii_alphabetic() => return o200k_letters(b, i + 1),
                _ => {}
            }
        }
        // ` ?Q+[\r\n/]*`
        if c == b' ' {
            if let Ch::A(d) = ch(b, i + 1) {
                if is_punct(d) {
                    return run(b, i + 1, is_punct).map(|j| newlines(b, j, true));
                }
            }
        }
        if is_punct(c) {
            return run(b, i, is_punct).map(|j| newlines(b, j, true));
        }
        // Whitespace: `\s*[\r\n]+` | `\s+(?!\S)` | `\s+`.
        let (r, last_nl) = ws_run(b, i)?;
        if let Some(p) = last_nl {
            return Some(p);
        }
        if r == b.len() || r - i < 2 {
            Some(r)
        } else {
            Some(r - 1)
        }
    }

    /// `\p{N}{1,3}` from `i` (a digit).
    #[inline(always)]
    fn digits(b: &[u8], i: usize) -> Option<usize> {
        let mut j = i + 1;
        while j < i + 3 {
            match ch(b, j) {
                Ch::A(c) if c.is_ascii_digit() => j += 1,
                Ch::NonAscii => return None,
                _ => break,
            }
        }
        Some(j)
    }

    pub(super) fn cl100k(b: &[u8], i: usize) -> Option<usize> {
        let c = match ch(b, i) {
            Ch::A(c) => c,
            _ => return None,
        };
        // `'(?i:[sdmt]|ll|ve|re)`
        if c == b'\'' {
            let x = match ch(b, i + 1) {
                Ch::NonAscii => return None,
                Ch::A(x) => x.to_ascii_lowercase(),
                Ch::End => 0,
            };
            let second = |want: u8| match ch(b, i + 2) {
                Ch::NonAscii => None,
                Ch::A(y) if y.to_ascii_lowercase() == want => Some(true),
                _ => Some(false),
            };
            match x {
                b's' | b'd' | b'm' | b't' => return Some(i + 2),
                b'l' if second(b'l')? => return Some(i + 3),
                b'v' | b'r' if second(b'e')? => return Some(i + 3),
                _ => {}
            }
        }
        if c.is_ascii_alphabetic() {
            return run(b, i, |c| c.is_ascii_alphabetic());
        }
        // `P?+\p{L}++`
        if c != b'\r' && c != b'\n' && !c.is_ascii_digit() {
            match ch(b, i + 1) {
                Ch::NonAscii => return None,
                Ch::A(d) if d.is_ascii_alphabetic() => {
                    return run(b, i + 1, |c| c.is_ascii_alphabetic())
                }
                _ => {}
            }
        }
        if c.is_ascii_digit() {
            return digits(b, i);
        }
        // ` ?Q++[\r\n]*+`
        if c == b' ' {
            if let Ch::A(d) = ch(b, i + 1) {
                if is_punct(d) {
                    return run(b, i + 1, is_punct).map(|j| newlines(b, j, false));
                }
            }
        }
        if is_punct(c) {
            return run(b, i, is_punct).map(|j| newlines(b, j, false));
        }
        // Whitespace: `\s++$` | `\s*[\r\n]` | `\s+(?!\S)` | `\s`.
        let (r, last_nl) = ws_run(b, i)?;
        if r == b.len() {
            return Some(r);
        }
        if let Some(p) = last_nl {
            return Some(p);
        }
        if r - i >= 2 {
            Some(r - 1)
        } else {
            Some(i + 1)
        }
    }
}

#[inline]
fn piece_count(tok: &Tokenizer, singles: &SingleTokens, piece: &str) -> usize {
    let b = piece.as_bytes();
    if b.len() <= 1 || (b.len() <= SINGLE_MAX && singles.contains(b)) {
        // Every byte is a token, and so is any piece found in the table.
        return usize::from(!b.is_empty());
    }
    tok.bpe.count(b)
}

/// Longest piece looked up in the one-token table (longer single-token pieces are rare; long
/// CJK runs would only pay for hashing).
const SINGLE_MAX: usize = 24;

/// The set of every token's bytes, for the one-token fast path.
struct SingleTokens {
    set: std::collections::HashSet<&'static [u8], BuildFx>,
}

impl SingleTokens {
    fn build(tok: &'static Tokenizer) -> Self {
        let n = tok.bpe.num_tokens();
        let mut set = std::collections::HashSet::with_capacity_and_hasher(n, BuildFx);
        for id in 0..n as u32 {
            let bytes = tok.bpe.token_bytes(id);
            if bytes.len() <= SINGLE_MAX {
                set.insert(bytes);
            }
        }
        Self { set }
    }

    #[inline]
    fn contains(&self, bytes: &[u8]) -> bool {
        self.set.contains(bytes)
    }
}

fn single_tokens(encoding: Encoding) -> &'static SingleTokens {
    static O200K: std::sync::LazyLock<SingleTokens> =
        std::sync::LazyLock::new(|| SingleTokens::build(bpe_openai::o200k_base()));
    static CL100K: std::sync::LazyLock<SingleTokens> =
        std::sync::LazyLock::new(|| SingleTokens::build(bpe_openai::cl100k_base()));
    match encoding {
        Encoding::O200kBase => &O200K,
        Encoding::Cl100kBase => &CL100K,
    }
}

/// A small multiply-rotate hasher (FxHash's scheme) for short byte keys.
#[derive(Clone, Copy, Default)]
struct BuildFx;

#[derive(Default)]
struct Fx(u64);

impl std::hash::BuildHasher for BuildFx {
    type Hasher = Fx;
    fn build_hasher(&self) -> Fx {
        Fx(0)
    }
}

impl std::hash::Hasher for Fx {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0xf135_7aea_2e62_a9c5;
        let mut h = self.0;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            h = (h.rotate_left(26) ^ w).wrapping_mul(K);
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            h = (h.rotate_left(26) ^ u64::from_le_bytes(buf)).wrapping_mul(K);
        }
        self.0 = h;
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0.rotate_left(26) ^ n as u64).wrapping_mul(0xf135_7aea_2e62_a9c5);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
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
