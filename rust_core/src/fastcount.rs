//! Exact counts of longer texts on fastokens' tokenizer (the `fastokens` crate, pinned).
//!
//! fastokens splits `o200k_base` and `cl100k_base` text with a SIMD scanner of the two split
//! patterns and merges with a per-thread cache of pre-token ids (seeded with every short
//! vocabulary word); on 20 KB pieces of text it has not seen it counts 1.1-2.3x faster than our
//! own scanner and tables (`pretok`, `bpe_engine`). Ours stay the counter of the shortest texts
//! (below [`MIN_BYTES`] fastokens' cost per call outweighs its speed), of
//! [`crate::tokens::count_till_limit`] (which stops early) and of the piece-wise paths
//! (truncation). fastokens is not exact on one known input, an apostrophe before `ſ`
//! (`LONG_S_CONTRACTION`): a text holding one is left to our tables too, so what this module
//! returns equals tiktoken's count; tests compare it with bpe-openai's on the same texts.
//!
//! The tokenizer is built once per encoding from the vocabulary `bpe-openai` embeds (a token's
//! id is its tiktoken rank), with fastokens' presets for the pattern and special tokens, and
//! counts with `encode_ordinary`: special-token text is ordinary text, as tiktoken's
//! `encode_ordinary` has it.
//!
//! Threads: fastokens spreads one input of 64 KiB or more over worker threads of its own. The
//! callers here already run counts on several threads (`count_batch`, the daemon's workers), so
//! a long text is cut into parts below that size, each cut where both split patterns always
//! end a piece: after a `\n` that an ASCII letter follows (no piece of either pattern holds a
//! newline followed by a letter, and the pieces before such a point do not depend on what comes
//! after it). A long stretch with no such point goes to our own counter.

use std::sync::OnceLock;

use crate::tokens::Encoding;

/// Texts shorter than this are counted by our own tables: fastokens' cost per call outweighs its
/// speed on the shortest texts. `cargo bench --bench tokens -- count_by_size` (256 KB of
/// different pieces of each size, o200k_base) measured here: at 16 bytes ours is 1.1-1.6x
/// faster on code, prose, JSON and CJK, at 32 bytes about even; at 64 bytes fastokens leads on
/// code, prose and CJK (1.2-1.6x) and ours still on JSON (1.4x); at 1 KB and 20 KB fastokens
/// leads on all (JSON by about 1.1x, the others by 1.1-2.3x).
pub const MIN_BYTES: usize = 64;

/// The longest part handed to fastokens in one call: under its 64 KiB threshold for fanning
/// out to its own threads.
pub const PART_BYTES: usize = 60 * 1024;

fn build(encoding: Encoding) -> Option<fastokens::Tokenizer> {
    let bpe = &encoding.tokenizer().bpe;
    let ranks: Vec<(Vec<u8>, u32)> = (0..bpe.num_tokens() as u32)
        .map(|id| (bpe.token_bytes(id).to_vec(), id))
        .collect();
    let config = match encoding {
        Encoding::O200kBase => fastokens::TiktokenConfig::o200k_base(),
        Encoding::Cl100kBase => fastokens::TiktokenConfig::cl100k_base(),
    };
    // A build that fails leaves the encoding to our own counter (a test asserts it builds).
    fastokens::Tokenizer::from_tiktoken_ranks(&ranks, config).ok()
}

/// fastokens' tokenizer of `encoding` (built on first use, then kept for the process), or
/// `None` if it could not be built.
pub fn tokenizer(encoding: Encoding) -> Option<&'static fastokens::Tokenizer> {
    cell(encoding).get_or_init(|| build(encoding)).as_ref()
}

/// Whether [`tokenizer`] of `encoding` was built (or its build failed) already.
pub fn built(encoding: Encoding) -> bool {
    cell(encoding).get().is_some()
}

fn cell(encoding: Encoding) -> &'static OnceLock<Option<fastokens::Tokenizer>> {
    static O200K: OnceLock<Option<fastokens::Tokenizer>> = OnceLock::new();
    static CL100K: OnceLock<Option<fastokens::Tokenizer>> = OnceLock::new();
    match encoding {
        Encoding::O200kBase => &O200K,
        Encoding::Cl100kBase => &CL100K,
    }
}

/// An apostrophe before `ſ` (U+017F), which Unicode's simple case folding makes an `s`: both
/// patterns' case-insensitive contractions (`'s`, ...) take it, and fastokens 0.3.5 does not
/// (found by the property test: "𛅰'ſ'vEBEa" counts 11 there, 10 in tiktoken). A text holding one
/// is counted by our own tables.
const LONG_S_CONTRACTION: &[u8] = "'\u{17f}".as_bytes();

/// The first cut point in `b[lo..hi]` searching back from `hi`: a position after a `\n` that an
/// ASCII letter follows, so that both split patterns end a piece there.
fn cut_before(b: &[u8], lo: usize, hi: usize) -> Option<usize> {
    let mut end = hi;
    while let Some(nl) = memchr::memrchr(b'\n', &b[lo..end]) {
        let at = lo + nl + 1;
        if at < b.len() && b[at].is_ascii_alphabetic() {
            return Some(at);
        }
        end = lo + nl;
    }
    None
}

/// Tokens of `text` on fastokens' tables, in parts of at most `part` bytes; `None` when the
/// tokenizer is not available or the text holds what it counts wrong (`LONG_S_CONTRACTION`):
/// the caller counts on its own tables.
pub fn count_in_parts(text: &str, encoding: Encoding, part: usize) -> Option<usize> {
    let b = text.as_bytes();
    if memchr::memmem::find(b, LONG_S_CONTRACTION).is_some() {
        return None;
    }
    let tok = tokenizer(encoding)?;
    let one = |s: &str| tok.encode_ordinary(s).ok().map(|ids| ids.len());
    let mut total = 0usize;
    let mut start = 0usize;
    while b.len() - start > part {
        // A cut in the second half of the window, so parts stay big enough to be worth a call.
        let Some(cut) = cut_before(b, start + part / 2, start + part) else {
            // No cut point near: this stretch (a minified file, one long line) and the rest
            // are counted by our own tables, which never use more than the calling thread.
            return Some(total + crate::tokens::count_own(&text[start..], encoding));
        };
        total += one(&text[start..cut])?;
        start = cut;
    }
    Some(total + one(&text[start..])?)
}

/// Tokens of `text` on fastokens' tables (see the module docs).
#[inline]
pub fn count(text: &str, encoding: Encoding) -> Option<usize> {
    count_in_parts(text, encoding, PART_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_points_follow_a_newline_before_a_letter() {
        let b = b"ab\n\n  x\n1\nc\n";
        assert_eq!(cut_before(b, 0, b.len()), Some(10));
        assert_eq!(cut_before(b, 0, 9), None); // newlines before a newline, a space, a digit
        assert_eq!(cut_before(b"x\nfoo\nbar", 0, 6), Some(6)); // the last one in the window
        assert_eq!(cut_before(b"x\nfoo\nbar", 0, 5), Some(2));
        assert_eq!(cut_before(b"\n\n\n", 0, 3), None);
        assert_eq!(cut_before(b"a\n", 0, 2), None);
    }

    #[test]
    fn both_encodings_build() {
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            assert!(tokenizer(enc).is_some(), "{enc}");
        }
    }
}
