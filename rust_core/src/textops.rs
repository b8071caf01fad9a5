//! The text operations a file's view is made of ([`crate::fileview`] renders with them): the
//! data-heavy parts of a Read result and of measuring a file's budget cost.
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

use std::borrow::Cow;

use crate::scan::{count_newlines, Newlines};

/// What one byte of valid UTF-8 adds to the JSON-escaped UTF-16 length over the byte length:
/// continuation bytes count 0 units (-1), 4-byte leads 2 units for 4 bytes (+1, with their
/// three continuations at -1), the short escapes `"` `\\` `\b` `\f` `\n` `\r` `\t` 2 units
/// (+1), other C0 controls 6 (`\u00xx`, +5).
#[inline]
fn json_weight(b: u8) -> isize {
    match b {
        0x08 | 0x09 | 0x0A | 0x0C | 0x0D | b'"' | b'\\' => 1,
        0x00..=0x1F => 5,
        0x80..=0xBF => -1,
        0xF0..=0xFF => 1,
        _ => 0,
    }
}

/// The sum of [`json_weight`] over `bytes`: with AVX2 where the CPU has it, else the baseline
/// vectorisation of the same loop.
fn json_extra(bytes: &[u8]) -> isize {
    #[cfg(target_arch = "x86_64")]
    {
        if bytes.len() >= 256 && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { json_extra_avx2(bytes) };
        }
    }
    json_extra_lanes(bytes)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn json_extra_avx2(bytes: &[u8]) -> isize {
    // The same code; compiled for AVX2 it takes 32 bytes per instruction.
    json_extra_lanes(bytes)
}

/// [`json_weight`] + 4 (3..=9), branch-free so that a loop over bytes vectorises.
#[inline(always)]
fn json_weight_biased(b: u8) -> u8 {
    let ctrl = u8::from(b < 0x20);
    let short = u8::from(b.wrapping_sub(8) < 3) | u8::from(b.wrapping_sub(12) < 2);
    let quote = u8::from(b == b'"') | u8::from(b == b'\\');
    let cont = u8::from(b & 0xC0 == 0x80);
    let lead4 = u8::from(b >= 0xF0);
    (4 + 5 * ctrl + quote + lead4).wrapping_sub(4 * short + cont)
}

const JSON_LANES: usize = 64;

/// [`json_weight_biased`] summed over `block` (whole vectors of [`JSON_LANES`], 28 at most).
#[inline(always)]
fn json_lanes(block: &[u8]) -> usize {
    let mut acc = [0u8; JSON_LANES];
    for v in block.chunks_exact(JSON_LANES) {
        for i in 0..JSON_LANES {
            acc[i] = acc[i].wrapping_add(json_weight_biased(v[i]));
        }
    }
    acc.iter().map(|&x| usize::from(x)).sum()
}

/// [`json_extra`] summed in 64 byte lanes (28 steps at most: 28 * 9 fits a byte).
#[inline(always)]
fn json_extra_lanes(bytes: &[u8]) -> isize {
    const STEPS: usize = 28;
    let mut total = 0usize;
    let mut blocks = bytes.chunks_exact(JSON_LANES * STEPS);
    for block in &mut blocks {
        total += json_lanes(block);
    }
    let rest = blocks.remainder();
    let whole = rest.len() / JSON_LANES * JSON_LANES;
    total += json_lanes(&rest[..whole]);
    // Less the bias of 4 per byte counted, plus the tail byte by byte.
    let counted = bytes.len() - rest.len() + whole;
    total as isize - 4 * counted as isize
        + rest[whole..].iter().map(|&b| json_weight(b)).sum::<isize>()
}

/// The UTF-16 length of `JSON.stringify(text)`, the two quotes included.
pub fn json_utf16_len(text: &str) -> usize {
    // The extra is at least -len * 3/4 (continuations), so the sum is positive.
    (text.len() as isize + json_extra(text.as_bytes())) as usize + 2
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
    let mut out = Vec::new();
    number_lines_into(text, start_line, &mut out);
    // Only whole UTF-8 sequences of `text` are copied (cuts are at ASCII `\r`/`\n`), plus ASCII.
    String::from_utf8(out).expect("numbered text is UTF-8")
}

/// The length in bytes of `number_lines(text, start_line)` for `start_line >= 0`, without
/// building it: each line gains its number and a tab, and loses the `\r` before its `\n`.
pub fn numbered_len(text: &str, start_line: u64) -> usize {
    if text.is_empty() {
        return 0;
    }
    numbered_len_counted(text, start_line, count_newlines(text.as_bytes()) + 1)
}

/// [`numbered_len`] of a non-empty text of `lines` lines (its `\n`s + 1, which the caller
/// knows).
pub fn numbered_len_counted(text: &str, start_line: u64, lines: usize) -> usize {
    let bytes = text.as_bytes();
    let crlf = if memchr::memchr(b'\r', bytes).is_some() {
        memchr::memmem::find_iter(bytes, b"\r\n").count()
    } else {
        0
    };
    let last = start_line.saturating_add(lines as u64 - 1);
    bytes.len() - crlf + lines + digits_between(start_line, last)
}

/// The room [`number_lines_hinted`] asks for past the output, at most: the text, a number and
/// a tab per line, and room for its last 16-byte copy (reserved, nothing is reallocated).
pub fn numbering_room(text_len: usize, start_line: u64, lines: usize) -> usize {
    text_len + lines * (decimal_width(start_line.saturating_add(text_len as u64)) + 1) + SLACK
}

fn decimal_width(n: u64) -> usize {
    1 + n.max(1).ilog10() as usize
}

/// The decimal digits of all of `first..=last` together.
fn digits_between(first: u64, last: u64) -> usize {
    let mut total = 0usize;
    let mut lo = first;
    let mut width = 1 + lo.max(1).ilog10() as usize;
    loop {
        // The last number with `width` digits (saturating at u64::MAX).
        let top = 10u64.checked_pow(width as u32).map_or(u64::MAX, |p| p - 1);
        let hi = top.min(last);
        total += (hi - lo + 1) as usize * width;
        if hi == last {
            return total;
        }
        lo = hi + 1;
        width += 1;
    }
}

/// [`number_lines`] appended to `out` (an answer being encoded: no copy of its own).
pub fn number_lines_into(text: &str, start_line: i64, out: &mut Vec<u8>) {
    if text.is_empty() {
        return;
    }
    number_lines_hinted(text, start_line, count_newlines(text.as_bytes()) + 1, out);
}

/// [`number_lines_into`] where the caller knows the number of lines: `lines` only sizes the
/// room reserved (a wrong count costs a reallocation, never a wrong answer).
pub fn number_lines_hinted(text: &str, start_line: i64, lines: usize, out: &mut Vec<u8>) {
    if text.is_empty() {
        return;
    }
    let bytes = text.as_bytes();
    if let Ok(first) = u64::try_from(start_line) {
        if decimal_width(first.saturating_add(bytes.len() as u64)) <= FAST_DIGITS {
            number_fast(bytes, first, lines, out);
            return;
        }
    }
    let lines = count_newlines(bytes) + 1;
    let last = start_line.saturating_add(lines as i64 - 1);
    let digits = decimal_width(start_line.unsigned_abs().max(last.unsigned_abs()));
    out.reserve(bytes.len() + lines * (digits + 2));
    // Non-negative numbers count up in ASCII; others format each number.
    let mut decimal = u64::try_from(start_line).ok().map(Decimal::new);
    let mut n = start_line;
    let mut start = 0;
    let mut newlines = memchr::memchr_iter(b'\n', bytes);
    loop {
        let (end, next) = match newlines.next() {
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
            None => push_int(out, n),
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
}

/// The widest line number [`number_fast`] writes (one 16-byte store holds it).
const FAST_DIGITS: usize = 15;

/// Bytes read from a line and written after the output's end by [`number_fast`]'s 16-byte
/// copies, later overwritten or cut off.
const SLACK: usize = 32;

#[inline(always)]
fn load16(p: *const u8) -> [u8; 16] {
    // SAFETY (callers): `p..p + 16` is readable.
    unsafe { std::ptr::read_unaligned(p.cast::<[u8; 16]>()) }
}

#[inline(always)]
fn store16(p: *mut u8, v: [u8; 16]) {
    // SAFETY (callers): `p..p + 16` is writable.
    unsafe { std::ptr::write_unaligned(p.cast::<[u8; 16]>(), v) }
}

/// [`number_lines_into`] for line numbers `first..` of at most [`FAST_DIGITS`] digits: each
/// line's number, tab and bytes copied 16 bytes at a time past the output's end (a copy may
/// write up to 15 bytes beyond what it means to; the next one overwrites them, and the length
/// set at the end leaves the last ones out). `lines` only sizes the room reserved: each line
/// checks that its copies fit, and more is reserved when they would not.
fn number_fast(bytes: &[u8], first: u64, lines: usize, out: &mut Vec<u8>) {
    let digits = decimal_width(first.saturating_add(bytes.len() as u64)); // any line's, at most
    debug_assert!(digits <= FAST_DIGITS);
    let len0 = out.len();
    out.reserve(bytes.len() + lines * (digits + 1) + SLACK);
    // The number in ASCII, left-aligned in a 16-byte word (kept in registers: a byte changed
    // in memory and then loaded as a whole word stalls the load).
    let (mut word, mut width) = {
        let mut buf = [0u8; 20];
        let d = itoa(first, &mut buf);
        let mut w = [0u8; 16];
        w[..d.len()].copy_from_slice(d);
        (u128::from_le_bytes(w), d.len())
    };
    let src = bytes.as_ptr();
    let end = bytes.len();
    let mut pos = 0usize; // bytes written past `len0`
    let mut start = 0usize;
    let mut newlines = Newlines::new(bytes);
    loop {
        let (line_end, next) = match newlines.next() {
            Some(nl) if nl > start && bytes[nl - 1] == b'\r' => (nl - 1, Some(nl + 1)),
            Some(nl) => (nl, Some(nl + 1)),
            None => (end, None),
        };
        let n = line_end - start;
        // The number (16 bytes stored), the tab, the line (16-byte copies) and its `\n`.
        let need = pos + width.max(16) + 1 + n + 16 + 1;
        if need > out.capacity() - len0 {
            // SAFETY: the `pos` bytes past `len0` were written.
            unsafe { out.set_len(len0 + pos) };
            out.reserve(need - pos + (end - line_end) * 2 + SLACK);
        }
        // SAFETY: `need` bytes past `len0` are allocated (just checked): the stores below end
        // before it. Each 16-byte load from the text is within it (the tail of a line near its
        // end is copied exactly).
        unsafe {
            let dst = out.as_mut_ptr().add(len0 + pos);
            std::ptr::write_unaligned(dst.cast::<u128>(), word);
            let dst = dst.add(width);
            *dst = b'\t';
            let dst = dst.add(1);
            let mut i = 0;
            while i + 16 <= n {
                store16(dst.add(i), load16(src.add(start + i)));
                i += 16;
            }
            if start + i + 16 <= end {
                store16(dst.add(i), load16(src.add(start + i)));
            } else {
                std::ptr::copy_nonoverlapping(src.add(start + i), dst.add(i), n - i);
            }
            pos += width + 1 + n;
            if next.is_some() {
                *dst.add(n) = b'\n';
                pos += 1;
            }
        }
        let Some(next) = next else { break };
        start = next;
        // The next number: its last digit up by one, or (one line in ten) the carry.
        let shift = 8 * (width as u32 - 1);
        if (word >> shift) as u8 != b'9' {
            word += 1u128 << shift;
        } else {
            let mut d = word.to_le_bytes();
            let mut k = width;
            while k > 0 && d[k - 1] == b'9' {
                d[k - 1] = b'0';
                k -= 1;
            }
            if k == 0 {
                d.copy_within(0..width, 1);
                d[0] = b'1';
                width += 1;
            } else {
                d[k - 1] += 1;
            }
            word = u128::from_le_bytes(d);
        }
    }
    // SAFETY: the `pos` bytes past `len0` were written.
    unsafe { out.set_len(len0 + pos) };
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

/// How many `<` of `text` open a closing reminder tag once it is numbered (the `<`s
/// [`escape_reminder_tags`] rewrites in [`number_lines`] of it): a tag never spans a line
/// there (a line number follows each `\n`), so each `<` is judged within its own line.
pub fn closing_tags_by_line(text: &str) -> usize {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'<', bytes)
        .filter(|&at| {
            let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |n| at + n);
            tag_follows(&text[at + 1..end], false)
        })
        .count()
}

/// `render.strip_cr`: each `"\r\n"` (left to right, not overlapping) as `"\n"`, then a final
/// `"\r"` removed.
pub fn strip_cr(text: &str) -> Cow<'_, str> {
    if memchr::memchr(b'\r', text.as_bytes()).is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = text.replace("\r\n", "\n");
    if out.ends_with('\r') {
        out.pop();
    }
    Cow::Owned(out)
}

/// `bytes.decode("utf-8", "replace")`: each maximal invalid subpart as one U+FFFD (borrowed
/// when the bytes are valid).
pub fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// `json.dumps(text, ensure_ascii=False)` (= JavaScript's `JSON.stringify` of a well-formed
/// string) appended to `out`: quotes, `"` and `\` escaped, `\b \f \n \r \t` short, other C0
/// controls as `\u00xx`, everything else as it is.
pub fn json_quote(out: &mut String, text: &str) {
    out.push('"');
    let mut from = 0;
    for (i, b) in text.bytes().enumerate() {
        let short = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x0c => "\\f",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x00..=0x1f => "",
            _ => continue,
        };
        out.push_str(&text[from..i]);
        if short.is_empty() {
            use std::fmt::Write;
            let _ = write!(out, "\\u{b:04x}");
        } else {
            out.push_str(short);
        }
        from = i + 1;
    }
    out.push_str(&text[from..]);
    out.push('"');
}

/// Whether `c` may not stand as it is in a path inside a note (`render.note_path`): the tag
/// brackets, and what does not show (controls, format characters, separators).
fn note_unsafe(c: char) -> bool {
    matches!(
        c,
        '<' | '>'
            | '\u{0}'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{ad}'
            | '\u{61c}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
    )
}

/// `render.note_path(path)` appended to `out`: `<` and `>` as `&lt;` and `&gt;`, invisible
/// characters as `\uXXXX`, so that a file name can neither close the reminder nor hide in it.
pub fn note_path(out: &mut String, path: &str) {
    for c in path.chars() {
        if !note_unsafe(c) {
            out.push(c);
        } else if c == '<' {
            out.push_str("&lt;");
        } else if c == '>' {
            out.push_str("&gt;");
        } else {
            use std::fmt::Write;
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
    }
}

/// The bytes of `raw` that `head` shows (`restore/file_step.py` seeds keep them, not a re-encoding
/// of the text: lossy for invalid UTF-8): `head` is a decoded head of `raw` (each line's ending
/// `\r` removed) cut at a line break or, for a long first line, inside it. The length of that
/// prefix of `raw`: `head`'s own bytes when `raw` starts with them, else as many whole lines as
/// `head` has (the last one without its `\r`), or all of `raw`.
pub fn head_bytes(raw: &[u8], head: &str) -> usize {
    if raw.starts_with(head.as_bytes()) {
        return head.len();
    }
    let lines = memchr::memchr_iter(b'\n', head.as_bytes()).count() + 1;
    match memchr::memchr_iter(b'\n', raw).nth(lines - 1) {
        None => raw.len(),
        Some(end) if end > 0 && raw[end - 1] == b'\r' => end - 1,
        Some(end) => end,
    }
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
    fn helpers_match_the_python_ones() {
        assert_eq!(
            closing_tags_by_line("a</system-reminder>\n< / SYSTEM-reminder"),
            2
        );
        assert_eq!(closing_tags_by_line("<\n/system-reminder"), 0); // numbering splits it
        assert_eq!(strip_cr("a\r\nb\r\r\nc\r"), "a\nb\r\nc");
        assert_eq!(lossy(b"caf\xe9!"), "caf\u{fffd}!");
        let mut q = String::new();
        json_quote(&mut q, "a\"b\\c\n\u{1}\u{7f}é");
        assert_eq!(q, "\"a\\\"b\\\\c\\n\\u0001\u{7f}é\"");
        let mut n = String::new();
        note_path(&mut n, "/p/<x>\u{200b}\u{7}é");
        assert_eq!(n, "/p/&lt;x&gt;\\u200b\\u0007é");
        assert_eq!(head_bytes(b"ab\ncd", "ab"), 2);
        assert_eq!(head_bytes(b"ab\r\ncd\r\nef", "ab\ncd"), 6);
        assert_eq!(head_bytes(b"\xe9a\r\nb", "\u{fffd}a"), 2);
        assert_eq!(head_bytes(b"\xe9a", "\u{fffd}a"), 2);
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
        fn long_lines_number_like_the_reference_whatever_the_hint(
            lines in proptest::collection::vec("[a-z é中😀\t]{0,90}", 1..60),
            ends in proptest::collection::vec(prop_oneof![Just("\n"), Just("\r\n")], 60),
            start in prop_oneof![0i64..20, 95i64..105, 999_990i64..1_000_000],
            hint in 0usize..200,
            prefix in "[a-z]{0,3}",
        ) {
            let mut text = String::new();
            for (line, end) in lines.iter().zip(&ends) {
                text.push_str(line);
                text.push_str(end);
            }
            text.pop(); // the last line without its "\n" (a "\r" may stay)
            let want = reference(&text, start);
            let mut out = prefix.clone().into_bytes();
            number_lines_hinted(&text, start, hint, &mut out);
            prop_assert_eq!(&out[prefix.len()..], want.as_bytes());
            prop_assert_eq!(numbered_len(&text, start as u64), want.len());
        }

        #[test]
        fn long_texts_measure_like_the_reference(
            piece in "\\PC{0,200}|[\u{0}-\u{7f}é😀]{0,200}",
            times in 1usize..40,
        ) {
            let text = piece.repeat(times);
            prop_assert_eq!(json_utf16_len(&text), json_reference(&text));
        }

        #[test]
        fn numbered_len_is_the_numbered_length(
            text in "([a-c\r\n\t é中😀]{0,40}|(\r?\n|\r|x){0,30})",
            start in prop_oneof![0u64..100_000, 9u64..12, 95u64..105, 9_995u64..10_005,
                                 (i64::MAX as u64 - 100)..(i64::MAX as u64 - 50)],
        ) {
            let signed = i64::try_from(start).expect("within i64");
            prop_assert_eq!(numbered_len(&text, start), number_lines(&text, signed).len());
        }

        #[test]
        fn json_len_matches_reference(text in "\\PC{0,300}|[\u{0}-\u{7f}é😀\u{2028}]{0,300}") {
            prop_assert_eq!(json_utf16_len(&text), json_reference(&text));
            let units: Vec<u16> = text.encode_utf16().collect();
            prop_assert_eq!(json_utf16_len_units(&units), json_reference(&text));
        }
    }
}
