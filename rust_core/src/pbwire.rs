//! The little of the protobuf wire format that the core's answers need: varints,
//! length-delimited fields, and sizes computed before writing (so every length prefix is written
//! once, minimal, as upb writes it: an answer built here is byte for byte what the Python
//! message would serialise to).
//!
//! Fields are written in field-number order and fields holding their default value (0, empty)
//! are left out, as proto3 serialisers do. A field is named by its constant in [`fields`],
//! generated from the `.proto` (`make protos`; `make check-protos` fails when it is stale),
//! typed by how it is keyed on the wire: a varint writer takes a [`Varint`], a length-delimited
//! one a [`Len`].

pub mod fields;

const LEN: u64 = 2;
const VARINT: u64 = 0;

macro_rules! field_kinds {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        ///
        /// Only [`fields`] (generated from the `.proto`) names one: a field number is never
        /// written by hand.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name(u32);

        impl $name {
            /// The field's number.
            pub const fn number(self) -> u32 {
                self.0
            }
        }
    )*};
}

field_kinds! {
    /// A field keyed as a varint: int32, int64, uint32, uint64, bool, an enum.
    Varint;
    /// A length-delimited field: string, bytes, a message (and a map's entries).
    Len;
    /// A repeated scalar, packed into one length-delimited field (not written here).
    Packed;
    /// A zigzag varint (sint32, sint64; not written here).
    ZigZag;
    /// A fixed 32-bit field (fixed32, sfixed32, float; not written here).
    Fixed32;
    /// A fixed 64-bit field (fixed64, sfixed64, double; not written here).
    Fixed64;
}

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

/// An int32, int64 or enum value as its varint: a negative one is its 64-bit two's complement
/// (ten bytes), as protobuf writes it.
#[inline]
pub fn signed(v: impl Into<i64>) -> u64 {
    v.into() as u64
}

/// The size of a varint field holding `v` (0 when `v` is 0: not written).
#[inline]
pub fn uint_field_len(field: Varint, v: u64) -> usize {
    if v == 0 {
        0
    } else {
        varint_len(key(field.0, VARINT)) + varint_len(v)
    }
}

/// The size of a length-delimited field of `n` bytes (0 when empty: not written).
#[inline]
pub fn bytes_field_len(field: Len, n: usize) -> usize {
    if n == 0 {
        0
    } else {
        message_field_len(field, n)
    }
}

/// The size of an embedded message field whose message takes `n` bytes (written even when
/// empty: a set message field is present).
#[inline]
pub fn message_field_len(field: Len, n: usize) -> usize {
    varint_len(key(field.0, LEN)) + varint_len(n as u64) + n
}

/// A varint field (nothing for 0).
#[inline]
pub fn put_uint(out: &mut Vec<u8>, field: Varint, v: u64) {
    if v != 0 {
        put_varint(out, key(field.0, VARINT));
        put_varint(out, v);
    }
}

/// A bool field (nothing for false).
#[inline]
pub fn put_bool(out: &mut Vec<u8>, field: Varint, v: bool) {
    put_uint(out, field, u64::from(v));
}

/// A length-delimited field (nothing when empty).
#[inline]
pub fn put_bytes(out: &mut Vec<u8>, field: Len, data: &[u8]) {
    if !data.is_empty() {
        put_len(out, field, data.len());
        out.extend_from_slice(data);
    }
}

/// The key and length of a length-delimited field whose `n` bytes the caller writes next.
#[inline]
pub fn put_len(out: &mut Vec<u8>, field: Len, n: usize) {
    put_varint(out, key(field.0, LEN));
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
        use fields::{attachment, file_attachment};
        let mut out = Vec::new();
        put_uint(&mut out, file_attachment::START_LINE, 1234);
        assert_eq!(out.len(), uint_field_len(file_attachment::START_LINE, 1234));
        out.clear();
        put_uint(&mut out, file_attachment::START_LINE, 0);
        assert!(out.is_empty());
        assert_eq!(uint_field_len(file_attachment::START_LINE, 0), 0);
        // A field numbered 16 or more takes a two-byte key.
        let wide = attachment::LEFT_OUT_FILES;
        assert!(wide.number() >= 16);
        put_bytes(&mut out, wide, &[b'x'; 300]);
        assert_eq!(out.len(), bytes_field_len(wide, 300));
        let key = (wide.number() << 3) | 2;
        assert_eq!(&out[..3], &[(key as u8) | 0x80, (key >> 7) as u8, 0xac]); // then 300
        out.clear();
        put_bytes(&mut out, file_attachment::CONTENT, b"");
        assert!(out.is_empty());
        assert_eq!(message_field_len(attachment::FILE, 0), 2);
    }
}
