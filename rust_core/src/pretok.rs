//! The pre-tokenisers of `o200k_base` and `cl100k_base`: hand-written scanners that split text
//! exactly as tiktoken's regexes do, without a regex engine.
//!
//! Each scanner finds the end of the piece that starts at a position by trying the pattern's
//! alternatives in order, with the regex's leftmost-first, greedy-with-backtracking semantics
//! worked out per alternative (see `o200k_at` and `cl100k_at`). Characters are
//! classified by one table lookup: a 128-entry table for ASCII, a two-stage table for the rest.
//! The Unicode classes are taken from `regex-syntax`, the parser behind the regex engines that
//! tiktoken and `bpe-openai` use, so `\p{L}`, `\p{N}`, `\s` and the rest mean the same Unicode
//! version here as there.

use std::sync::LazyLock;

/// `\p{L}`.
const L: u8 = 1;
/// `\p{N}`.
const N: u8 = 2;
/// `\s` (Unicode White_Space).
const S: u8 = 4;
/// o200k's "upper" class `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`.
const U: u8 = 8;
/// o200k's "lower" class `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
const W: u8 = 16;
/// `\r` or `\n`.
const NL: u8 = 32;
/// Past the end of the text: in no class, and not a "none of these" character either.
const END: u8 = 128;

/// `[^\r\n\p{L}\p{N}]`: the optional one-character prefix of a word.
#[inline(always)]
fn is_p(c: u8) -> bool {
    c & (NL | L | N | END) == 0
}

/// `[^\s\p{L}\p{N}]`: punctuation and symbols (marks too, in cl100k and o200k alike).
#[inline(always)]
fn is_q(c: u8) -> bool {
    c & (S | L | N | END) == 0
}

struct Classes {
    ascii: [u8; 128],
    /// Block index of each 256-code-point page.
    pages: Vec<u16>,
    /// The distinct pages, 256 classes each.
    blocks: Vec<[u8; 256]>,
}

fn class_ranges(pattern: &str) -> Vec<(u32, u32)> {
    use regex_syntax::hir::{Class, HirKind};
    let hir = regex_syntax::parse(pattern).expect("a valid character class");
    match hir.kind() {
        HirKind::Class(Class::Unicode(c)) => c
            .ranges()
            .iter()
            .map(|r| (r.start() as u32, r.end() as u32))
            .collect(),
        other => panic!("{pattern} is not a Unicode class: {other:?}"),
    }
}

impl Classes {
    fn build() -> Self {
        const CPS: usize = 0x11_0000;
        let mut all = vec![0u8; CPS];
        for (pattern, bit) in [
            (r"\p{L}", L),
            (r"\p{N}", N),
            (r"\s", S),
            (r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", U),
            (r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]", W),
            (r"[\r\n]", NL),
        ] {
            for (lo, hi) in class_ranges(pattern) {
                for c in &mut all[lo as usize..=hi as usize] {
                    *c |= bit;
                }
            }
        }
        let mut ascii = [0u8; 128];
        ascii.copy_from_slice(&all[..128]);
        let mut pages = Vec::with_capacity(CPS / 256);
        let mut blocks: Vec<[u8; 256]> = Vec::new();
        let mut seen = std::collections::HashMap::new();
        for page in all.chunks_exact(256) {
            let block: [u8; 256] = page.try_into().expect("256 classes");
            let idx = *seen.entry(block).or_insert_with(|| {
                blocks.push(block);
                blocks.len() - 1
            });
            pages.push(u16::try_from(idx).expect("fewer than 65536 distinct pages"));
        }
        Self {
            ascii,
            pages,
            blocks,
        }
    }

    #[inline(always)]
    fn of_cp(&self, cp: u32) -> u8 {
        // Valid UTF-8 decodes to at most U+10FFFF, the table's last page.
        let block = self.pages[(cp >> 8) as usize] as usize;
        self.blocks[block][(cp & 0xFF) as usize]
    }
}

static CLASSES: LazyLock<Classes> = LazyLock::new(Classes::build);

/// A scanner over valid UTF-8 with the class table at hand.
#[derive(Clone, Copy)]
struct Text<'a> {
    b: &'a [u8],
    cls: &'a Classes,
}

impl Text<'_> {
    /// The class and UTF-8 length of the character at `j` (`END`, 0 past the end).
    #[inline(always)]
    fn at(self, j: usize) -> (u8, usize) {
        match self.b.get(j) {
            None => (END, 0),
            Some(&c) if c < 0x80 => (self.cls.ascii[c as usize], 1),
            Some(_) => self.at_multibyte(j),
        }
    }

    #[inline(never)]
    fn at_multibyte(self, j: usize) -> (u8, usize) {
        let b = self.b;
        let c0 = b[j] as u32;
        // `b` is valid UTF-8 and `j` a character boundary, so the continuation bytes exist.
        let (cp, len) = if c0 < 0xE0 {
            (((c0 & 0x1F) << 6) | (b[j + 1] as u32 & 0x3F), 2)
        } else if c0 < 0xF0 {
            (
                ((c0 & 0x0F) << 12) | ((b[j + 1] as u32 & 0x3F) << 6) | (b[j + 2] as u32 & 0x3F),
                3,
            )
        } else {
            (
                ((c0 & 0x07) << 18)
                    | ((b[j + 1] as u32 & 0x3F) << 12)
                    | ((b[j + 2] as u32 & 0x3F) << 6)
                    | (b[j + 3] as u32 & 0x3F),
                4,
            )
        };
        (self.cls.of_cp(cp), len)
    }

    /// End of the run of characters whose class has a bit of `mask`, from `j`.
    #[inline(always)]
    fn run(self, mut j: usize, mask: u8) -> usize {
        loop {
            // ASCII bytes inline; anything else through the full lookup.
            if let Some(&c) = self.b.get(j) {
                if c < 0x80 {
                    if self.cls.ascii[c as usize] & mask != 0 {
                        j += 1;
                        continue;
                    }
                    return j;
                }
            }
            let (c, len) = self.at(j);
            if c & mask == 0 {
                return j;
            }
            j += len;
        }
    }

    /// End of the run of `[^\s\p{L}\p{N}]` from `j`.
    #[inline(always)]
    fn q_run(self, mut j: usize) -> usize {
        loop {
            let (c, len) = self.at(j);
            if !is_q(c) {
                return j;
            }
            j += len;
        }
    }

    /// `[\r\n]*`, or `[\r\n/]*` with `slash`, from `j`.
    #[inline(always)]
    fn newlines(self, mut j: usize, slash: bool) -> usize {
        while let Some(&c) = self.b.get(j) {
            if c == b'\r' || c == b'\n' || (slash && c == b'/') {
                j += 1;
            } else {
                break;
            }
        }
        j
    }

    /// `(?i:'s|'t|'re|'ve|'m|'ll|'d)` at `j`: its end, or `None`. Case-insensitive matching
    /// includes Unicode's simple case folding, under which `ſ` (U+017F) is an `s`.
    #[inline(always)]
    fn contraction(self, j: usize) -> Option<usize> {
        let b = self.b;
        if b.get(j) != Some(&b'\'') {
            return None;
        }
        let lower = |k: usize| b.get(k).map(u8::to_ascii_lowercase);
        match lower(j + 1)? {
            b's' | b't' | b'm' | b'd' => Some(j + 2),
            b'r' | b'v' if lower(j + 2) == Some(b'e') => Some(j + 3),
            b'l' if lower(j + 2) == Some(b'l') => Some(j + 3),
            0xC5 if b.get(j + 2) == Some(&0xBF) => Some(j + 3),
            _ => None,
        }
    }

    /// A whitespace run from `i` (a whitespace character): its end and the end of its last
    /// `\r`/`\n`, if any.
    #[inline(always)]
    fn ws_run(self, i: usize) -> (usize, Option<usize>) {
        let mut j = i;
        let mut last_nl = None;
        loop {
            if let Some(&c) = self.b.get(j) {
                if c == b'\r' || c == b'\n' {
                    j += 1;
                    last_nl = Some(j);
                    continue;
                }
                if c == b' ' || c == b'\t' {
                    j += 1;
                    continue;
                }
            }
            let (c, len) = self.at(j);
            if c & S == 0 {
                return (j, last_nl);
            }
            j += len;
        }
    }

    /// `\p{N}{1,3}` from `i` (a number character).
    #[inline(always)]
    fn digits(self, i: usize, first_len: usize) -> usize {
        let mut j = i + first_len;
        for _ in 0..2 {
            let (c, len) = self.at(j);
            if c & N == 0 {
                break;
            }
            j += len;
        }
        j
    }

    /// o200k's `[U]*[W]+` from `s`, U and W being the "upper" and "lower" classes (which
    /// overlap in `Lm`, `Lo` and marks). Greedy `U*` then `W+`; when no W follows the U run,
    /// the regex gives back U characters until one of them is a W, which then ends the match.
    #[inline(always)]
    fn o200k_a1(self, s: usize) -> Option<usize> {
        let mut u = s;
        let mut last_w_end = None;
        loop {
            let (c, len) = self.at(u);
            if c & U == 0 {
                if c & W != 0 {
                    return Some(self.run(u + len, W));
                }
                return last_w_end;
            }
            u += len;
            if c & W != 0 {
                last_w_end = Some(u);
            }
        }
    }

    /// o200k's `[U]+[W]*` from `s`.
    #[inline(always)]
    fn o200k_a2(self, s: usize) -> Option<usize> {
        let (c, len) = self.at(s);
        if c & U == 0 {
            return None;
        }
        let u = self.run(s + len, U);
        Some(self.run(u, W))
    }
}

/// The end of the o200k_base piece starting at `i` (< `b.len()`, on a character boundary).
///
/// tiktoken's pattern, alternatives in order (`P` = `[^\r\n\p{L}\p{N}]`, `Q` = `[^\s\p{L}\p{N}]`,
/// `C` = `(?i:'s|'t|'re|'ve|'m|'ll|'d)`):
/// `P?U*W+C?` | `P?U+W*C?` | `\p{N}{1,3}` | ` ?Q+[\r\n/]*` | `\s*[\r\n]+` | `\s+(?!\S)` | `\s+`.
#[inline(always)]
fn o200k_at(t: Text<'_>, i: usize) -> usize {
    let (c0, l0) = t.at(i);
    let word = |e: usize| t.contraction(e).unwrap_or(e);
    // The letter alternatives, each first with the prefix taken, then without (which only a
    // mark, being both `P` and a letter class, can match differently).
    let p = is_p(c0);
    if c0 & (U | W) != 0 {
        if p {
            if let Some(e) = t.o200k_a1(i + l0) {
                return word(e);
            }
        }
        if let Some(e) = t.o200k_a1(i) {
            return word(e);
        }
        if p {
            if let Some(e) = t.o200k_a2(i + l0) {
                return word(e);
            }
        }
        if let Some(e) = t.o200k_a2(i) {
            return word(e);
        }
    } else if p {
        let (c1, _) = t.at(i + l0);
        if c1 & (U | W) != 0 {
            if let Some(e) = t.o200k_a1(i + l0).or_else(|| t.o200k_a2(i + l0)) {
                return word(e);
            }
        }
    }
    if c0 & N != 0 {
        return t.digits(i, l0);
    }
    // ` ?Q+[\r\n/]*`
    if t.b[i] == b' ' {
        let (c1, l1) = t.at(i + 1);
        if is_q(c1) {
            return t.newlines(t.q_run(i + 1 + l1), true);
        }
    }
    if is_q(c0) {
        return t.newlines(t.q_run(i + l0), true);
    }
    // Whitespace: `\s*[\r\n]+` | `\s+(?!\S)` | `\s+`.
    let (r, last_nl) = t.ws_run(i);
    if let Some(e) = last_nl {
        return e;
    }
    if r == t.b.len() {
        return r;
    }
    // Give back the last whitespace character when the run has more than one.
    last_char_start(t.b, i, r)
}

/// The end of the cl100k_base piece starting at `i`.
///
/// tiktoken's pattern: `'(?i:[sdmt]|ll|ve|re)` | `P?+\p{L}++` | `\p{N}{1,3}+` |
/// ` ?Q++[\r\n]*+` | `\s++$` | `\s*[\r\n]` | `\s+(?!\S)` | `\s`.
#[inline(always)]
fn cl100k_at(t: Text<'_>, i: usize) -> usize {
    if let Some(e) = t.contraction(i) {
        return e;
    }
    let (c0, l0) = t.at(i);
    if c0 & L != 0 {
        return t.run(i + l0, L);
    }
    if is_p(c0) {
        let (c1, l1) = t.at(i + l0);
        if c1 & L != 0 {
            return t.run(i + l0 + l1, L);
        }
    }
    if c0 & N != 0 {
        return t.digits(i, l0);
    }
    if t.b[i] == b' ' {
        let (c1, l1) = t.at(i + 1);
        if is_q(c1) {
            return t.newlines(t.q_run(i + 1 + l1), false);
        }
    }
    if is_q(c0) {
        return t.newlines(t.q_run(i + l0), false);
    }
    let (r, last_nl) = t.ws_run(i);
    if r == t.b.len() {
        return r;
    }
    if let Some(e) = last_nl {
        return e;
    }
    if r - i > l0 {
        return last_char_start(t.b, i, r);
    }
    i + l0
}

/// Start of the last character of `b[i..r]` if that range holds more than one character,
/// else `r` (`\s+(?!\S)` then `\s+`: a run before a non-space gives back its last character).
#[inline(always)]
fn last_char_start(b: &[u8], i: usize, r: usize) -> usize {
    let mut k = r - 1;
    while (b[k] as i8) < -64 {
        k -= 1;
    }
    if k > i {
        k
    } else {
        r
    }
}

/// Which pre-tokeniser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// `o200k_base`'s.
    O200k,
    /// `cl100k_base`'s.
    Cl100k,
}

/// Calls `f(start, end)` for each piece of `text`, in order (they tile it); stops early when
/// `f` returns `false`.
#[inline(always)]
pub fn for_each_piece(text: &str, pattern: Pattern, mut f: impl FnMut(usize, usize) -> bool) {
    let t = Text {
        b: text.as_bytes(),
        cls: &CLASSES,
    };
    let n = t.b.len();
    let mut i = 0;
    match pattern {
        Pattern::O200k => {
            while i < n {
                let e = ascii::o200k(t.b, i).unwrap_or_else(|| o200k_at(t, i));
                if !f(i, e) {
                    return;
                }
                i = e;
            }
        }
        Pattern::Cl100k => {
            while i < n {
                let e = ascii::cl100k(t.b, i).unwrap_or_else(|| cl100k_at(t, i));
                if !f(i, e) {
                    return;
                }
                i = e;
            }
        }
    }
}

/// The end of the piece of `text` that starts at `i` (a character boundary before the end).
pub fn piece_end(text: &str, pattern: Pattern, i: usize) -> usize {
    let t = Text {
        b: text.as_bytes(),
        cls: &CLASSES,
    };
    match pattern {
        Pattern::O200k => ascii::o200k(t.b, i).unwrap_or_else(|| o200k_at(t, i)),
        Pattern::Cl100k => ascii::cl100k(t.b, i).unwrap_or_else(|| cl100k_at(t, i)),
    }
}

/// The ASCII fast path: byte flags (non-ASCII bytes are `NA`) and scanners that find the end
/// of a piece when it and the lookahead that decides it are ASCII, or give up (`None`) for
/// the general scanner to redo that piece. A test checks the flags against the Unicode table.
mod ascii {
    pub(super) const UP: u8 = 1;
    pub(super) const LO: u8 = 2;
    pub(super) const DG: u8 = 4;
    pub(super) const WS: u8 = 8;
    pub(super) const NL: u8 = 16;
    pub(super) const PU: u8 = 32;
    pub(super) const NA: u8 = 64;

    pub(super) const FLAGS: [u8; 256] = {
        let mut t = [0u8; 256];
        let mut i = 0;
        while i < 256 {
            let c = i as u8;
            t[i] = if c >= 0x80 {
                NA
            } else if c.is_ascii_uppercase() {
                UP
            } else if c.is_ascii_lowercase() {
                LO
            } else if c.is_ascii_digit() {
                DG
            } else if c == b'\r' || c == b'\n' {
                WS | NL
            } else if matches!(c, b'\t' | 0x0b | 0x0c | b' ') {
                WS
            } else {
                PU
            };
            i += 1;
        }
        t
    };

    #[inline(always)]
    fn f(b: &[u8], j: usize) -> u8 {
        // Past the end: no flag (the end of the text ends every run and decides nothing).
        match b.get(j) {
            Some(&c) => FLAGS[c as usize],
            None => 0,
        }
    }

    #[inline(always)]
    fn run(b: &[u8], mut j: usize, mask: u8) -> usize {
        while j < b.len() && FLAGS[b[j] as usize] & mask != 0 {
            j += 1;
        }
        j
    }

    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;

    /// The bytes of `w` that are ASCII and in `lo..=hi`, as their high bits. Each byte is
    /// computed on its own 7 bits (no borrow crosses bytes).
    #[inline(always)]
    fn in_range(w: u64, lo: u8, hi: u8) -> u64 {
        let y = w & !HIGH;
        let ge = (y | HIGH).wrapping_sub(ONES * lo as u64);
        let le = ((ONES * hi as u64) | HIGH).wrapping_sub(y);
        ge & le & !w & HIGH
    }

    /// End of the run from `j` of bytes in `lo..=hi` (with `fold`, of bytes that are after
    /// `| 0x20`: `a..=z` then means both cases), eight bytes a step: word lengths are
    /// unpredictable, so a byte loop would mispredict its exit once per word.
    #[inline(always)]
    fn swar_run(b: &[u8], mut j: usize, lo: u8, hi: u8, fold: bool) -> usize {
        let or = if fold { ONES * 0x20 } else { 0 };
        while let Some(w) = b.get(j..j + 8) {
            let w = u64::from_le_bytes(w.try_into().expect("8 bytes")) | or;
            let stop = !in_range(w, lo, hi) & HIGH;
            if stop != 0 {
                return j + (stop.trailing_zeros() / 8) as usize;
            }
            j += 8;
        }
        while j < b.len() && (b[j] | or as u8).wrapping_sub(lo) <= hi - lo {
            j += 1;
        }
        j
    }

    /// `(?i:'s|'t|'re|'ve|'m|'ll|'d)` at `e` for o200k's optional suffix: its end, `e` when
    /// there is none, `None` when a non-ASCII character decides (`ſ` is an `s`).
    #[inline(always)]
    fn suffix(b: &[u8], e: usize) -> Option<usize> {
        if b.get(e) != Some(&b'\'') {
            return Some(e);
        }
        let Some(&x) = b.get(e + 1) else {
            return Some(e);
        };
        if x >= 0x80 {
            return None;
        }
        let second = |want: u8| match b.get(e + 2) {
            Some(&y) if y >= 0x80 => None,
            Some(&y) if y.to_ascii_lowercase() == want => Some(e + 3),
            _ => Some(e),
        };
        match x.to_ascii_lowercase() {
            b's' | b't' | b'm' | b'd' => Some(e + 2),
            b'r' | b'v' => second(b'e'),
            b'l' => second(b'l'),
            _ => Some(e),
        }
    }

    /// o200k's letter alternatives from `s` (an ASCII letter): in ASCII they select
    /// `[A-Z]*[a-z]*`, then the suffix.
    #[inline(always)]
    fn o200k_word(b: &[u8], s: usize) -> Option<usize> {
        let j = if b[s] < b'a' {
            swar_run(b, s, b'A', b'Z', false)
        } else {
            s
        };
        let k = swar_run(b, j, b'a', b'z', false);
        if f(b, k) & NA != 0 {
            return None;
        }
        suffix(b, k)
    }

    /// `Q+` then `[\r\n]*` (`[\r\n/]*` with `slash`) from `s` (a punctuation byte).
    #[inline(always)]
    fn punct(b: &[u8], s: usize, slash: bool) -> Option<usize> {
        let j = run(b, s, PU);
        if f(b, j) & NA != 0 {
            return None;
        }
        let mut k = j;
        while k < b.len() && (b[k] == b'\r' || b[k] == b'\n' || (slash && b[k] == b'/')) {
            k += 1;
        }
        Some(k)
    }

    /// A whitespace run from `i`: (end, end of its last CR/LF), `None` if a non-ASCII
    /// character (maybe a space) ends it.
    #[inline(always)]
    fn ws(b: &[u8], i: usize) -> Option<(usize, Option<usize>)> {
        let mut j = i;
        let mut last_nl = None;
        loop {
            // Spaces eight at a time (indentation): a byte loop would mispredict its exit.
            while let Some(w) = b.get(j..j + 8) {
                let w = u64::from_le_bytes(w.try_into().expect("8 bytes")) ^ (ONES * 0x20);
                if w != 0 {
                    j += (w.trailing_zeros() / 8) as usize;
                    break;
                }
                j += 8;
            }
            if j >= b.len() {
                break;
            }
            let c = FLAGS[b[j] as usize];
            if c & WS == 0 {
                if c & NA != 0 {
                    return None;
                }
                break;
            }
            j += 1;
            if c & NL != 0 {
                last_nl = Some(j);
            }
        }
        Some((j, last_nl))
    }

    /// `\p{N}{1,3}` from `i` (a digit).
    #[inline(always)]
    fn digits(b: &[u8], i: usize) -> Option<usize> {
        let mut j = i + 1;
        while j < i + 3 {
            let c = f(b, j);
            if c & DG == 0 {
                if c & NA != 0 {
                    return None;
                }
                break;
            }
            j += 1;
        }
        Some(j)
    }

    #[inline(always)]
    pub(super) fn o200k(b: &[u8], i: usize) -> Option<usize> {
        let c0 = FLAGS[b[i] as usize];
        if c0 & (UP | LO) != 0 {
            return o200k_word(b, i);
        }
        if c0 & DG != 0 {
            return digits(b, i);
        }
        if c0 & NA != 0 {
            return None;
        }
        let c1 = f(b, i + 1);
        if c1 & NA != 0 {
            return None;
        }
        // A prefix character (not CR/LF) before a letter.
        if c0 & NL == 0 && c1 & (UP | LO) != 0 {
            return o200k_word(b, i + 1);
        }
        if b[i] == b' ' && c1 & PU != 0 {
            return punct(b, i + 1, true);
        }
        if c0 & PU != 0 {
            return punct(b, i, true);
        }
        let (r, last_nl) = ws(b, i)?;
        if let Some(e) = last_nl {
            return Some(e);
        }
        Some(if r == b.len() || r - i < 2 { r } else { r - 1 })
    }

    #[inline(always)]
    pub(super) fn cl100k(b: &[u8], i: usize) -> Option<usize> {
        let c0 = FLAGS[b[i] as usize];
        if c0 & (UP | LO) != 0 {
            let j = swar_run(b, i + 1, b'a', b'z', true);
            return if f(b, j) & NA != 0 { None } else { Some(j) };
        }
        if c0 & DG != 0 {
            return digits(b, i);
        }
        if c0 & NA != 0 {
            return None;
        }
        let c1 = f(b, i + 1);
        if c1 & NA != 0 {
            return None;
        }
        // `'(?i:[sdmt]|ll|ve|re)`
        if b[i] == b'\'' && i + 1 < b.len() {
            let second = |want: u8| match b.get(i + 2) {
                Some(&y) if y >= 0x80 => None,
                Some(&y) => Some(y.to_ascii_lowercase() == want),
                None => Some(false),
            };
            match b[i + 1].to_ascii_lowercase() {
                b's' | b'd' | b'm' | b't' => return Some(i + 2),
                b'l' if second(b'l')? => return Some(i + 3),
                b'v' | b'r' if second(b'e')? => return Some(i + 3),
                _ => {}
            }
        }
        if c0 & NL == 0 && c1 & (UP | LO) != 0 {
            let j = swar_run(b, i + 2, b'a', b'z', true);
            return if f(b, j) & NA != 0 { None } else { Some(j) };
        }
        if b[i] == b' ' && c1 & PU != 0 {
            return punct(b, i + 1, false);
        }
        if c0 & PU != 0 {
            return punct(b, i, false);
        }
        let (r, last_nl) = ws(b, i)?;
        if r == b.len() {
            return Some(r);
        }
        if let Some(e) = last_nl {
            return Some(e);
        }
        Some(if r - i >= 2 { r - 1 } else { i + 1 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_flags_agree_with_the_unicode_classes() {
        let cls = &*CLASSES;
        for c in 0u8..128 {
            let u = cls.ascii[c as usize];
            let f = ascii::FLAGS[c as usize];
            let name = format!("{c:#04x}");
            assert_eq!(u & U != 0 && u & W == 0, f & ascii::UP != 0, "upper {name}");
            assert_eq!(u & W != 0 && u & U == 0, f & ascii::LO != 0, "lower {name}");
            assert!(u & U == 0 || u & W == 0, "ASCII has no Lm/Lo/M: {name}");
            assert_eq!(
                u & L != 0,
                f & (ascii::UP | ascii::LO) != 0,
                "letter {name}"
            );
            assert_eq!(u & N != 0, f & ascii::DG != 0, "digit {name}");
            assert_eq!(u & S != 0, f & ascii::WS != 0, "space {name}");
            assert_eq!(u & NL != 0, f & ascii::NL != 0, "newline {name}");
            assert_eq!(is_q(u), f & ascii::PU != 0, "punct {name}");
        }
        for c in 128..256 {
            assert_eq!(ascii::FLAGS[c], ascii::NA);
        }
    }

    #[test]
    fn unicode_classes() {
        let cls = &*CLASSES;
        let of = |c: char| cls.of_cp(c as u32);
        assert_eq!(of('é'), L | W);
        assert_eq!(of('É'), L | U);
        assert_eq!(of('ǅ'), L | U); // Lt
        assert_eq!(of('ʰ'), L | U | W); // Lm
        assert_eq!(of('日'), L | U | W); // Lo
        assert_eq!(of('\u{301}'), U | W); // Mn: not \p{L}
        assert_eq!(of('²'), N);
        assert_eq!(of('٣'), N);
        assert_eq!(of('\u{a0}'), S);
        assert_eq!(of('\u{3000}'), S);
        assert_eq!(of('\u{85}'), S);
        assert_eq!(of('😀'), 0);
        assert_eq!(of('\u{10ffff}'), 0);
    }
}
