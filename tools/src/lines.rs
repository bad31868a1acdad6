//! The line ends (`\n` bytes) of a buffer, found 64 bytes at a time.
//!
//! Written by hand instead of `memchr::memchr_iter` because keys are short lines:
//! `memchr_iter` starts a new search at every line end (every ~65 bytes in URL inputs),
//! and the per-search setup was 11-15 % of a `query`'s CPU time over 100M URLs (`perf`).
//! Here one pass compares 64 bytes with `\n` into a bit mask (four SSE2 compares, part of
//! every x86-64 CPU, so no runtime dispatch) and the iterator walks the mask's set bits.
//! Other architectures use `memchr_iter`.

/// Iterator over the offsets of the `\n` bytes of a buffer, in order.
pub(crate) struct LineEnds<'a> {
    #[cfg(target_arch = "x86_64")]
    data: &'a [u8],
    /// Where the next 64-byte chunk starts.
    #[cfg(target_arch = "x86_64")]
    next: usize,
    /// Offset of the chunk `mask` describes.
    #[cfg(target_arch = "x86_64")]
    base: usize,
    /// The line ends of that chunk not yet returned, one bit per byte.
    #[cfg(target_arch = "x86_64")]
    mask: u64,
    #[cfg(not(target_arch = "x86_64"))]
    inner: memchr::Memchr<'a>,
}

/// The offsets of the `\n` bytes of `data`, in order.
#[inline]
pub(crate) fn line_ends(data: &[u8]) -> LineEnds<'_> {
    #[cfg(target_arch = "x86_64")]
    {
        LineEnds {
            data,
            next: 0,
            base: 0,
            mask: 0,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        LineEnds {
            inner: memchr::memchr_iter(b'\n', data),
        }
    }
}

impl Iterator for LineEnds<'_> {
    type Item = usize;

    #[cfg(target_arch = "x86_64")]
    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.mask == 0 {
            let rest = self.data.get(self.next..).filter(|r| !r.is_empty())?;
            self.base = self.next;
            if let Some(chunk) = rest.first_chunk::<64>() {
                self.mask = newline_mask(chunk);
                self.next += 64;
            } else {
                self.mask = rest
                    .iter()
                    .enumerate()
                    .filter(|&(_, &b)| b == b'\n')
                    .fold(0, |m, (i, _)| m | 1 << i);
                self.next = self.data.len();
            }
        }
        let at = self.base + self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        Some(at)
    }

    #[cfg(not(target_arch = "x86_64"))]
    #[inline]
    fn next(&mut self) -> Option<usize> {
        self.inner.next()
    }
}

/// Bit `i` set where `chunk[i] == b'\n'`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn newline_mask(chunk: &[u8; 64]) -> u64 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    let p = chunk.as_ptr();
    // SAFETY: SSE2 is part of every x86-64 CPU; each 16-byte unaligned load lies inside
    // the 64-byte chunk.
    unsafe {
        let nl = _mm_set1_epi8(b'\n' as i8);
        let part = |at: usize| {
            let eq = _mm_cmpeq_epi8(_mm_loadu_si128(p.add(at).cast()), nl);
            u64::from(_mm_movemask_epi8(eq) as u16)
        };
        part(0) | part(16) << 16 | part(32) << 32 | part(48) << 48
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same offsets as `memchr_iter` for every length 0..300 (all tails, chunk
    /// boundaries, a `\n` in every lane) with dense, absent and all line ends, and a
    /// single line end at every offset of 300 bytes (empty chunks before and after it).
    #[test]
    fn line_ends_equal_memchr() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut byte = |dense: bool| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let b = x as u8;
            if dense && b.is_multiple_of(3) {
                b'\n'
            } else if b == b'\n' && !dense {
                b'x'
            } else {
                b
            }
        };
        for len in 0..300 {
            for dense in [true, false] {
                let mut data: Vec<u8> = (0..len).map(|_| byte(dense)).collect();
                let want: Vec<usize> = memchr::memchr_iter(b'\n', &data).collect();
                assert_eq!(line_ends(&data).collect::<Vec<_>>(), want, "{len} {dense}");
                data.iter_mut().for_each(|b| *b = b'\n');
                assert_eq!(
                    line_ends(&data).collect::<Vec<_>>(),
                    (0..len).collect::<Vec<_>>()
                );
            }
        }
        for at in 0..300 {
            let mut data = vec![b'x'; 300];
            data[at] = b'\n';
            assert_eq!(line_ends(&data).collect::<Vec<_>>(), vec![at], "{at}");
        }
        let lines = b"a\r\nbb\n\nccc".repeat(100);
        let want: Vec<usize> = memchr::memchr_iter(b'\n', &lines).collect();
        assert_eq!(line_ends(&lines).collect::<Vec<_>>(), want);
    }
}
