//! Head truncation to a token budget.
//!
//! Claude Code's `truncateToTokens(content, maxTokens)` (used for invoked skills) keeps
//! `content` when `roughTokenCountEstimation(content) <= maxTokens`, and otherwise returns
//! `content.slice(0, maxTokens * 4 - MARKER.length) + MARKER`. This module reproduces that rule
//! exactly for the rough counter, with two safety fixes JavaScript lacks: a cut that would split
//! a surrogate pair moves one unit earlier (never half a character), and a marker longer than
//! the budget is an error instead of a negative `slice` bound.
//!
//! With the exact counter the kept prefix is the longest one (on a character boundary) such that
//! `count(prefix + marker) <= max_tokens`; the result is always verified against the budget.
//!
//! Invariants (both counters): the result never exceeds the budget, is valid UTF-8, is the
//! input unchanged when it fits, and otherwise is a prefix of the input followed by the marker.

use std::borrow::Cow;

use crate::tokens::{
    count, count_till_limit, estimate, piece_counts, utf16_len, utf16_units_valid, Counter,
    Encoding, TokenError,
};

/// Where to cut a text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// The text is within the budget: keep it as it is, without a marker.
    Unchanged,
    /// Keep `text[..n]` (a character boundary) and append the marker.
    At(usize),
}

impl Cut {
    /// Applies the cut: the text itself, or its kept prefix followed by `marker`.
    pub fn apply<'a>(self, text: &'a str, marker: &str) -> Cow<'a, str> {
        match self {
            Cut::Unchanged => Cow::Borrowed(text),
            Cut::At(n) => {
                let mut out = String::with_capacity(n + marker.len());
                out.push_str(&text[..n]);
                out.push_str(marker);
                Cow::Owned(out)
            }
        }
    }
}

/// Checks a budget given as a signed integer (the Python API takes `int`).
pub fn check_budget(max_tokens: i64) -> Result<usize, TokenError> {
    usize::try_from(max_tokens).map_err(|_| TokenError::NegativeBudget(max_tokens))
}

/// Truncates `text` to `max_tokens` under `counter`, appending `marker` when it cuts.
pub fn truncate_to_tokens<'a>(
    text: &'a str,
    max_tokens: usize,
    marker: &str,
    counter: Counter,
) -> Result<Cow<'a, str>, TokenError> {
    match counter {
        Counter::Rough => Ok(rough_cut(text, max_tokens, marker)?.apply(text, marker)),
        Counter::Exact(enc) => exact_truncate(text, max_tokens, marker, enc),
    }
}

// ---------------------------------------------------------------------------------------------
// Rough
// ---------------------------------------------------------------------------------------------

/// Checks that the marker fits the rough budget; returns the UTF-16 units to keep of a text that
/// does not fit: `max_tokens * 4 - utf16_len(marker)`, at least 0.
pub fn rough_keep_units(max_tokens: usize, marker: &str) -> Result<usize, TokenError> {
    let marker_tokens = estimate(marker, None);
    if marker_tokens > max_tokens {
        return Err(TokenError::MarkerTooLarge {
            marker_tokens,
            max_tokens,
        });
    }
    Ok(max_tokens
        .saturating_mul(4)
        .saturating_sub(utf16_len(marker)))
}

/// The rough cut of `text`: [`Cut::Unchanged`] when `estimate(text) <= max_tokens`, else the
/// longest prefix of at most `max_tokens * 4 - utf16_len(marker)` UTF-16 units.
pub fn rough_cut(text: &str, max_tokens: usize, marker: &str) -> Result<Cut, TokenError> {
    let keep_units = rough_keep_units(max_tokens, marker)?;
    rough_cut_units(text, utf16_len(text), max_tokens, keep_units)
}

/// [`rough_cut`] when the caller already knows the text's UTF-16 length and the units to keep.
pub fn rough_cut_units(
    text: &str,
    text_units: usize,
    max_tokens: usize,
    keep_units: usize,
) -> Result<Cut, TokenError> {
    if crate::tokens::estimate_from_units(text_units, 4) <= max_tokens {
        return Ok(Cut::Unchanged);
    }
    Ok(Cut::At(prefix_len_for_units(text.as_bytes(), keep_units)))
}

/// Length in bytes of the longest prefix of valid UTF-8 `bytes` that ends on a character
/// boundary and has at most `units` UTF-16 units (a character that would straddle the limit,
/// i.e. an astral one needing 2 units when 1 is left, is not kept).
pub fn prefix_len_for_units(bytes: &[u8], units: usize) -> usize {
    // Units are attributed to the first byte of each character, so the count over any byte
    // prefix is exact at character boundaries. Skip whole blocks first, then single bytes.
    const BLOCK: usize = 1024;
    let mut pos = 0;
    let mut acc = 0;
    // A block of n bytes has at most 2n units... and at least n/4: skip while the worst case
    // still fits, then count exactly.
    while bytes.len() - pos >= BLOCK {
        let block = &bytes[pos..pos + BLOCK];
        let n = utf16_units_valid(block);
        if acc + n > units {
            break;
        }
        acc += n;
        pos += BLOCK;
    }
    // Finish byte by byte (at most one block plus the tail).
    for (i, &b) in bytes[pos..].iter().enumerate() {
        let w = usize::from((b as i8) >= -64) + usize::from(b >= 0xF0);
        if w > 0 && acc + w > units {
            return pos + i;
        }
        acc += w;
    }
    bytes.len()
}

// ---------------------------------------------------------------------------------------------
// Exact
// ---------------------------------------------------------------------------------------------

/// Exact truncation: see the module docs.
pub fn exact_truncate<'a>(
    text: &'a str,
    max_tokens: usize,
    marker: &str,
    encoding: Encoding,
) -> Result<Cow<'a, str>, TokenError> {
    Ok(exact_cut_verified(text, max_tokens, marker, encoding)?.apply(text, marker))
}

/// [`exact_cut`], then checked against a full count of `text[..cut] + marker`, moving the cut
/// back (character by character) in the unlikely case the tail count was off.
pub fn exact_cut_verified(
    text: &str,
    max_tokens: usize,
    marker: &str,
    encoding: Encoding,
) -> Result<Cut, TokenError> {
    let Cut::At(mut cut) = exact_cut(text, max_tokens, marker, encoding)? else {
        return Ok(Cut::Unchanged);
    };
    let mut out = String::with_capacity(cut + marker.len());
    loop {
        out.clear();
        out.push_str(&text[..cut]);
        out.push_str(marker);
        if cut == 0 || count_till_limit(&out, encoding, max_tokens).is_some() {
            return Ok(Cut::At(cut));
        }
        cut = prev_char_boundary(text, cut);
    }
}

/// Checks that the marker fits the exact budget; returns its token count.
pub fn exact_marker_tokens(
    max_tokens: usize,
    marker: &str,
    encoding: Encoding,
) -> Result<usize, TokenError> {
    let marker_tokens = count(marker, encoding);
    if marker_tokens > max_tokens {
        return Err(TokenError::MarkerTooLarge {
            marker_tokens,
            max_tokens,
        });
    }
    Ok(marker_tokens)
}

/// Finds the exact cut: one pass over the pre-tokenised pieces (stopping once the budget is
/// exceeded), then a search among the character boundaries near the budget, counting only the
/// tail `text[base..cut] + marker` on top of the piece counts before `base`.
///
/// The result is a candidate: [`exact_cut_verified`] checks it against a full count.
pub fn exact_cut(
    text: &str,
    max_tokens: usize,
    marker: &str,
    encoding: Encoding,
) -> Result<Cut, TokenError> {
    let marker_tokens = exact_marker_tokens(max_tokens, marker, encoding)?;
    // Piece ends and cumulative counts, (byte offset, tokens before it). The pass goes a little
    // past the budget: appending the marker can merge with the last pieces and save tokens.
    let mut bounds: Vec<(usize, usize)> = Vec::with_capacity(64);
    bounds.push((0, 0));
    let mut pos = 0;
    let mut total = 0;
    for (piece, n) in piece_counts(text, encoding) {
        total += n;
        pos += piece.len();
        bounds.push((pos, total));
        if total > max_tokens + MERGE_SLACK {
            break;
        }
    }
    if pos == text.len() && total <= max_tokens {
        return Ok(Cut::Unchanged);
    }
    // The last boundary whose prefix and the marker, counted apart, fit.
    let target = max_tokens - marker_tokens;
    let lo_idx = bounds.partition_point(|&(_, c)| c <= target) - 1;
    // Search window: up to the piece that goes MERGE_SLACK tokens beyond that.
    let hi_idx =
        (bounds.partition_point(|&(_, c)| c <= target + MERGE_SLACK)).min(bounds.len() - 1);
    let lo = bounds[lo_idx].0;
    let hi = bounds[hi_idx].0;
    // Count tails from a boundary a few pieces back, so lookahead across the cut is covered.
    let base_idx = lo_idx.saturating_sub(3);
    let (base, base_tokens) = bounds[base_idx];
    let mut buf = String::new();
    let mut fits_at = |cut: usize| -> bool {
        buf.clear();
        buf.push_str(&text[base..cut]);
        buf.push_str(marker);
        count_till_limit(&buf, encoding, max_tokens.saturating_sub(base_tokens)).is_some()
    };
    let candidates: Vec<usize> = (lo + 1..=hi)
        .filter(|&i| text.is_char_boundary(i))
        .collect();
    if let Some(c) = last_fitting(&candidates, &mut fits_at) {
        return Ok(Cut::At(c));
    }
    // Nothing past `lo` fits: the marker merged badly with the end of the text. Go back to
    // `base`, then (never seen in practice) further back with full counts.
    let candidates: Vec<usize> = (base..=lo).filter(|&i| text.is_char_boundary(i)).collect();
    if let Some(c) = last_fitting(&candidates, &mut fits_at) {
        return Ok(Cut::At(c));
    }
    let mut b = base;
    while b > 0 {
        b = prev_char_boundary(text, b);
        if fits_at_full(text, b, max_tokens, marker, encoding) {
            break;
        }
    }
    Ok(Cut::At(b))
}

/// How many tokens appending the marker may save by merging with the end of the text (the
/// search window beyond the separately-counted fit).
const MERGE_SLACK: usize = 8;

/// A last fitting candidate, searched for with a binary search (counts of growing prefixes
/// are nearly monotone), then extended upwards past small non-monotone dips: the result fits
/// and the next candidate does not.
fn last_fitting(candidates: &[usize], fits: &mut impl FnMut(usize) -> bool) -> Option<usize> {
    const LOOK_AHEAD: usize = 8;
    let (mut l, mut r) = (0usize, candidates.len());
    while l < r {
        let mid = l + (r - l) / 2;
        if fits(candidates[mid]) {
            l = mid + 1;
        } else {
            r = mid;
        }
    }
    // `candidates[l]` (if any) failed; look a little further for a longer fit.
    let mut best = l.checked_sub(1);
    let mut misses = 1;
    let mut i = l + 1;
    while i < candidates.len() && misses < LOOK_AHEAD {
        if fits(candidates[i]) {
            best = Some(i);
            misses = 0;
        } else {
            misses += 1;
        }
        i += 1;
    }
    best.map(|i| candidates[i])
}

fn prev_char_boundary(text: &str, mut i: usize) -> usize {
    i -= 1;
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn fits_at_full(text: &str, cut: usize, max_tokens: usize, marker: &str, enc: Encoding) -> bool {
    let mut s = String::with_capacity(cut + marker.len());
    s.push_str(&text[..cut]);
    s.push_str(marker);
    count_till_limit(&s, enc, max_tokens).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARKER: &str = "\n\n[... skill content truncated for compaction; use Read on the skill path if you need the full text]";

    /// JavaScript's `content.slice(0, n)` on UTF-16, never splitting a surrogate pair.
    fn js_model(text: &str, max_tokens: usize, marker: &str) -> String {
        let units: Vec<u16> = text.encode_utf16().collect();
        if (units.len() + 2) / 4 <= max_tokens {
            return text.to_owned();
        }
        let m = marker.encode_utf16().count();
        let mut keep = (max_tokens * 4).saturating_sub(m).min(units.len());
        if keep > 0 && (0xD800..0xDC00).contains(&units[keep - 1]) {
            keep -= 1;
        }
        String::from_utf16(&units[..keep]).unwrap() + marker
    }

    #[test]
    fn marker_length_is_100_units() {
        assert_eq!(utf16_len(MARKER), 100);
    }

    #[test]
    fn rough_matches_claude_code() {
        let text = "x".repeat(30_000);
        let out = truncate_to_tokens(&text, 5000, MARKER, Counter::Rough).unwrap();
        assert_eq!(out.len(), 19_900 + MARKER.len());
        assert!(out.ends_with(MARKER));
        assert_eq!(estimate(&out, None), 5000);
        // Exactly at the budget: unchanged.
        let text = "x".repeat(20_001);
        assert!(matches!(
            truncate_to_tokens(&text, 5000, MARKER, Counter::Rough).unwrap(),
            Cow::Borrowed(_)
        ));
        for s in ["😀".repeat(100), "a😀".repeat(77), "日本語".repeat(99)] {
            for max in 26..60 {
                let got = truncate_to_tokens(&s, max, MARKER, Counter::Rough).unwrap();
                assert_eq!(got, js_model(&s, max, MARKER), "{max}");
            }
        }
    }

    #[test]
    fn prefix_units() {
        let s = "a😀b".repeat(1000);
        for k in [0, 1, 2, 3, 4, 5, 1999, 2000, 2001, 3999, 4000, 4001] {
            let n = prefix_len_for_units(s.as_bytes(), k);
            assert!(s.is_char_boundary(n));
            let u = utf16_len(&s[..n]);
            assert!(u <= k);
            assert!(u + 2 > k || n == s.len(), "k={k} u={u}");
        }
    }

    #[test]
    fn errors() {
        assert_eq!(check_budget(-1), Err(TokenError::NegativeBudget(-1)));
        assert!(matches!(
            truncate_to_tokens("abc", 10, MARKER, Counter::Rough),
            Err(TokenError::MarkerTooLarge {
                marker_tokens: 25,
                max_tokens: 10
            })
        ));
        assert!(
            truncate_to_tokens("abc", 10, MARKER, Counter::Exact(Encoding::O200kBase)).is_err()
        );
    }

    #[test]
    fn exact_never_over_budget() {
        let text = "The quick brown fox jumps over the lazy dog. ".repeat(200)
            + &"日本語のテキスト、".repeat(100)
            + &"    \n\n  spaces\t\t".repeat(50);
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let total = count(&text, enc);
            for max in [5, 30, 31, 100, 999, 1500, total - 1, total] {
                let out = truncate_to_tokens(&text, max, "\n[cut]", Counter::Exact(enc)).unwrap();
                assert!(count(&out, enc) <= max, "{max}");
                if max >= total {
                    assert_eq!(out, text);
                } else {
                    let kept = out.strip_suffix("\n[cut]").unwrap();
                    assert!(text.starts_with(kept));
                    // Longest: one more character would not fit.
                    let next =
                        &text[..kept.len() + text[kept.len()..].chars().next().unwrap().len_utf8()];
                    assert!(count(&format!("{next}\n[cut]"), enc) > max, "{max}");
                }
            }
        }
    }
}
