//! Our BPE tables and pre-tokeniser against `bpe-openai` (itself checked against tiktoken by
//! the Python tests): the BPE on raw bytes, piece by piece, and whole counts on text built to
//! hit each fast path and its fallbacks (ASCII vs not, CJK, emoji, marks and the odd letter
//! categories, long runs, contractions, the piece-count cache).

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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

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
        }
        let ours: Vec<&str> = tokens::pieces(&s, Encoding::O200kBase).collect();
        let regex: Vec<&str> = Encoding::O200kBase.tokenizer().split(&s).collect();
        prop_assert_eq!(ours, regex);
    }
}

#[test]
fn repeated_multi_token_pieces_hit_the_cache_with_the_same_counts() {
    // Many distinct multi-token words, each seen several times and in changing orders: the
    // cache's hits in either way of a set, its swaps and its evictions (2^15 slots, more words
    // than that) must all give the uncached counts.
    let words: Vec<String> = (0..80_000).map(|i| format!(" zq{i}xv")).collect();
    let forward = words.concat();
    let backward: String = words.iter().rev().map(String::as_str).collect();
    let strided: String = (0..words.len())
        .map(|i| words[i * 7919 % words.len()].as_str())
        .collect();
    for enc in ENCODINGS {
        let expected = enc.tokenizer().count(forward.as_str());
        for _ in 0..2 {
            for text in [&forward, &backward, &strided] {
                assert_eq!(tokens::count(text, enc), expected);
            }
        }
        let by_piece: usize = tokens::piece_counts(&forward, enc).map(|(_, n)| n).sum();
        assert_eq!(by_piece, expected);
    }
}
