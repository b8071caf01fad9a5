//! The data-heavy parts of rendering a Read result and of measuring a file's budget cost.
//!
//! * [`number_lines`]: Claude Code's `addLineNumbers` — every line of the text, split on
//!   `\r?\n`, as `{n}\t{line}`, joined by `"\n"`; `""` for `""`. The surrounding strings
//!   (wrappers, reminders, markers) stay in the Python templates (`render.py`).
//! * [`json_utf16_len`]: the UTF-16 length of `JSON.stringify(text)` (quotes included) without
//!   building the JSON: `"` and `\` cost 2 units, `\b \f \n \r \t` 2, other C0 controls 6
//!   (`\u00xx`), astral characters 2, everything else its UTF-16 length (DEL, U+2028 and U+2029
//!   are not escaped by `JSON.stringify`). [`json_utf16_len_units`] does the same on UTF-16
//!   code units, where a lone surrogate costs 6 (well-formed `JSON.stringify` writes `\udxxx`).

/// Per-byte difference between the JSON-escaped UTF-16 length and the byte length, for
/// valid UTF-8: continuation bytes count 0 units (-1), 4-byte leads 2 units for 4 bytes (+1
/// with their three continuations at -1), escapes 2 or 6 units (+1 or +5).
const JSON_DELTA: [i8; 256] = {
    let mut t = [0i8; 256];
    let mut b = 0;
    while b < 0x20 {
        t[b] = 5;
        b += 1;
    }
    t[0x08] = 1;
    t[0x09] = 1;
    t[0x0A] = 1;
    t[0x0C] = 1;
    t[0x0D] = 1;
    t[b'"' as usize] = 1;
    t[b'\\' as usize] = 1;
    let mut c = 0x80;
    while c < 0xC0 {
        t[c] = -1;
        c += 1;
    }
    let mut f = 0xF0;
    while f < 0xF8 {
        t[f] = 1;
        f += 1;
    }
    t
};

/// True when no byte of `chunk` needs more than the plain one-unit count (printable ASCII
/// other than `"` and `\`). Written as a branch-free fold so that it vectorises.
#[inline]
fn plain_ascii(chunk: &[u8]) -> bool {
    chunk.iter().fold(true, |ok, &b| {
        ok & (0x20..0x80).contains(&b) & (b != b'"') & (b != b'\\')
    })
}

/// The UTF-16 length of `JSON.stringify(text)`, the two quotes included.
pub fn json_utf16_len(text: &str) -> usize {
    const CHUNK: usize = 64;
    let bytes = text.as_bytes();
    let mut extra: isize = 0;
    let mut chunks = bytes.chunks_exact(CHUNK);
    for chunk in &mut chunks {
        if !plain_ascii(chunk) {
            extra += chunk
                .iter()
                .map(|&b| isize::from(JSON_DELTA[b as usize]))
                .sum::<isize>();
        }
    }
    extra += chunks
        .remainder()
        .iter()
        .map(|&b| isize::from(JSON_DELTA[b as usize]))
        .sum::<isize>();
    // `extra` is at least -len * 3/4 (continuations), so the sum is positive.
    (bytes.len() as isize + extra) as usize + 2
}

/// [`json_utf16_len`] of a text given as UTF-16 code units, where lone surrogates may occur.
pub fn json_utf16_len_units(units: &[u16]) -> usize {
    let mut n = 2;
    let mut i = 0;
    while i < units.len() {
        let u = units[i];
        n += match u {
            0x22 | 0x5C | 0x08 | 0x09 | 0x0A | 0x0C | 0x0D => 2,
            0x00..=0x1F => 6,
            0xD800..=0xDBFF if matches!(units.get(i + 1), Some(0xDC00..=0xDFFF)) => {
                i += 1;
                2
            }
            0xD800..=0xDFFF => 6,
            _ => 1,
        };
        i += 1;
    }
    n
}

/// Decimal digits of `n` written into `buf`, returned as the used tail.
#[inline]
fn itoa(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[i..]
}

/// Appends `n` in decimal (a leading `-` when negative).
#[inline]
fn push_int(out: &mut Vec<u8>, n: i64) {
    let mut buf = [0u8; 20];
    if n < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(itoa(n.unsigned_abs(), &mut buf));
}

/// Byte offset of the next `\n` at or after `from`, or `None`. Reads eight bytes at a time.
#[inline]
fn find_newline(bytes: &[u8], from: usize) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = LO * b'\n' as u64;
    let mut i = from;
    while i + 8 <= bytes.len() {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[i..i + 8]);
        let x = u64::from_le_bytes(word) ^ NL;
        let found = x.wrapping_sub(LO) & !x & HI;
        if found != 0 {
            return Some(i + (found.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    bytes[i..].iter().position(|&b| b == b'\n').map(|p| i + p)
}

/// Claude Code's `addLineNumbers(text, start_line)`: see the module docs.
///
/// The line numbers are `start_line`, `start_line + 1`, …; they saturate at `i64::MAX`.
pub fn number_lines(text: &str, start_line: i64) -> String {
    if text.is_empty() {
        return String::new();
    }
    let bytes = text.as_bytes();
    let lines = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
    let last = start_line.saturating_add(lines as i64 - 1);
    let digits = 1 + start_line
        .unsigned_abs()
        .max(last.unsigned_abs())
        .max(1)
        .ilog10() as usize;
    let mut out = Vec::with_capacity(bytes.len() + lines * (digits + 2));
    let mut n = start_line;
    let mut start = 0;
    loop {
        let (end, next) = match find_newline(bytes, start) {
            Some(nl) => (nl, Some(nl + 1)),
            None => (bytes.len(), None),
        };
        let line_end = if next.is_some() && end > start && bytes[end - 1] == b'\r' {
            end - 1
        } else {
            end
        };
        push_int(&mut out, n);
        out.push(b'\t');
        out.extend_from_slice(&bytes[start..line_end]);
        match next {
            Some(s) => {
                out.push(b'\n');
                start = s;
                n = n.saturating_add(1);
            }
            None => break,
        }
    }
    // Only whole UTF-8 sequences of `text` are copied (cuts are at ASCII `\r`/`\n`), plus ASCII.
    String::from_utf8(out).expect("numbered text is UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reference: `re.split(r"\r?\n")` and an f-string per line.
    fn reference(text: &str, start: i64) -> String {
        if text.is_empty() {
            return String::new();
        }
        let mut lines: Vec<&str> = text.split('\n').collect();
        let last = lines.len() - 1;
        for (i, l) in lines.iter_mut().enumerate() {
            if i < last {
                *l = l.strip_suffix('\r').unwrap_or(l);
            }
        }
        lines
            .iter()
            .enumerate()
            .map(|(i, l)| format!("{}\t{}", start + i as i64, l))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn json_reference(text: &str) -> usize {
        let mut n = 2;
        for c in text.chars() {
            n += match c {
                '"' | '\\' | '\u{8}' | '\t' | '\n' | '\u{c}' | '\r' => 2,
                '\0'..='\u{1f}' => 6,
                _ => c.len_utf16(),
            };
        }
        n
    }

    #[test]
    fn numbering_examples() {
        assert_eq!(number_lines("", 1), "");
        assert_eq!(number_lines("a", 1), "1\ta");
        assert_eq!(number_lines("a\n", 1), "1\ta\n2\t");
        assert_eq!(number_lines("a\r\nb\rc\r\r\n", 9), "9\ta\n10\tb\rc\r\n11\t");
        assert_eq!(number_lines("\n\n", -1), "-1\t\n0\t\n1\t");
        assert_eq!(number_lines("x\r", 1), "1\tx\r");
        assert_eq!(number_lines("é😀\r\n中", 99), "99\té😀\n100\t中");
    }

    #[test]
    fn json_examples() {
        assert_eq!(json_utf16_len(""), 2);
        assert_eq!(
            json_utf16_len("a\"b\\\n\u{1}\u{7f}"),
            2 + 1 + 2 + 1 + 2 + 2 + 6 + 1
        );
        assert_eq!(json_utf16_len("é中😀\u{2028}"), 2 + 1 + 1 + 2 + 1);
        let long = "x".repeat(200) + "\"" + &"y".repeat(100);
        assert_eq!(json_utf16_len(&long), 2 + 301 + 1);
        assert_eq!(
            json_utf16_len_units(&[0x61, 0xD800, 0xD83D, 0xDE00, 0xDC00, 0x0A]),
            2 + 1 + 6 + 2 + 6 + 2
        );
    }

    proptest! {
        #[test]
        fn numbering_matches_reference(
            text in "([a-c\r\n\t é中😀]{0,40}|(\r?\n|\r|x){0,30})",
            start in -3i64..100_000,
        ) {
            prop_assert_eq!(number_lines(&text, start), reference(&text, start));
        }

        #[test]
        fn json_len_matches_reference(text in "\\PC{0,300}|[\u{0}-\u{7f}é😀\u{2028}]{0,300}") {
            prop_assert_eq!(json_utf16_len(&text), json_reference(&text));
            let units: Vec<u16> = text.encode_utf16().collect();
            prop_assert_eq!(json_utf16_len_units(&units), json_reference(&text));
        }
    }
}
