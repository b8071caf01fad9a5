//! The ASCII fast path of the pre-tokeniser against `bpe-openai`'s regex splitter.
//!
//! For o200k_base both implement tiktoken's pattern and must split identically. For cl100k_base
//! tiktoken's current pattern matches trailing whitespace with `\s++$` before `\s*[\r\n]`, where
//! the regex splitter has them the other way round, so there only the counts are compared.

use _core::tokens::{self, Encoding};
use proptest::prelude::*;

fn regex_pieces(text: &str, enc: Encoding) -> Vec<&str> {
    enc.tokenizer().split(text).collect()
}

fn ascii_heavy() -> impl Strategy<Value = String> {
    let atoms = prop_oneof![
        Just(" ".to_owned()),
        Just("  ".to_owned()),
        // Runs the scanner skips eight spaces at a time (indentation).
        Just(" ".repeat(8)),
        Just(" ".repeat(19)),
        Just("\n        ".to_owned()),
        Just("\n".to_owned()),
        Just("\r\n".to_owned()),
        Just("\t".to_owned()),
        Just("\x0b".to_owned()),
        Just("\x0c".to_owned()),
        Just("'".to_owned()),
        Just("'s".to_owned()),
        Just("'LL".to_owned()),
        Just("'Re".to_owned()),
        Just("'ve".to_owned()),
        Just("/".to_owned()),
        Just("//".to_owned()),
        Just("é".to_owned()),
        Just("日本".to_owned()),
        Just("ſ".to_owned()),
        Just("\u{a0}".to_owned()),
        Just("\u{85}".to_owned()),
        Just("\u{2028}".to_owned()),
        Just("\u{301}".to_owned()),
        Just("²".to_owned()),
        Just("😀".to_owned()),
        "[a-zA-Z]{1,8}",
        "[0-9]{1,5}",
        "[!-/:-@\\[-`{-~]{1,4}",
    ];
    proptest::collection::vec(atoms, 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn o200k_pieces_equal_regex(s in ascii_heavy()) {
        let ours: Vec<&str> = tokens::pieces(&s, Encoding::O200kBase).collect();
        prop_assert_eq!(ours, regex_pieces(&s, Encoding::O200kBase));
    }

    #[test]
    fn cl100k_counts_equal_regex(s in ascii_heavy()) {
        let tok = Encoding::Cl100kBase.tokenizer();
        prop_assert_eq!(tokens::count(&s, Encoding::Cl100kBase), tok.count(s.as_str()));
        let ours: String = tokens::pieces(&s, Encoding::Cl100kBase).collect();
        prop_assert_eq!(ours, s.clone());
    }

    #[test]
    fn any_text_counts_equal(s in any::<String>()) {
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            prop_assert_eq!(tokens::count(&s, enc), enc.tokenizer().count(s.as_str()));
        }
    }
}

#[test]
fn cl100k_pieces_equal_regex_except_trailing_whitespace() {
    let enc = Encoding::Cl100kBase;
    for s in [
        "def f(x):\n    return x  # don't\n",
        "HTTPServer's 123456 'll 'LL 'Re x'd",
        "a  b\t\tc \n\n d",
        "(abc) [def] {ghi} <|endoftext|>",
    ] {
        let ours: Vec<&str> = tokens::pieces(s, enc).collect();
        assert_eq!(ours, regex_pieces(s, enc), "{s:?}");
    }
}
