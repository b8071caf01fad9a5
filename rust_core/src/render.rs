//! The data-heavy parts of rendering a Read result and of measuring a file's budget cost.
//!
//! * [`number_lines`]: Claude Code's `addLineNumbers` — every line of the text, split on
//!   `\r?\n`, as `{n}\t{line}`, joined by `"\n"`; `""` for `""`. The surrounding strings
//!   (wrappers, reminders, markers) stay in the Python templates (`render.py`).
//! * [`escape_reminder_tags`]: the `<` of each closing `</system-reminder` tag (with `opening`,
//!   of each opening one too) written as `&lt;`, so that inserted text cannot end (or open) the
//!   `<system-reminder>` around it. Spaces may sit around the `/` and the case is free, as
//!   Python's `re.IGNORECASE` and `\s` have them (`ſ` is an `s`, `İ` and `ı` are `i`).
//! * [`json_utf16_len`]: the UTF-16 length of `JSON.stringify(text)` (quotes included) without
//!   building the JSON: `"` and `\` cost 2 units, `\b \f \n \r \t` 2, other C0 controls 6
//!   (`\u00xx`), astral characters 2, everything else its UTF-16 length (DEL, U+2028 and U+2029
//!   are not escaped by `JSON.stringify`). [`json_utf16_len_units`] does the same on UTF-16
//!   code units, where a lone surrogate costs 6 (well-formed `JSON.stringify` writes `\udxxx`).

/// How many bytes of `chunk` (at most 255 bytes) satisfy `f`; vectorises.
#[inline(always)]
fn count_u8(chunk: &[u8], f: impl Fn(u8) -> bool) -> u8 {
    chunk
        .iter()
        .fold(0u8, |n, &b| n.wrapping_add(u8::from(f(b))))
}

/// The difference between the JSON-escaped UTF-16 length of `chunk` (valid UTF-8 pieces, at
/// most 255 bytes) and its byte length: continuation bytes count 0 units (-1), 4-byte leads 2
/// units for 4 bytes (+1, with their three continuations at -1), the short escapes `"` `\\`
/// `\b` `\f` `\n` `\r` `\t` 2 units (+1), other C0 controls 6 (`\u00xx`, +5).
#[inline]
fn json_extra(chunk: &[u8]) -> isize {
    let plain = |b: u8| (0x20..0x80).contains(&b) && b != b'"' && b != b'\\';
    if count_u8(chunk, plain) as usize == chunk.len() {
        return 0;
    }
    let ctrl = count_u8(chunk, |b| b < 0x20);
    let short = count_u8(chunk, |b| matches!(b, 0x08 | 0x09 | 0x0A | 0x0C | 0x0D));
    let quote = count_u8(chunk, |b| b == b'"' || b == b'\\');
    let cont = count_u8(chunk, |b| b & 0xC0 == 0x80);
    let lead4 = count_u8(chunk, |b| b >= 0xF0);
    5 * isize::from(ctrl) - 4 * isize::from(short) + isize::from(quote) - isize::from(cont)
        + isize::from(lead4)
}

/// The UTF-16 length of `JSON.stringify(text)`, the two quotes included.
pub fn json_utf16_len(text: &str) -> usize {
    let extra: isize = text.as_bytes().chunks(128).map(json_extra).sum();
    // `extra` is at least -len * 3/4 (continuations), so the sum is positive.
    (text.len() as isize + extra) as usize + 2
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

/// Byte offset of the next `\n` at or after `from`, or `None`. Tests 32 bytes at a time with a
/// branch-free fold (vectorised), then finds the byte in the chunk that has one.
#[inline]
fn find_newline(bytes: &[u8], from: usize) -> Option<usize> {
    const CHUNK: usize = 32;
    let mut i = from;
    while i + CHUNK <= bytes.len() {
        let chunk = &bytes[i..i + CHUNK];
        if chunk.iter().fold(false, |any, &b| any | (b == b'\n')) {
            break;
        }
        i += CHUNK;
    }
    bytes[i..].iter().position(|&b| b == b'\n').map(|p| i + p)
}

/// The number of `\n` bytes (u8 counters per 255-byte chunk, so the count vectorises).
fn count_newlines(bytes: &[u8]) -> usize {
    bytes
        .chunks(255)
        .map(|c| usize::from(c.iter().fold(0u8, |n, &b| n + u8::from(b == b'\n'))))
        .sum()
}

/// A line number kept as ASCII digits and incremented in place (no division per line).
struct Decimal {
    buf: [u8; 20],
    start: usize,
}

impl Decimal {
    fn new(n: u64) -> Self {
        let mut buf = [b'0'; 20];
        let len = itoa(n, &mut buf).len();
        Decimal {
            buf,
            start: 20 - len,
        }
    }

    #[inline]
    fn digits(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    /// Adds one; false when the number no longer fits (u64::MAX has 20 digits).
    #[inline]
    fn increment(&mut self) -> bool {
        let mut i = self.buf.len();
        while i > self.start {
            i -= 1;
            if self.buf[i] == b'9' {
                self.buf[i] = b'0';
            } else {
                self.buf[i] += 1;
                return true;
            }
        }
        if self.start == 0 {
            return false;
        }
        self.start -= 1;
        self.buf[self.start] = b'1';
        true
    }
}

/// Claude Code's `addLineNumbers(text, start_line)`: see the module docs.
///
/// The line numbers are `start_line`, `start_line + 1`, …; they saturate at `i64::MAX`.
pub fn number_lines(text: &str, start_line: i64) -> String {
    if text.is_empty() {
        return String::new();
    }
    let bytes = text.as_bytes();
    let lines = count_newlines(bytes) + 1;
    let last = start_line.saturating_add(lines as i64 - 1);
    let digits = 1 + start_line
        .unsigned_abs()
        .max(last.unsigned_abs())
        .max(1)
        .ilog10() as usize;
    let mut out = Vec::with_capacity(bytes.len() + lines * (digits + 2));
    // Non-negative numbers (every real Read) count up in ASCII; others format each number.
    let mut decimal = u64::try_from(start_line).ok().map(Decimal::new);
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
        match &decimal {
            Some(d) => out.extend_from_slice(d.digits()),
            None => push_int(&mut out, n),
        }
        out.push(b'\t');
        out.extend_from_slice(&bytes[start..line_end]);
        match next {
            Some(s) => {
                out.push(b'\n');
                start = s;
                if n < i64::MAX {
                    n += 1;
                    if let Some(d) = &mut decimal {
                        if !d.increment() {
                            decimal = None;
                        }
                    } else if n >= 0 {
                        decimal = Some(Decimal::new(n as u64));
                    }
                } else {
                    decimal = None; // saturated: i64::MAX from now on
                }
            }
            None => break,
        }
    }
    // Only whole UTF-8 sequences of `text` are copied (cuts are at ASCII `\r`/`\n`), plus ASCII.
    String::from_utf8(out).expect("numbered text is UTF-8")
}

/// Python's `str.isspace()` (what `\s` matches in a `str` pattern): Unicode White_Space and the
/// four information separators U+001C..U+001F.
#[inline]
fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Whether `c` equals the ASCII lowercase letter `want` ignoring case, as Python's
/// `re.IGNORECASE` does for the letters of "system-reminder".
#[inline]
fn ignorecase_eq(c: char, want: u8) -> bool {
    if c.is_ascii() {
        return (c as u8).to_ascii_lowercase() == want;
    }
    match want {
        b's' => c == '\u{17f}',
        b'i' => c == '\u{130}' || c == '\u{131}',
        _ => false,
    }
}

/// Whether `rest` (the text after a `<`) goes on as the rest of a reminder tag: spaces, a `/`
/// (required unless `opening`), spaces, then `system-reminder` in any case.
fn tag_follows(rest: &str, opening: bool) -> bool {
    let mut chars = rest.chars().peekable();
    while chars.next_if(|&c| is_space(c)).is_some() {}
    if chars.next_if_eq(&'/').is_some() {
        while chars.next_if(|&c| is_space(c)).is_some() {}
    } else if !opening {
        return false;
    }
    b"system-reminder".iter().all(|&want| match chars.next() {
        Some(c) => ignorecase_eq(c, want),
        None => false,
    })
}

/// `text` with the `<` of every closing reminder tag (and with `opening`, every opening one)
/// written as `&lt;`; `None` when there is none (the caller keeps its text, no copy).
pub fn escape_reminder_tags(text: &str, opening: bool) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    for at in memchr::memchr_iter(b'<', bytes) {
        if tag_follows(&text[at + 1..], opening) {
            let o = out.get_or_insert_with(|| String::with_capacity(text.len() + 16));
            o.push_str(&text[copied..at]);
            o.push_str("&lt;");
            copied = at + 1;
        }
    }
    let mut o = out?;
    o.push_str(&text[copied..]);
    Some(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn escaping_examples() {
        assert_eq!(escape_reminder_tags("plain text", false), None);
        assert_eq!(escape_reminder_tags("a < b", false), None);
        assert_eq!(
            escape_reminder_tags("x</system-reminder>y", false).as_deref(),
            Some("x&lt;/system-reminder>y")
        );
        assert_eq!(
            escape_reminder_tags("< / SYSTEM-Reminder >", false).as_deref(),
            Some("&lt; / SYSTEM-Reminder >")
        );
        assert_eq!(escape_reminder_tags("<system-reminder>", false), None);
        assert_eq!(
            escape_reminder_tags("<system-reminder>", true).as_deref(),
            Some("&lt;system-reminder>")
        );
        assert_eq!(
            escape_reminder_tags("<\u{a0}/\u{1c}\u{17f}ystem-remınder", false).as_deref(),
            Some("&lt;\u{a0}/\u{1c}\u{17f}ystem-remınder")
        );
        assert_eq!(escape_reminder_tags("</system-remind", false), None);
        assert_eq!(
            escape_reminder_tags("é</system-reminder>中</system-reminder>", false).as_deref(),
            Some("é&lt;/system-reminder>中&lt;/system-reminder>")
        );
    }

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
        assert_eq!(number_lines("a\nb\nc", 9), "9\ta\n10\tb\n11\tc");
        assert_eq!(number_lines("a\nb\nc", -2), "-2\ta\n-1\tb\n0\tc");
        let max = i64::MAX;
        assert_eq!(
            number_lines("a\nb\nc", max - 1),
            format!("{}\ta\n{max}\tb\n{max}\tc", max - 1)
        );
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
