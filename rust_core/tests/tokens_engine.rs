//! Our BPE tables and pre-tokeniser against `bpe-openai` (itself checked against tiktoken by
//! the Python tests): the BPE on raw bytes, piece by piece, and whole counts on text built to
//! hit each fast path and its fallbacks (ASCII vs not, CJK, emoji, marks and the odd letter
//! categories, long runs, contractions, the piece-count cache).

use _core::fastcount;
use _core::tokens::{self, Encoding};
use proptest::prelude::*;

const ENCODINGS: [Encoding; 2] = [Encoding::O200kBase, Encoding::Cl100kBase];

fn engine_count(enc: Encoding, bytes: &[u8]) -> usize {
    let mut scratch = _core::bpe_engine::Scratch::default();
    enc.engine().piece(bytes, 0, bytes.len(), &mut scratch)
}

#[test]
fn every_token_is_one_token() {
    for enc in ENCODINGS {
        let bpe = &enc.tokenizer().bpe;
        for id in 0..bpe.num_tokens() as u32 {
            let t = bpe.token_bytes(id);
            assert_eq!(engine_count(enc, t), 1, "{enc} token {id} {t:?}");
        }
    }
}

#[test]
fn long_pieces_take_the_heap_bitfield() {
    // Longer than the stack bitfield (128 positions) and than the one-token table's keys.
    for enc in ENCODINGS {
        for s in [
            "a".repeat(5000),
            "ab".repeat(300),
            "🙂".repeat(100),
            "日本語のテキスト".repeat(40),
            " ".repeat(1000),
            "\n".repeat(700),
            "0".repeat(900),
            "-=".repeat(200),
        ] {
            assert_eq!(
                engine_count(enc, s.as_bytes()),
                enc.tokenizer().bpe.count(s.as_bytes()),
                "{enc} {}",
                &s[..20]
            );
            assert_eq!(tokens::count(&s, enc), enc.tokenizer().count(s.as_str()));
        }
    }
}

fn unicode_heavy() -> impl Strategy<Value = String> {
    let atoms = prop_oneof![
        Just(" ".to_owned()),
        Just("   ".to_owned()),
        Just("\n\n".to_owned()),
        Just("\r\n".to_owned()),
        Just("\t \t".to_owned()),
        Just("'s".to_owned()),
        Just("'ſ".to_owned()),
        Just("'LL".to_owned()),
        Just("'vE".to_owned()),
        Just("'".to_owned()),
        Just("/".to_owned()),
        Just("\u{301}".to_owned()),
        Just("\u{94d}".to_owned()),
        Just("ǅ".to_owned()),
        Just("ʰ".to_owned()),
        Just("ß".to_owned()),
        Just("Σ".to_owned()),
        Just("²³".to_owned()),
        Just("١٢٣٤".to_owned()),
        Just("１２".to_owned()),
        Just("\u{a0}".to_owned()),
        Just("\u{2028}".to_owned()),
        Just("\u{3000}".to_owned()),
        Just("\u{85}".to_owned()),
        Just("«»".to_owned()),
        Just("，。！".to_owned()),
        Just("😀".to_owned()),
        Just("👨‍👩‍👧".to_owned()),
        Just("🇫🇷".to_owned()),
        Just("\u{10ffff}".to_owned()),
        "[a-zA-Z]{1,12}",
        "[0-9]{1,7}",
        "[!-/:-@\\[-`{-~]{1,4}",
        "[\u{4e00}-\u{4fff}]{1,12}",
        "[\u{3040}-\u{30ff}]{1,6}",
        "[\u{ac00}-\u{ad00}]{1,6}",
        "[\u{0400}-\u{04ff}]{1,8}",
        "[\u{0590}-\u{06ff}]{1,8}",
        "\\PC{1,6}",
    ];
    proptest::collection::vec(atoms, 0..30).prop_map(|v| v.concat())
}

/// Whether `t` has a three-byte character's lead byte without both of its continuation bytes
/// after it (a token that ends inside such a character).
fn ends_inside_a_char(t: &[u8]) -> bool {
    t.iter().enumerate().any(|(i, &b)| {
        (0xE0..=0xEF).contains(&b)
            && !(t.len() >= i + 3 && t[i + 1] & 0xC0 == 0x80 && t[i + 2] & 0xC0 == 0x80)
    })
}

#[test]
fn tokens_ending_inside_a_character_walk_byte_by_byte() {
    // The trie steps over a whole three-byte character at once; under a node where a token
    // ends inside one it must still find that token byte by byte (bpe_engine.rs
    // `has_partial`). Each such token between CJK characters, and twice in a row.
    for enc in ENCODINGS {
        let bpe = &enc.tokenizer().bpe;
        let mut seen = 0;
        for id in 0..bpe.num_tokens() as u32 {
            let t = bpe.token_bytes(id);
            if !ends_inside_a_char(t) {
                continue;
            }
            seen += 1;
            for b in [
                ["中".as_bytes(), t, "文字".as_bytes()].concat(),
                [t, t, "語".as_bytes()].concat(),
            ] {
                assert_eq!(
                    engine_count(enc, &b),
                    bpe.count(&b),
                    "{enc} token {id} {b:?}"
                );
            }
        }
        assert!(
            seen > 100,
            "{enc}: only {seen} tokens end inside a character"
        );
    }
}

/// Cases of the property tests below: 1,500, or `FUZZ_CASES` to search longer (300,000 ran
/// clean when fastcount's guard went in).
fn cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500)
}

/// What the property test found fastokens 0.3.5 counting wrong (an apostrophe before `ſ`, a
/// case-folded `'s`): such a text is left to our own tables, and counts right at any length.
#[test]
fn a_long_s_contraction_is_counted_by_our_tables() {
    for text in [
        "\u{1b170}'\u{17f}'vEBEa".to_owned(),
        "We'\u{17f} go. ".repeat(20),
    ] {
        for enc in ENCODINGS {
            assert_eq!(fastcount::count_in_parts(&text, enc, usize::MAX / 2), None);
            assert_eq!(
                tokens::count(&text, enc),
                enc.tokenizer().count(text.as_str()),
                "{enc}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn bpe_of_any_bytes_equals_bpe_openai(b in proptest::collection::vec(any::<u8>(), 1..60)) {
        for enc in ENCODINGS {
            prop_assert_eq!(engine_count(enc, &b), enc.tokenizer().bpe.count(&b));
        }
    }

    #[test]
    fn unicode_heavy_counts_equal_bpe_openai(s in unicode_heavy()) {
        for enc in ENCODINGS {
            prop_assert_eq!(tokens::count(&s, enc), enc.tokenizer().count(s.as_str()), "{}", enc);
            // The cache-less path (used by truncation) agrees with the cached one.
            let by_piece: usize = tokens::piece_counts(&s, enc).map(|(_, n)| n).sum();
            prop_assert_eq!(by_piece, tokens::count(&s, enc));
            // fastokens' tables (the counter of longer texts) agree, in one call and cut into
            // parts at every newline-then-letter point the parts' size allows.
            let expected = enc.tokenizer().count(s.as_str());
            // (None: a text it counts wrong, left to our tables: fastcount's LONG_S_CONTRACTION.)
            for part in [8, 64, usize::MAX / 2] {
                let got = fastcount::count_in_parts(&s, enc, part);
                prop_assert_eq!(got.unwrap_or_else(|| tokens::count_own(&s, enc)), expected, "{} {}", enc, part);
                prop_assert!(got.is_some() || s.contains("'\u{17f}"), "{} {}", enc, part);
            }
        }
        let ours: Vec<&str> = tokens::pieces(&s, Encoding::O200kBase).collect();
        let regex: Vec<&str> = Encoding::O200kBase.tokenizer().split(&s).collect();
        prop_assert_eq!(ours, regex);
    }
}

/// A lower-case word unique to `i` (its decimal digits as the letters a to j).
fn letters(i: usize) -> String {
    i.to_string()
        .bytes()
        .map(|d| (b'a' + d - b'0') as char)
        .collect()
}

/// The text of `pieces` in three orders (forward, backward, strided by `stride`), each counted
/// twice with the caches, equals bpe-openai's count; so does the cache-less path.
fn assert_cached_counts_agree(pieces: &[String], stride: usize) {
    let forward = pieces.concat();
    let backward: String = pieces.iter().rev().map(String::as_str).collect();
    let strided: String = (0..pieces.len())
        .map(|i| pieces[i * stride % pieces.len()].as_str())
        .collect();
    for enc in ENCODINGS {
        let expected = enc.tokenizer().count(forward.as_str());
        for _ in 0..2 {
            for text in [&forward, &backward, &strided] {
                assert_eq!(tokens::count(text, enc), expected, "{enc}");
            }
        }
        let by_piece: usize = tokens::piece_counts(&forward, enc).map(|(_, n)| n).sum();
        assert_eq!(by_piece, expected, "{enc}");
    }
}

#[test]
fn long_pieces_hit_their_cache_with_the_same_counts() {
    // Pieces of 17 to ~600 bytes (ASCII and CJK), distinct enough to wrap the long-piece
    // cache's 256 KB ring many times and overflow its slots: hits, swaps, entries whose bytes
    // the ring overwrote, and a piece over 1024 bytes (never cached).
    let mut pieces: Vec<String> = (0..6_000)
        .map(|i| match i % 3 {
            0 => format!(" {}{}", "q".repeat(17 + i % 150), letters(i)),
            1 => format!(" {}{}", "漢字".repeat(3 + i % 90), letters(i)),
            _ => format!("{}{}", " ".repeat(17 + i % 40), letters(i)),
        })
        .collect();
    pieces.push(format!(" {}", "z".repeat(1500)));
    assert_cached_counts_agree(&pieces, 4099);
}

#[test]
fn repeated_multi_token_pieces_hit_the_cache_with_the_same_counts() {
    // Many distinct multi-token words: the short-piece cache's hits in either way of a set,
    // its swaps and its evictions (2^16 slots, more words than that).
    let words: Vec<String> = (0..150_000)
        .map(|i| format!(" zq{}xv", letters(i)))
        .collect();
    assert_cached_counts_agree(&words, 7919);
}
