//! The tail of a `CompactResponse` written straight to protobuf bytes: its decisions, the
//! per-category totals and the compaction count (fields 2, 3 and 5).
//!
//! The pipeline keeps the serialised attachments (field 1) ahead of everything else
//! (`Outcome.wire`), and its decisions as plain values, so the answer is one concatenation. What
//! is written here is byte for byte what the message would serialise to ([`crate::pbwire`]'s
//! rules: field order, default values left out, minimal lengths), which
//! `tests/daemon/test_outcome_wire.py` checks against the protobuf runtime.

use crate::pbwire::{
    bytes_field_len, message_field_len, put_bytes, put_len, put_uint, uint_field_len,
};

/// One `Decision` (proto fields 1-7).
pub struct Decision<'a> {
    pub subject: i32,
    pub name: &'a str,
    pub outcome: i32,
    pub tokens: i64,
    pub rank: i32,
    pub detail: &'a str,
    pub content_tokens: i64,
}

/// One `CategoryTotals` (proto fields 1-4).
pub struct Totals<'a> {
    pub category: &'a str,
    pub attachments: i32,
    pub dropped: i32,
    pub tokens: i64,
}

/// An int32, int64 or enum value as its varint: a negative one is its 64-bit two's complement
/// (ten bytes), as protobuf writes it.
#[inline]
fn signed(v: impl Into<i64>) -> u64 {
    v.into() as u64
}

impl Decision<'_> {
    fn len(&self) -> usize {
        uint_field_len(1, signed(self.subject))
            + bytes_field_len(2, self.name.len())
            + uint_field_len(3, signed(self.outcome))
            + uint_field_len(4, signed(self.tokens))
            + uint_field_len(5, signed(self.rank))
            + bytes_field_len(6, self.detail.len())
            + uint_field_len(7, signed(self.content_tokens))
    }

    fn put(&self, out: &mut Vec<u8>) {
        put_uint(out, 1, signed(self.subject));
        put_bytes(out, 2, self.name.as_bytes());
        put_uint(out, 3, signed(self.outcome));
        put_uint(out, 4, signed(self.tokens));
        put_uint(out, 5, signed(self.rank));
        put_bytes(out, 6, self.detail.as_bytes());
        put_uint(out, 7, signed(self.content_tokens));
    }
}

impl Totals<'_> {
    fn len(&self) -> usize {
        bytes_field_len(1, self.category.len())
            + uint_field_len(2, signed(self.attachments))
            + uint_field_len(3, signed(self.dropped))
            + uint_field_len(4, signed(self.tokens))
    }

    fn put(&self, out: &mut Vec<u8>) {
        put_bytes(out, 1, self.category.as_bytes());
        put_uint(out, 2, signed(self.attachments));
        put_uint(out, 3, signed(self.dropped));
        put_uint(out, 4, signed(self.tokens));
    }
}

/// `decisions` (field 2), `totals` (field 3) and `compaction` (field 5), in that order: a
/// `CompactResponse` with no attachments, serialised.
pub fn compact_tail(decisions: &[Decision<'_>], totals: &[Totals<'_>], compaction: i64) -> Vec<u8> {
    let d_lens: Vec<usize> = decisions.iter().map(Decision::len).collect();
    let t_lens: Vec<usize> = totals.iter().map(Totals::len).collect();
    let size = d_lens
        .iter()
        .map(|&n| message_field_len(2, n))
        .sum::<usize>()
        + t_lens
            .iter()
            .map(|&n| message_field_len(3, n))
            .sum::<usize>()
        + uint_field_len(5, signed(compaction));
    let mut out = Vec::with_capacity(size);
    for (d, n) in decisions.iter().zip(d_lens) {
        put_len(&mut out, 2, n);
        d.put(&mut out);
    }
    for (t, n) in totals.iter().zip(t_lens) {
        put_len(&mut out, 3, n);
        t.put(&mut out);
    }
    put_uint(&mut out, 5, signed(compaction));
    debug_assert_eq!(out.len(), size);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_left_out_and_messages_kept() {
        let d = Decision {
            subject: 0,
            name: "",
            outcome: 0,
            tokens: 0,
            rank: 0,
            detail: "",
            content_tokens: 0,
        };
        let t = Totals {
            category: "",
            attachments: 0,
            dropped: 0,
            tokens: 0,
        };
        // An empty decision and totals are still present (key, length 0); count 0 is left out.
        assert_eq!(compact_tail(&[d], &[t], 0), vec![0x12, 0x00, 0x1a, 0x00]);
        assert!(compact_tail(&[], &[], 0).is_empty());
    }

    #[test]
    fn negative_values_take_ten_bytes() {
        let d = Decision {
            subject: 1,
            name: "a",
            outcome: -1,
            tokens: 300,
            rank: 2,
            detail: "",
            content_tokens: -2,
        };
        let out = compact_tail(&[d], &[], 7);
        // key 2, length, subject 1, name "a", outcome -1 (10 bytes), tokens 300, rank 2,
        // content_tokens -2 (10 bytes); then compaction 7.
        let mut want = vec![0x12, 32, 0x08, 1, 0x12, 1, b'a', 0x18];
        want.extend([0xff; 9]);
        want.push(0x01);
        want.extend([0x20, 0xac, 0x02, 0x28, 2, 0x38, 0xfe]);
        want.extend([0xff; 8]);
        want.push(0x01);
        want.extend([0x28, 7]);
        assert_eq!(out, want);
    }
}
