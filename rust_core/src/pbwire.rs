//! The little of the protobuf wire format that the core's answers need: varints,
//! length-delimited fields, and sizes computed before writing (so every length prefix is written
//! once, minimal, as upb writes it: an answer built here is byte for byte what the Python
//! message would serialise to).
//!
//! Fields are written in field-number order and fields holding their default value (0, empty)
//! are left out, as proto3 serialisers do.

const LEN: u64 = 2;
const VARINT: u64 = 0;

/// Bytes of `v` as a varint.
#[inline]
pub fn varint_len(v: u64) -> usize {
    // 1 byte per 7 bits, at least one.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

#[inline]
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[inline]
fn key(field: u32, wire: u64) -> u64 {
    (u64::from(field) << 3) | wire
}

/// The size of a varint field holding `v` (0 when `v` is 0: not written).
#[inline]
pub fn uint_field_len(field: u32, v: u64) -> usize {
    if v == 0 {
        0
    } else {
        varint_len(key(field, VARINT)) + varint_len(v)
    }
}

/// The size of a length-delimited field of `n` bytes (0 when empty: not written).
#[inline]
pub fn bytes_field_len(field: u32, n: usize) -> usize {
    if n == 0 {
        0
    } else {
        message_field_len(field, n)
    }
}

/// The size of an embedded message field whose message takes `n` bytes (written even when
/// empty: a set message field is present).
#[inline]
pub fn message_field_len(field: u32, n: usize) -> usize {
    varint_len(key(field, LEN)) + varint_len(n as u64) + n
}

/// A varint field (nothing for 0).
#[inline]
pub fn put_uint(out: &mut Vec<u8>, field: u32, v: u64) {
    if v != 0 {
        put_varint(out, key(field, VARINT));
        put_varint(out, v);
    }
}

/// A bool field (nothing for false).
#[inline]
pub fn put_bool(out: &mut Vec<u8>, field: u32, v: bool) {
    put_uint(out, field, u64::from(v));
}

/// A length-delimited field (nothing when empty).
#[inline]
pub fn put_bytes(out: &mut Vec<u8>, field: u32, data: &[u8]) {
    if !data.is_empty() {
        put_len(out, field, data.len());
        out.extend_from_slice(data);
    }
}

/// The key and length of a length-delimited field whose `n` bytes the caller writes next.
#[inline]
pub fn put_len(out: &mut Vec<u8>, field: u32, n: usize) {
    put_varint(out, key(field, LEN));
    put_varint(out, n as u64);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_minimal() {
        for (v, bytes) in [
            (0u64, vec![0u8]),
            (1, vec![1]),
            (127, vec![0x7f]),
            (128, vec![0x80, 0x01]),
            (300, vec![0xac, 0x02]),
            (
                u64::MAX,
                vec![0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            ),
        ] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(out, bytes, "{v}");
            assert_eq!(varint_len(v), bytes.len(), "{v}");
        }
    }

    #[test]
    fn field_sizes_match_what_is_written() {
        let mut out = Vec::new();
        put_uint(&mut out, 7, 1234);
        assert_eq!(out.len(), uint_field_len(7, 1234));
        out.clear();
        put_uint(&mut out, 7, 0);
        assert!(out.is_empty());
        assert_eq!(uint_field_len(7, 0), 0);
        put_bytes(&mut out, 21, &[b'x'; 300]);
        assert_eq!(out.len(), bytes_field_len(21, 300));
        assert_eq!(&out[..3], &[0xaa, 0x01, 0xac]); // key 21<<3|2 = 170, then 300
        out.clear();
        put_bytes(&mut out, 3, b"");
        assert!(out.is_empty());
        assert_eq!(message_field_len(10, 0), 2);
    }
}
