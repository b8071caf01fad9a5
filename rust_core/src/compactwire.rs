//! The tail of a `CompactResponse` written straight to protobuf bytes: its decisions, the
//! per-category totals and the compaction count (the fields after its attachments).
//!
//! The pipeline keeps the serialised attachments (field 1) ahead of everything else
//! (`Outcome.wire`), and its decisions as plain values, so the answer is one concatenation. What
//! is written here is byte for byte what the message would serialise to ([`crate::pbwire`]'s
//! rules: field order, default values left out, minimal lengths), which
//! `tests/daemon/restore/test_outcome_wire.py` checks against the protobuf runtime.

use crate::pbwire::fields::{category_totals as ct, compact_response as cr, decision as d};
use crate::pbwire::{
    bytes_field_len, message_field_len, put_bytes, put_len, put_uint, signed, uint_field_len,
};

/// One `Decision`.
pub struct Decision<'a> {
    pub subject: i32,
    pub name: &'a str,
    pub outcome: i32,
    pub tokens: i64,
    pub rank: i32,
    pub detail: &'a str,
    pub content_tokens: i64,
}

/// One `CategoryTotals`.
pub struct Totals<'a> {
    pub category: &'a str,
    pub attachments: i32,
    pub dropped: i32,
    pub tokens: i64,
}

impl Decision<'_> {
    fn len(&self) -> usize {
        uint_field_len(d::SUBJECT, signed(self.subject))
            + bytes_field_len(d::NAME, self.name.len())
            + uint_field_len(d::OUTCOME, signed(self.outcome))
            + uint_field_len(d::TOKENS, signed(self.tokens))
            + uint_field_len(d::RANK, signed(self.rank))
            + bytes_field_len(d::DETAIL, self.detail.len())
            + uint_field_len(d::CONTENT_TOKENS, signed(self.content_tokens))
    }

    fn put(&self, out: &mut Vec<u8>) {
        put_uint(out, d::SUBJECT, signed(self.subject));
        put_bytes(out, d::NAME, self.name.as_bytes());
        put_uint(out, d::OUTCOME, signed(self.outcome));
        put_uint(out, d::TOKENS, signed(self.tokens));
        put_uint(out, d::RANK, signed(self.rank));
        put_bytes(out, d::DETAIL, self.detail.as_bytes());
        put_uint(out, d::CONTENT_TOKENS, signed(self.content_tokens));
    }
}

impl Totals<'_> {
    fn len(&self) -> usize {
        bytes_field_len(ct::CATEGORY, self.category.len())
            + uint_field_len(ct::ATTACHMENTS, signed(self.attachments))
            + uint_field_len(ct::DROPPED, signed(self.dropped))
            + uint_field_len(ct::TOKENS, signed(self.tokens))
    }

    fn put(&self, out: &mut Vec<u8>) {
        put_bytes(out, ct::CATEGORY, self.category.as_bytes());
        put_uint(out, ct::ATTACHMENTS, signed(self.attachments));
        put_uint(out, ct::DROPPED, signed(self.dropped));
        put_uint(out, ct::TOKENS, signed(self.tokens));
    }
}

/// `decisions`, `totals` and `compaction`, in that order (the fields' order): a
/// `CompactResponse` with no attachments, serialised.
pub fn compact_tail(decisions: &[Decision<'_>], totals: &[Totals<'_>], compaction: i64) -> Vec<u8> {
    let d_lens: Vec<usize> = decisions.iter().map(Decision::len).collect();
    let t_lens: Vec<usize> = totals.iter().map(Totals::len).collect();
    let size = d_lens
        .iter()
        .map(|&n| message_field_len(cr::DECISIONS, n))
        .sum::<usize>()
        + t_lens
            .iter()
            .map(|&n| message_field_len(cr::TOTALS, n))
            .sum::<usize>()
        + uint_field_len(cr::COMPACTION, signed(compaction));
    let mut out = Vec::with_capacity(size);
    for (one, n) in decisions.iter().zip(d_lens) {
        put_len(&mut out, cr::DECISIONS, n);
        one.put(&mut out);
    }
    for (t, n) in totals.iter().zip(t_lens) {
        put_len(&mut out, cr::TOTALS, n);
        t.put(&mut out);
    }
    put_uint(&mut out, cr::COMPACTION, signed(compaction));
    debug_assert_eq!(out.len(), size);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pbwire::{Len, Varint};

    /// A field's key byte (every field here is numbered below 16).
    fn varint_key(f: Varint) -> u8 {
        assert!(f.number() < 16);
        (f.number() << 3) as u8
    }

    fn len_key(f: Len) -> u8 {
        assert!(f.number() < 16);
        (f.number() << 3) as u8 | 2
    }

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
        let want = vec![len_key(cr::DECISIONS), 0, len_key(cr::TOTALS), 0];
        assert_eq!(compact_tail(&[d], &[t], 0), want);
        assert!(compact_tail(&[], &[], 0).is_empty());
    }

    #[test]
    fn negative_values_take_ten_bytes() {
        let one = Decision {
            subject: 1,
            name: "a",
            outcome: -1,
            tokens: 300,
            rank: 2,
            detail: "",
            content_tokens: -2,
        };
        let out = compact_tail(&[one], &[], 7);
        // The decision's key and length, subject 1, name "a", outcome -1 (10 bytes), tokens 300,
        // rank 2, content_tokens -2 (10 bytes); then compaction 7.
        let mut want = vec![len_key(cr::DECISIONS), 32, varint_key(d::SUBJECT), 1];
        want.extend([len_key(d::NAME), 1, b'a', varint_key(d::OUTCOME)]);
        want.extend([0xff; 9]);
        want.push(0x01);
        want.extend([varint_key(d::TOKENS), 0xac, 0x02, varint_key(d::RANK), 2]);
        want.extend([varint_key(d::CONTENT_TOKENS), 0xfe]);
        want.extend([0xff; 8]);
        want.push(0x01);
        want.extend([varint_key(cr::COMPACTION), 7]);
        assert_eq!(out, want);
    }
}
