//! Counter layouts and probe derivation: which counters a 64-bit hash picks.
//!
//! Both layouts derive positions exactly as the matching plain filter of `bloomforge-core`
//! does, so an exported plain filter answers every query exactly as the counting filter.

use bloomforge_core::block::BLOCKED_MULTIPLIER;
use bloomforge_core::hash::fast_range64;
use core::fmt;

/// Counters in one 64-byte line (the unit of the blocked layout).
pub const LINE_COUNTERS: u32 = 128;

/// Largest number of probes (`k`) either layout accepts.
pub const MAX_HASHES: u32 = 64;

/// How a key's `k` counters are placed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CounterLayout {
    /// All `k` counters of a key in one 64-byte line of 128 counters: one cache miss per
    /// operation. The line is `fast_range64(hash, lines)`; probe `j` is counter
    /// `(h32 * C^(j+1)) >> 25` of the line (`h32` the hash's low 32 bits, `C` core's
    /// [`BLOCKED_MULTIPLIER`]): the top 7 bits of the product whose top 9 bits are the bit
    /// position of core's [`BlockedBloomFilter`](bloomforge_core::BlockedBloomFilter).
    #[default]
    Blocked,
    /// `k` counters anywhere among `m`: enhanced double hashing and 64-bit fast range,
    /// exactly the positions of core's
    /// [`StandardBloomFilter`](bloomforge_core::StandardBloomFilter) with `m` bits. The
    /// textbook counting Bloom filter; `k` cache misses per operation.
    Standard,
}

impl fmt::Display for CounterLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CounterLayout::Blocked => "blocked",
            CounterLayout::Standard => "standard",
        })
    }
}

/// 128 counters of 4 bits in eight `u64` words, aligned to a cache line.
///
/// Counter `c` (0..128) is the low nibble (`c < 64`) or the high nibble (`c >= 64`) of
/// byte `c % 64`, bytes in little-endian order within the words (byte `b` is bits
/// `8 (b % 8)..` of word `b / 8`). This numbering puts the counters a key's probes select
/// into two 64-bit bitmaps that map straight onto byte lanes: one AVX-512 byte-masked add
/// updates them all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(C, align(64))]
pub struct CounterLine {
    /// The eight words of the line.
    pub words: [u64; 8],
}

/// Eight `AtomicU64`, laid out exactly as [`CounterLine`].
#[repr(C, align(64))]
pub(crate) struct AtomicCounterLine {
    pub(crate) words: [core::sync::atomic::AtomicU64; 8],
}

const _: () = {
    assert!(core::mem::size_of::<AtomicCounterLine>() == core::mem::size_of::<CounterLine>());
    assert!(core::mem::align_of::<AtomicCounterLine>() == core::mem::align_of::<CounterLine>());
};

impl CounterLine {
    /// The all-zero line.
    pub const ZERO: CounterLine = CounterLine { words: [0; 8] };

    /// Value of counter `c` (`c < 128`; larger `c` wrap modulo 128).
    #[inline]
    pub fn counter(&self, c: u32) -> u32 {
        let (w, shift) = counter_slot(c % LINE_COUNTERS);
        crate::nibble::get_at(self.words[w], shift)
    }

    /// Number of non-zero counters.
    #[inline]
    pub fn nonzero_counters(&self) -> u32 {
        self.words
            .iter()
            .map(|&w| crate::nibble::nonzero(w).count_ones())
            .sum()
    }
}

/// Word index and bit shift of counter `c` (0..128) of a line.
#[inline(always)]
pub(crate) const fn counter_slot(c: u32) -> (usize, u32) {
    (((c & 63) >> 3) as usize, ((c & 7) << 3) | ((c >> 6) << 2))
}

/// `POWERS[j] = C^(j+1) mod 2^32`.
pub(crate) const POWERS: [u32; MAX_HASHES as usize] = {
    let mut out = [0u32; MAX_HASHES as usize];
    let mut acc = BLOCKED_MULTIPLIER;
    let mut j = 0;
    while j < out.len() {
        out[j] = acc;
        acc = acc.wrapping_mul(BLOCKED_MULTIPLIER);
        j += 1;
    }
    out
};

/// [`POWERS`] widened to `u64` lanes (for 64-bit-lane multiplies), padded with 8 zeros so
/// a full 8-lane load at any `j < 64` stays in bounds.
pub(crate) const POWERS_U64: [u64; MAX_HASHES as usize + 8] = {
    let mut out = [0u64; MAX_HASHES as usize + 8];
    let mut j = 0;
    while j < MAX_HASHES as usize {
        out[j] = POWERS[j] as u64;
        j += 1;
    }
    out
};

/// Line of `hash` among `num_lines`.
#[inline(always)]
pub(crate) fn line_index(hash: u64, num_lines: usize) -> usize {
    fast_range64(hash, num_lines as u64) as usize
}

/// Counter (0..128) of probe `j` of `h32` inside its line.
#[inline(always)]
pub(crate) fn line_counter(h32: u32, j: usize) -> u32 {
    h32.wrapping_mul(POWERS[j]) >> 25
}

/// The counters of `h32`'s `k` probes as two bitmaps: bit `c` of the first for counter
/// `c < 64`, bit `c - 64` of the second for the others. Duplicate probes merge. Branch-free
/// and register-only (a shift count is taken modulo 64 by the hardware and here).
#[inline(always)]
pub(crate) fn probe_bits(h32: u32, k: u32) -> (u64, u64) {
    let (mut lo, mut hi) = (0u64, 0u64);
    for &power in &POWERS[..k as usize] {
        let c = h32.wrapping_mul(power) >> 25;
        let upper = u64::from(c >> 6);
        lo |= (upper ^ 1) << (c & 63);
        hi |= upper << (c & 63);
    }
    (lo, hi)
}

/// The nibble masks (bit `4i` for nibble `i`), one per word of a line, of the counters in
/// the bitmaps `(lo, hi)` (see [`probe_bits`]).
#[inline(always)]
pub(crate) fn word_masks(lo: u64, hi: u64) -> [u64; 8] {
    core::array::from_fn(|i| {
        spread_to_bytes((lo >> (8 * i)) & 0xFF) | (spread_to_bytes((hi >> (8 * i)) & 0xFF) << 4)
    })
}

/// The per-word nibble masks of `h32`'s `k` probes.
#[inline(always)]
pub(crate) fn line_mask(h32: u32, k: u32) -> [u64; 8] {
    let (lo, hi) = probe_bits(h32, k);
    word_masks(lo, hi)
}

/// Moves bit `b` (0..8) of `x` to bit `8b`.
#[inline(always)]
pub(crate) const fn spread_to_bytes(x: u64) -> u64 {
    let x = (x | (x << 28)) & 0x0000_000F_0000_000F;
    let x = (x | (x << 14)) & 0x0003_0003_0003_0003;
    (x | (x << 7)) & 0x0101_0101_0101_0101
}

/// The inverse of [`spread_to_bytes`]: bit `8b` of `x` to bit `b` (other bits ignored).
#[inline(always)]
pub(crate) const fn gather_bytes(x: u64) -> u64 {
    let x = x & 0x0101_0101_0101_0101;
    let x = (x | (x >> 7)) & 0x0003_0003_0003_0003;
    let x = (x | (x >> 14)) & 0x0000_000F_0000_000F;
    (x | (x >> 28)) & 0xFF
}

/// The distinct counter positions of `hash` in a standard layout of `m` counters, in probe
/// order, written to `out`; returns how many.
#[inline(always)]
pub(crate) fn standard_positions(
    hash: u64,
    m: u64,
    k: u32,
    out: &mut [u64; MAX_HASHES as usize],
) -> usize {
    let mut probes = bloomforge_core::Probes::new(hash);
    let mut n = 0;
    for _ in 0..k {
        let p = probes.next_pos(m);
        if !out[..n].contains(&p) {
            out[n] = p;
            n += 1;
        }
    }
    n
}

/// Expected number of distinct counters among `k` uniform probes into `b` counters.
pub(crate) fn expected_distinct(b: f64, k: u32) -> f64 {
    if b <= 1.0 {
        return 1.0;
    }
    -b * (f64::from(k) * (-1.0 / b).ln_1p()).exp_m1()
}

pub(crate) use bloomforge_core::batch::{prefetch, PREFETCH_AHEAD};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_match_probes() {
        for h in [0u32, 1, 0xdead_beef, u32::MAX, 0x1234_5678, 0x8000_0001] {
            for k in 1..=MAX_HASHES {
                let mut expect = [0u64; 8];
                let (mut elo, mut ehi) = (0u64, 0u64);
                for j in 0..k as usize {
                    let c = line_counter(h, j);
                    let (w, shift) = counter_slot(c);
                    expect[w] |= 1u64 << shift;
                    if c < 64 {
                        elo |= 1 << c;
                    } else {
                        ehi |= 1 << (c - 64);
                    }
                }
                let (lo, hi) = probe_bits(h, k);
                assert_eq!((lo, hi), (elo, ehi), "h={h:#x} k={k}");
                assert_eq!(word_masks(lo, hi), expect, "h={h:#x} k={k}");
            }
        }
        for b in 0..8 {
            assert_eq!(spread_to_bytes(1 << b), 1 << (8 * b));
            assert_eq!(gather_bytes(1 << (8 * b)), 1 << b);
        }
        assert_eq!(gather_bytes(0x0101_0101_0101_0101), 0xFF);
        // Every counter has its own nibble.
        let mut seen = std::collections::HashSet::new();
        for c in 0..128 {
            assert!(seen.insert(counter_slot(c)));
        }
    }

    #[test]
    fn positions_are_core_blocked_positions_shifted() {
        for h in [0u32, 1, 0xdead_beef, u32::MAX, 0x1234_5678] {
            for j in 0..MAX_HASHES as usize {
                assert_eq!(
                    line_counter(h, j),
                    bloomforge_core::block::blocked_position(h, j) >> 2
                );
            }
        }
    }
}
