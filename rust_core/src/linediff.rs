//! What a write changed, by lines: the old and the new content of a file trimmed of their
//! common leading and trailing lines, leaving one changed region ([`diff`]), and an old span of
//! lines carried over to the new content ([`LineDiff::map_span`]).
//!
//! Lines are the daemon's (`state/seen.py`, Claude Code's `content.split("\n")`): the text
//! between `\n`s, the empty "line" after a final `\n` included; empty content has none.
//!
//! One region rather than a hunk diff (Myers): the daemon keeps one span of lines per file,
//! and the span after a write is the old span carried over, widened by the changed lines. Every
//! hunk of a hunk diff lies inside the trimmed region and its first and last hunks reach the
//! region's ends, so the widened span is the same either way but for a pure deletion at either
//! end; this is linear, allocation-free and has no worst case (a hunk diff is O(N·D)).

use crate::scan::count_newlines;

/// A write's change: `prefix` lines kept at the start and `suffix` at the end, and between them
/// `old_mid` lines of the old content became `new_mid` lines of the new.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineDiff {
    pub prefix: usize,
    pub old_mid: usize,
    pub new_mid: usize,
    pub suffix: usize,
}

/// Lines of `content`: its `\n`s plus one, none when empty.
pub fn line_count(content: &[u8]) -> usize {
    if content.is_empty() {
        0
    } else {
        count_newlines(content) + 1
    }
}

/// The change from `old` to `new` (see the module doc).
pub fn diff(old: &[u8], new: &[u8]) -> LineDiff {
    let (n, m) = (line_count(old), line_count(new));
    if old == new {
        return LineDiff {
            prefix: n,
            old_mid: 0,
            new_mid: 0,
            suffix: 0,
        };
    }
    if n == 0 || m == 0 {
        return LineDiff {
            prefix: 0,
            old_mid: n,
            new_mid: m,
            suffix: 0,
        };
    }
    let i = common_prefix(old, new);
    // The line the first difference is in is common too when it ends there in both: then one
    // content has ended (equal bytes continue otherwise), and all its lines are the prefix.
    let ends = |x: &[u8]| i == x.len() || x[i] == b'\n';
    let prefix = count_newlines(&old[..i]) + usize::from(ends(old) && ends(new));
    if prefix == n || prefix == m {
        return LineDiff {
            prefix,
            old_mid: n - prefix,
            new_mid: m - prefix,
            suffix: 0,
        };
    }
    // Line prefix + 1 starts after the prefix's last `\n`, at the same offset in both.
    let start = memchr::memrchr(b'\n', &old[..i]).map_or(0, |at| at + 1);
    let (a, b) = (&old[start..], &new[start..]);
    let j = common_suffix(a, b);
    // Likewise the line the common tail starts in is common when it starts there in both.
    let begins = |x: &[u8]| j == x.len() || x[x.len() - j - 1] == b'\n';
    let suffix = count_newlines(&a[a.len() - j..]) + usize::from(begins(a) && begins(b));
    LineDiff {
        prefix,
        old_mid: n - prefix - suffix,
        new_mid: m - prefix - suffix,
        suffix,
    }
}

/// Bytes `a` and `b` share at their start (8 at a time).
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let len = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= len {
        let x = word(&a[i..]) ^ word(&b[i..]);
        if x != 0 {
            return i + (x.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i + a[i..len]
        .iter()
        .zip(&b[i..len])
        .take_while(|(x, y)| x == y)
        .count()
}

/// Bytes `a` and `b` share at their end (8 at a time).
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let len = a.len().min(b.len());
    let (ea, eb) = (a.len(), b.len());
    let mut j = 0;
    while j + 8 <= len {
        let x = word(&a[ea - j - 8..]) ^ word(&b[eb - j - 8..]);
        if x != 0 {
            return j + (x.leading_zeros() / 8) as usize;
        }
        j += 8;
    }
    j + a[..ea - j]
        .iter()
        .rev()
        .zip(b[..eb - j].iter().rev())
        .take(len - j)
        .take_while(|(x, y)| x == y)
        .count()
}

/// The first 8 bytes of `bytes`, little-endian (byte k in bits 8k..8k+8).
#[inline(always)]
fn word(bytes: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(w)
}

impl LineDiff {
    pub fn old_lines(&self) -> usize {
        self.prefix + self.old_mid + self.suffix
    }

    pub fn new_lines(&self) -> usize {
        self.prefix + self.new_mid + self.suffix
    }

    /// The lines of the new content the write added or changed (first, last), 1-based
    /// inclusive; `None` when it changed nothing or only deleted lines.
    pub fn changed(&self) -> Option<(usize, usize)> {
        (self.new_mid > 0).then(|| (self.prefix + 1, self.prefix + self.new_mid))
    }

    /// Old line `line` in the new content. A line before the change keeps its number, one after
    /// it shifts by the change in length; a line of the changed region maps to the region's
    /// first new line (`last` false) or its last (`last` true), so that a span carried over
    /// covers the region it overlapped. (A deletion's region has no new line: its "first" is
    /// the line after it, its "last" the line before.)
    pub fn map_line(&self, line: usize, last: bool) -> usize {
        if line <= self.prefix {
            line
        } else if line > self.prefix + self.old_mid {
            line - self.old_mid + self.new_mid
        } else if last {
            self.prefix + self.new_mid
        } else {
            self.prefix + 1
        }
    }

    /// Old lines `first..=last` (1-based, `first <= last`) in the new content, within its lines;
    /// a span the write deleted whole becomes the lines around the deletion. `None` when the new
    /// content has no line.
    pub fn map_span(&self, first: usize, last: usize) -> Option<(usize, usize)> {
        let total = self.new_lines();
        if total == 0 {
            return None;
        }
        let (from, to) = (first.max(1), last.max(first.max(1)));
        let (first, last) = (self.map_line(from, false), self.map_line(to, true));
        if first > last {
            // Only a deletion maps a line past the next one's image: around it.
            return Some((last.clamp(1, total), first.min(total)));
        }
        Some((first.min(total), last.min(total)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reference: lines split out, trimmed one by one from the front, then from the back.
    fn naive(old: &[u8], new: &[u8]) -> LineDiff {
        let lines = |x: &[u8]| -> Vec<Vec<u8>> {
            if x.is_empty() {
                Vec::new()
            } else {
                x.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect()
            }
        };
        let (a, b) = (lines(old), lines(new));
        let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
        let room = a.len().min(b.len()) - prefix;
        let suffix = a
            .iter()
            .rev()
            .zip(b.iter().rev())
            .take(room)
            .take_while(|(x, y)| x == y)
            .count();
        LineDiff {
            prefix,
            old_mid: a.len() - prefix - suffix,
            new_mid: b.len() - prefix - suffix,
            suffix,
        }
    }

    fn d(old: &str, new: &str) -> LineDiff {
        let got = diff(old.as_bytes(), new.as_bytes());
        assert_eq!(
            got,
            naive(old.as_bytes(), new.as_bytes()),
            "{old:?} -> {new:?}"
        );
        got
    }

    fn lines(n: usize, tag: &str) -> String {
        (1..=n).map(|i| format!("{tag} {i}\n")).collect()
    }

    #[test]
    fn appended_lines_are_changed_and_the_final_empty_line_shifts() {
        // 8 lines then 14: the empty line after the final newline is 9, then 15.
        let got = d(&lines(8, "l"), &lines(14, "l"));
        assert_eq!((got.old_lines(), got.new_lines()), (9, 15));
        assert_eq!(got.changed(), Some((9, 14)));
        assert_eq!(got.map_span(1, 9), Some((1, 15)));
        assert_eq!(got.map_span(3, 4), Some((3, 4)));
    }

    #[test]
    fn a_change_above_a_span_shifts_it() {
        let old = lines(100, "l");
        let new = old.replace("l 10\n", "l 10\nx\ny\nz\n");
        let got = d(&old, &new);
        assert_eq!(got.changed(), Some((11, 13)));
        assert_eq!(got.map_span(50, 60), Some((53, 63)));
        assert_eq!(got.map_span(1, 10), Some((1, 10)));
        // A span the change falls in covers it, and keeps its own ends.
        assert_eq!(got.map_span(5, 20), Some((5, 23)));
    }

    #[test]
    fn a_deletion_changes_no_line_and_pulls_lines_up() {
        let old = lines(20, "l");
        let new = old.replace("l 5\nl 6\n", "");
        let got = d(&old, &new);
        assert_eq!(got.changed(), None);
        assert_eq!((got.prefix, got.old_mid, got.new_mid), (4, 2, 0));
        assert_eq!(got.map_span(10, 12), Some((8, 10)));
        assert_eq!(got.map_span(3, 6), Some((3, 4)));
        assert_eq!(got.map_span(6, 9), Some((5, 7)));
        // Deleted whole: the lines around the deletion.
        assert_eq!(got.map_span(5, 6), Some((4, 5)));
    }

    #[test]
    fn a_changed_line_is_its_own_region() {
        let got = d("a\nb\nc\n", "a\nB\nc\n");
        assert_eq!(got.changed(), Some((2, 2)));
        assert_eq!(got.map_span(1, 1), Some((1, 1)));
        assert_eq!(got.map_span(2, 4), Some((2, 4)));
    }

    #[test]
    fn edges() {
        assert_eq!(d("", "").changed(), None);
        assert_eq!(d("", "a\n").changed(), Some((1, 2)));
        assert_eq!(d("a\n", "").map_span(1, 2), None);
        assert_eq!(d("a", "a\n").changed(), Some((2, 2)));
        assert_eq!(d("a\n", "a").changed(), None);
        assert_eq!(d("ab", "abc").changed(), Some((1, 1)));
        assert_eq!(d("c", "c\nc").changed(), Some((2, 2)));
        assert_eq!(d("x\nab\n", "y\nab\n").changed(), Some((1, 1)));
        assert_eq!(d("ab\n", "c\nab\n").changed(), Some((1, 1)));
        assert_eq!(d("a\nb\n", "a\nb\na\nb\n").changed(), Some((3, 4)));
        // Unchanged: every line maps to itself.
        let same = d("a\nb\n", "a\nb\n");
        assert_eq!((same.changed(), same.map_span(2, 3)), (None, Some((2, 3))));
        // A span past the end (from a longer version) ends at the last line.
        assert_eq!(d("a\n", "b\n").map_span(1, 40), Some((1, 2)));
    }

    #[test]
    fn long_lines_cross_the_word_steps() {
        let old = format!("{}\n{}\n{}", "a".repeat(37), "b".repeat(29), "c".repeat(45));
        let new = old.replace(
            &"b".repeat(29),
            &format!("{}x{}", "b".repeat(13), "b".repeat(15)),
        );
        assert_eq!(d(&old, &new).changed(), Some((2, 2)));
    }

    fn text() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b'a'), Just(b'b')], 0..80)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn equals_the_line_by_line_trim(old in text(), new in text()) {
            prop_assert_eq!(diff(&old, &new), naive(&old, &new));
        }

        #[test]
        fn an_edit_of_a_region_is_found_within_it(
            old in text(), cut in any::<(usize, usize)>(), put in text(),
        ) {
            // new = old with bytes [lo, hi) replaced: the trimmed region covers the edit.
            let (lo, hi) = {
                let (x, y) = (cut.0 % (old.len() + 1), cut.1 % (old.len() + 1));
                (x.min(y), x.max(y))
            };
            let new = [&old[..lo], &put[..], &old[hi..]].concat();
            let got = diff(&old, &new);
            prop_assert_eq!(got, naive(&old, &new));
            prop_assert_eq!(got.old_lines(), line_count(&old));
            prop_assert_eq!(got.new_lines(), line_count(&new));
        }

        #[test]
        fn kept_lines_map_to_themselves_and_spans_stay_within(
            old in text(), new in text(), span in any::<(usize, usize)>(),
        ) {
            let got = diff(&old, &new);
            let split = |x: &[u8]| -> Vec<Vec<u8>> {
                if x.is_empty() { Vec::new() } else { x.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect() }
            };
            let (a, b) = (split(&old), split(&new));
            for line in (1..=got.prefix).chain(got.prefix + got.old_mid + 1..=a.len()) {
                let to = got.map_line(line, false);
                prop_assert_eq!(to, got.map_line(line, true));
                prop_assert_eq!(&a[line - 1], &b[to - 1]);
            }
            if let Some((f, l)) = got.changed() {
                prop_assert!(1 <= f && f <= l && l <= b.len());
            }
            let n = a.len().max(1);
            let (f, l) = (span.0 % n + 1, span.1 % n + 1);
            let (f, l) = (f.min(l), f.max(l));
            match got.map_span(f, l) {
                None => prop_assert!(b.is_empty()),
                Some((nf, nl)) => {
                    prop_assert!(1 <= nf && nf <= nl && nl <= b.len());
                    // Every kept line of the span is inside its image.
                    for line in f..=l.min(a.len()) {
                        if line <= got.prefix || line > got.prefix + got.old_mid {
                            let to = got.map_line(line, false);
                            prop_assert!(nf <= to && to <= nl);
                        }
                    }
                }
            }
        }
    }
}
