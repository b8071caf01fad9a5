//! Property tests of the rough estimate and of truncation (both counters).

use std::borrow::Cow;

use _core::tokens::{self, Counter, Encoding};
use _core::truncate::{self, Cut};
use proptest::prelude::*;

/// The char-based reference: JavaScript `.length` is the UTF-16 length.
fn reference_units(s: &str) -> usize {
    s.encode_utf16().count()
}

/// `Math.round(units / bpt)`, computed in floating point like JavaScript.
fn reference_estimate(s: &str, bpt: f64) -> usize {
    (reference_units(s) as f64 / bpt + 0.5).floor() as usize
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-z ]{0,200}",
        "[\\u{3040}-\\u{30ff}\\u{4e00}-\\u{4e80}、。 ]{0,120}",
        "[a😀\\u{1F600}-\\u{1F64F}\\u{10000}-\\u{10010}é ]{0,120}",
        proptest::collection::vec(
            prop_oneof![
                Just("def f(x):\n".to_owned()),
                Just("    return x\n".to_owned()),
                Just("\n\n".to_owned()),
                Just("   ".to_owned()),
                Just("😀".to_owned()),
                Just("日本語".to_owned()),
                Just("don't".to_owned()),
                Just("<|endoftext|>".to_owned()),
                "[A-Za-z0-9]{1,12}",
            ],
            0..60
        )
        .prop_map(|v| v.concat()),
    ]
}

const MARKERS: [&str; 5] = ["", "…", "[cut]", "\n\n[... truncated 😀]", " <|endoftext|>"];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn utf16_len_matches_reference(s in text()) {
        prop_assert_eq!(tokens::utf16_len(&s), reference_units(&s));
        prop_assert_eq!(tokens::utf16_len_bytes(s.as_bytes()), reference_units(&s));
        prop_assert_eq!(tokens::astral_count(s.as_bytes()), s.chars().filter(|c| c.len_utf16() == 2).count());
        prop_assert_eq!(tokens::char_count_valid(s.as_bytes()), s.chars().count());
    }

    #[test]
    fn estimate_matches_reference(s in text(), ext in prop::sample::select(vec!["", "json", ".JSONL", "jsonc", "py", "jsonx"])) {
        let bpt = if matches!(ext.trim_start_matches('.').to_ascii_lowercase().as_str(), "json" | "jsonl" | "jsonc") { 2.0 } else { 4.0 };
        prop_assert_eq!(tokens::estimate(&s, Some(ext)), reference_estimate(&s, bpt));
        prop_assert_eq!(tokens::estimate_bytes(s.as_bytes(), Some(ext)), reference_estimate(&s, bpt));
    }

    #[test]
    fn invalid_utf8_counts_as_lossy_decode(b in proptest::collection::vec(any::<u8>(), 0..300)) {
        let lossy = String::from_utf8_lossy(&b);
        prop_assert_eq!(tokens::utf16_len_bytes(&b), reference_units(&lossy));
    }

    #[test]
    fn rough_truncation_invariants(s in text(), max in 0usize..120, m in 0usize..MARKERS.len()) {
        let marker = MARKERS[m];
        prop_assume!(tokens::estimate(marker, None) <= max);
        let out = truncate::truncate_to_tokens(&s, max, marker, Counter::Rough).unwrap();
        check_invariants(&s, &out, matches!(out, Cow::Borrowed(_)), marker, max, |t| tokens::estimate(t, None))?;
        if let Cow::Owned(o) = &out {
            // The exact reference rule: the longest prefix of at most 4 * max - |marker| units.
            let kept = &o[..o.len() - marker.len()];
            let keep = (4 * max).saturating_sub(reference_units(marker));
            prop_assert!(reference_units(kept) <= keep);
            let next = s[kept.len()..].chars().next().unwrap();
            prop_assert!(reference_units(kept) + next.len_utf16() > keep);
        }
    }

    #[test]
    fn prefix_for_units_is_longest(s in text(), k in 0usize..400) {
        let n = truncate::prefix_len_for_units(s.as_bytes(), k);
        prop_assert!(s.is_char_boundary(n));
        prop_assert!(reference_units(&s[..n]) <= k);
        if let Some(c) = s[n..].chars().next() {
            prop_assert!(reference_units(&s[..n]) + c.len_utf16() > k);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn exact_truncation_invariants(
        s in text(),
        max in 0usize..80,
        m in 0usize..MARKERS.len(),
        cl100k in any::<bool>(),
    ) {
        let enc = if cl100k { Encoding::Cl100kBase } else { Encoding::O200kBase };
        let marker = MARKERS[m];
        prop_assume!(tokens::count(marker, enc) <= max);
        let out = truncate::truncate_to_tokens(&s, max, marker, Counter::Exact(enc)).unwrap();
        check_invariants(&s, &out, matches!(out, Cow::Borrowed(_)), marker, max, |t| tokens::count(t, enc))?;
        if let Cow::Owned(o) = &out {
            // Locally longest: one more character would not fit.
            let kept = &o[..o.len() - marker.len()];
            let next = s[kept.len()..].chars().next().unwrap();
            let longer = format!("{kept}{next}{marker}");
            prop_assert!(tokens::count(&longer, enc) > max);
        }
        prop_assert_eq!(
            tokens::count_till_limit(&s, enc, max),
            Some(tokens::count(&s, enc)).filter(|&n| n <= max)
        );
    }
}

fn check_invariants(
    s: &str,
    out: &str,
    unchanged: bool,
    marker: &str,
    max: usize,
    measure: impl Fn(&str) -> usize,
) -> Result<(), TestCaseError> {
    prop_assert!(measure(out) <= max, "over budget");
    match unchanged {
        true => {
            prop_assert_eq!(out, s);
            prop_assert!(measure(s) <= max);
        }
        false => {
            let o = out;
            prop_assert!(measure(s) > max);
            prop_assert!(o.ends_with(marker));
            let kept = &o[..o.len() - marker.len()];
            prop_assert!(s.starts_with(kept));
            prop_assert!(kept.len() < s.len());
        }
    }
    Ok(())
}

#[test]
fn cut_apply() {
    assert_eq!(Cut::Unchanged.apply("abc", "…"), "abc");
    assert_eq!(Cut::At(1).apply("abc", "…"), "a…");
}
