//! Byte scans over whole files, 16 or 32 bytes at a time (SSE2, which every x86_64 has; a
//! portable loop elsewhere): counting the lines of a file, and walking its line ends.

/// The number of `\n` bytes in `bytes`.
pub fn count_newlines(bytes: &[u8]) -> usize {
    count_byte(bytes, b'\n')
}

/// The number of bytes equal to `needle`.
pub fn count_byte(bytes: &[u8], needle: u8) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        count_byte_sse2(bytes, needle)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        bytes.iter().filter(|&&b| b == needle).count()
    }
}

/// [`count_byte`]: a match adds one to its byte lane (255 blocks at most), then the lanes are
/// summed into 64 bits.
#[cfg(target_arch = "x86_64")]
fn count_byte_sse2(bytes: &[u8], needle: u8) -> usize {
    use std::arch::x86_64::*;
    const BLOCKS: usize = 255;
    let mut chunks = bytes.chunks_exact(16);
    let mut total = 0usize;
    // SAFETY: SSE2 is part of the x86_64 baseline; each load is 16 bytes within `chunk`.
    unsafe {
        let zero = _mm_setzero_si128();
        let want = _mm_set1_epi8(needle as i8);
        let sum = |acc: __m128i| -> usize {
            let s = _mm_sad_epu8(acc, zero);
            (_mm_cvtsi128_si64(s) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(s, s))) as usize
        };
        let mut vectors = chunks.by_ref().peekable();
        while vectors.peek().is_some() {
            let mut acc = zero;
            for chunk in vectors.by_ref().take(BLOCKS) {
                let v = _mm_loadu_si128(chunk.as_ptr().cast());
                acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(v, want)); // a match is -1
            }
            total += sum(acc);
        }
    }
    total + chunks.remainder().iter().filter(|&&b| b == needle).count()
}

/// The offsets of the `\n`s of a text, in order, found 32 bytes at a time (a bit mask per
/// block: a line costs a few instructions, not a search call).
pub struct Newlines<'a> {
    bytes: &'a [u8],
    block: usize,
    mask: u32,
}

impl<'a> Newlines<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        let mut n = Newlines {
            bytes,
            block: 0,
            mask: 0,
        };
        if !bytes.is_empty() {
            n.mask = n.mask_at(0);
        }
        n
    }

    /// Bit i set: `bytes[at + i]` is a `\n` (i < 32); `at` < the length.
    #[inline(always)]
    fn mask_at(&self, at: usize) -> u32 {
        #[cfg(target_arch = "x86_64")]
        if at + 32 <= self.bytes.len() {
            use std::arch::x86_64::*;
            // SAFETY: SSE2 is part of the x86_64 baseline; the two 16-byte loads are within
            // `bytes` (checked just above).
            unsafe {
                let p = self.bytes.as_ptr().add(at);
                let nl = _mm_set1_epi8(b'\n' as i8);
                let lo = _mm_loadu_si128(p.cast());
                let hi = _mm_loadu_si128(p.add(16).cast());
                let lo = _mm_movemask_epi8(_mm_cmpeq_epi8(lo, nl)) as u32 & 0xFFFF;
                let hi = _mm_movemask_epi8(_mm_cmpeq_epi8(hi, nl)) as u32;
                return lo | (hi << 16);
            }
        }
        mask_of(&self.bytes[at..self.bytes.len().min(at + 32)])
    }
}

/// Bit i set: `bytes[i]` is a `\n` (at most 32 bytes).
#[inline]
fn mask_of(bytes: &[u8]) -> u32 {
    bytes
        .iter()
        .enumerate()
        .fold(0u32, |m, (i, &b)| m | (u32::from(b == b'\n') << i))
}

impl Iterator for Newlines<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.mask == 0 {
            self.block += 32;
            if self.block >= self.bytes.len() {
                return None;
            }
            self.mask = self.mask_at(self.block);
        }
        let at = self.block + self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        Some(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn counts_and_finds_every_newline(
            bytes in proptest::collection::vec(prop_oneof![Just(b'\n'), any::<u8>()], 0..2000),
        ) {
            let want: Vec<usize> = (0..bytes.len()).filter(|&i| bytes[i] == b'\n').collect();
            prop_assert_eq!(count_newlines(&bytes), want.len());
            prop_assert_eq!(Newlines::new(&bytes).collect::<Vec<_>>(), want);
            prop_assert_eq!(count_byte(&bytes, 0xff), bytes.iter().filter(|&&b| b == 0xff).count());
        }
    }

    #[test]
    fn counts_past_the_lane_limit() {
        let bytes = vec![b'\n'; 16 * 255 * 3 + 7];
        assert_eq!(count_newlines(&bytes), bytes.len());
    }
}
