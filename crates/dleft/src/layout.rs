//! Table geometry, the cell encoding and the per-subtable permutations.
//!
//! A filter has `d` subtables of `B` buckets; a bucket has `w` cells; a cell is
//! `s = r + c` bits: the remainder in the low `r` bits, the counter in the high `c` bits
//! (`cell = remainder | counter << r`). A counter of 0 marks an empty cell, so a cell
//! that holds a fingerprint always has counter `1..=2^c - 1`. Cells are packed back to
//! back, a bucket takes `ceil(w s / 8)` bytes (no padding at all for `w = 8`), and the
//! buckets of subtable `i` follow those of subtable `i - 1`. The table carries 32 zero
//! bytes at its end so every bucket can be read with full-width unaligned loads.
//!
//! The true fingerprint of a key is `f = u 2^r + v` with `u = fast_range(h, B)` (the high
//! bits of the 64-bit hash `h`) and `v = h mod 2^r` (its low bits): uniform on
//! `[B 2^r]`. Subtable `i` stores `f` at `P_i(f) = (bucket, remainder)`, a bijection of
//! `[B] x [2^r]`, so a remainder match in a bucket of subtable `i` identifies `f` exactly:
//! - `B = 2^q` (the construction of Bonomi et al.): `P_i(f) = a_i f mod 2^(q+r)`, `a_i`
//!   odd; bucket = top `q` bits, remainder = low `r` bits.
//! - any other `B`: `P_i(u, v) = ((u + g_i(v)) mod B, v)` with
//!   `g_i(v) = fast_range(k_i v + s_i, B)` (`k_i` odd, `s_i` random): the remainder is
//!   `v` itself in every subtable and the bucket is `u` shifted by an amount that depends
//!   only on `v` and `i`. Given (bucket, remainder) one recovers `v` and then `u`, so each
//!   `P_i` is a bijection too. It costs two multiplications per subtable, like the
//!   power-of-two map plus the range reduction, and a query broadcasts one remainder
//!   for all subtables.

use crate::error::{DLeftError, Result};
use bloomforge_core::hash::{fast_range64, mix64};

/// Most subtables a filter may have.
pub const MAX_SUBTABLES: u32 = 8;
/// Most cells per bucket.
pub const MAX_CELLS_PER_BUCKET: u32 = 16;
/// Most counter bits per cell.
pub const MAX_COUNTER_BITS: u32 = 8;
/// Most bits per cell (remainder + counter): a cell must fit a 32-bit SIMD lane.
pub const MAX_CELL_BITS: u32 = 32;
/// Zero bytes after the last bucket, so any bucket can be read with 32-byte loads.
pub(crate) const SLACK: usize = 32;
/// Any bucket shape (up to two groups of cells of up to 32 bits).
pub(crate) const SHAPE_ANY: u8 = 0;
/// One group (`w <= 8`) of narrow cells (`s <= 25`).
pub(crate) const SHAPE_NARROW: u8 = 1;
/// One group (`w <= 8`) of narrow cells in at most 16 bytes (`w s <= 128`).
pub(crate) const SHAPE_SMALL: u8 = 2;
/// Largest table (bytes) a filter may allocate.
const MAX_TABLE_BYTES: u64 = (isize::MAX as u64) - SLACK as u64;

/// Shape of the table and of its cells, plus the lane tables the SIMD kernels use to
/// unpack a group of 8 cells from a 32-byte load.
#[derive(Clone, Debug, PartialEq, Eq)]
#[repr(C, align(32))]
pub(crate) struct Geometry {
    /// For lane `j`: index of the 32-bit word holding the first bit of cell `j`.
    pub(crate) word_lo: [i32; 8],
    /// For lane `j`: `word_lo[j] + 1` (the word a straddling cell continues into).
    pub(crate) word_hi: [i32; 8],
    /// For lane `j`: the bit offset of cell `j` inside `word_lo[j]`.
    pub(crate) shift_lo: [i32; 8],
    /// For lane `j`: `32 - shift_lo[j]` (a shift of 32 yields 0 in `vpsllvd`).
    pub(crate) shift_hi: [i32; 8],
    /// Byte shuffle (`vpshufb`) that puts the (up to) four bytes holding cell `j` into
    /// lane `j`; lanes 0-3 index the group's bytes `0..16`, lanes 4-7 the bytes
    /// `hi_byte..hi_byte + 16` (loaded into the upper 128-bit half). 0x80 zeroes a byte.
    pub(crate) shuffle: [u8; 32],
    /// For lane `j`: the bit offset of cell `j` inside its first shuffled byte.
    pub(crate) shuffle_shift: [i32; 8],
    /// For lane `j`: the remainder field of cell `j` where the byte shuffle leaves it,
    /// `rem_mask << shuffle_shift[j]` (narrow cells).
    pub(crate) rem_lanes: [i32; 8],
    /// For lane `j`: the counter field of cell `j` where the byte shuffle leaves it,
    /// `counter_field << shuffle_shift[j]` (narrow cells).
    pub(crate) counter_lanes: [i32; 8],
    /// [`shuffle`](Self::shuffle) for buckets of at most 16 bytes: both halves index the
    /// same 16 bytes (one broadcast load).
    pub(crate) shuffle_small: [u8; 32],
    /// `vpermb` indexes (AVX-512 kernel, buckets of at most 16 bytes): two buckets
    /// loaded into the low 256 bits of a register, bucket `i` at bytes `16 i..16 i + 16`;
    /// lane `L < 16` gets the four bytes holding cell `L % 8` of bucket `L / 8` (bytes as
    /// in [`shuffle_small`](Self::shuffle_small)). A lane's bytes past its bucket's 16
    /// are junk that the lane masks never select.
    pub(crate) vpermb: [u8; 64],
    /// For lane `L < 16` (cell `L % 8` of one of two buckets, as [`vpermb`](Self::vpermb)
    /// places it): the remainder field of that cell in place,
    /// [`rem_lanes`](Self::rem_lanes)`[L % 8]`, or 0 for a lane past the bucket's cells
    /// (`L % 8 >= w`).
    pub(crate) rem_lanes16: [i32; 16],
    /// As [`rem_lanes16`](Self::rem_lanes16) for the counter field: a lane past the
    /// bucket's cells never reads as occupied, so the AVX-512 kernel needs no cell mask.
    pub(crate) counter_lanes16: [i32; 16],
    /// [`shuffle_shift`](Self::shuffle_shift) for each of the 16 lanes.
    pub(crate) shuffle_shift16: [i32; 16],
    /// First byte of the upper half's 16-byte load (cell 4's first byte).
    pub(crate) hi_byte: usize,
    /// Whether cells are narrow enough (`s <= 25`) for the byte-shuffle unpacking; wider
    /// cells use the `vpermd` word unpacking.
    pub(crate) narrow: bool,
    /// Number of subtables `d`.
    pub(crate) d: usize,
    /// Buckets per subtable `B`.
    pub(crate) buckets: u64,
    /// Cells per bucket `w`.
    pub(crate) cells: u32,
    /// Remainder bits `r`.
    pub(crate) rem_bits: u32,
    /// Counter bits `c`.
    pub(crate) counter_bits: u32,
    /// Cell bits `s = r + c`.
    pub(crate) cell_bits: u32,
    /// Bytes per bucket, `ceil(w s / 8)`.
    pub(crate) bucket_bytes: usize,
    /// `2^r - 1`.
    pub(crate) rem_mask: u32,
    /// `(2^c - 1) << r`: the counter field in place.
    pub(crate) counter_field: u32,
    /// `2^c - 1`: the saturated (sticky) counter value.
    pub(crate) counter_max: u32,
    /// `2^w - 1`.
    pub(crate) cell_mask: u32,
    /// [`cell_mask`](Self::cell_mask) in each of the four bytes (`w <= 8`; else 0): the
    /// valid bits of a [`Scan4`](crate::arch::Scan4) mask.
    pub(crate) cell_mask4: u32,
}

fn invalid(name: &'static str, value: u64, reason: &'static str) -> DLeftError {
    DLeftError::InvalidParameter {
        name,
        value,
        reason,
    }
}

impl Geometry {
    /// Validates the parameters and derives the geometry.
    pub(crate) fn new(
        d: u32,
        buckets: u64,
        cells: u32,
        rem_bits: u32,
        counter_bits: u32,
    ) -> Result<Self> {
        if !(1..=MAX_SUBTABLES).contains(&d) {
            return Err(invalid("subtables", d.into(), "must be in 1..=8"));
        }
        if buckets == 0 {
            return Err(invalid("buckets_per_subtable", 0, "must be at least 1"));
        }
        if !(1..=MAX_CELLS_PER_BUCKET).contains(&cells) {
            return Err(invalid(
                "cells_per_bucket",
                cells.into(),
                "must be in 1..=16",
            ));
        }
        if !(1..=MAX_COUNTER_BITS).contains(&counter_bits) {
            return Err(invalid(
                "counter_bits",
                counter_bits.into(),
                "must be in 1..=8",
            ));
        }
        // `counter_bits <= 8` (checked above), so the subtraction cannot wrap; the sum could,
        // for a `rem_bits` read from hostile bytes.
        if rem_bits == 0 || rem_bits > MAX_CELL_BITS - counter_bits {
            return Err(invalid(
                "remainder_bits",
                rem_bits.into(),
                "must be at least 1 with remainder_bits + counter_bits <= 32",
            ));
        }
        // B 2^r <= 2^64: the true fingerprint must come from one 64-bit hash (q + r <= 64).
        if u128::from(buckets) << rem_bits > 1u128 << 64 {
            return Err(invalid(
                "buckets_per_subtable",
                buckets,
                "buckets_per_subtable * 2^remainder_bits must not exceed 2^64",
            ));
        }
        let cell_bits = rem_bits + counter_bits;
        let bucket_bytes = (cells * cell_bits).div_ceil(8) as usize;
        let total = u128::from(d) * u128::from(buckets) * bucket_bytes as u128;
        if total > u128::from(MAX_TABLE_BYTES) {
            return Err(bloomforge_core::Error::TooLarge {
                requested: u64::try_from(total).unwrap_or(u64::MAX),
                max: MAX_TABLE_BYTES,
            }
            .into());
        }
        let mut g = Geometry {
            word_lo: [0; 8],
            word_hi: [0; 8],
            shift_lo: [0; 8],
            shift_hi: [0; 8],
            shuffle: [0x80; 32],
            shuffle_small: [0x80; 32],
            vpermb: [0; 64],
            rem_lanes16: [0; 16],
            counter_lanes16: [0; 16],
            shuffle_shift16: [0; 16],
            shuffle_shift: [0; 8],
            rem_lanes: [0; 8],
            counter_lanes: [0; 8],
            hi_byte: (4 * cell_bits / 8) as usize,
            narrow: cell_bits <= 25,
            d: d as usize,
            buckets,
            cells,
            rem_bits,
            counter_bits,
            cell_bits,
            bucket_bytes,
            rem_mask: ((1u64 << rem_bits) - 1) as u32,
            counter_field: (((1u64 << counter_bits) - 1) << rem_bits) as u32,
            counter_max: (1u32 << counter_bits) - 1,
            cell_mask: ((1u64 << cells) - 1) as u32,
            cell_mask4: if cells <= 8 {
                ((1u32 << cells) - 1) * 0x0101_0101
            } else {
                0
            },
        };
        for j in 0..8 {
            let bit = j as u32 * cell_bits;
            g.word_lo[j] = (bit / 32) as i32;
            g.word_hi[j] = (bit / 32 + 1) as i32;
            g.shift_lo[j] = (bit % 32) as i32;
            g.shift_hi[j] = 32 - (bit % 32) as i32;
            // Byte-shuffle unpacking: byte positions relative to this half's load.
            let base = if j < 4 { 0 } else { g.hi_byte as u32 };
            let first = bit / 8 - base;
            g.shuffle_shift[j] = (bit % 8) as i32;
            g.rem_lanes[j] = (u64::from(g.rem_mask) << (bit % 8)) as u32 as i32;
            g.counter_lanes[j] = (u64::from(g.counter_field) << (bit % 8)) as u32 as i32;
            for k in 0..4u32 {
                if first + k < 16 {
                    g.shuffle[j * 4 + k as usize] = (first + k) as u8;
                }
                if bit / 8 + k < 16 {
                    g.shuffle_small[j * 4 + k as usize] = (bit / 8 + k) as u8;
                }
            }
        }
        for lane in 0..16 {
            let j = lane % 8;
            if (j as u32) < cells {
                g.rem_lanes16[lane] = g.rem_lanes[j];
                g.counter_lanes16[lane] = g.counter_lanes[j];
            }
            g.shuffle_shift16[lane] = g.shuffle_shift[j];
        }
        for (at, byte) in g.vpermb.iter_mut().enumerate() {
            let (lane, k) = (at / 4, at % 4);
            // 0x80 (a byte past the bucket's 16) reads byte 0: junk, never selected.
            let src = g.shuffle_small[(lane % 8) * 4 + k] & 0x0f;
            *byte = (lane / 8 * 16) as u8 + src;
        }
        Ok(g)
    }

    /// The bucket shape the kernels specialise for: [`SHAPE_SMALL`] (one group of at most
    /// 16 bytes: `w <= 8`, `w s <= 128`, e.g. every sized filter with `r <= 14`),
    /// [`SHAPE_NARROW`] (one group of narrow cells: `w <= 8`, `s <= 25`) or [`SHAPE_ANY`].
    #[inline(always)]
    pub(crate) fn shape(&self) -> u8 {
        if self.cells <= 8 && self.narrow {
            if self.bucket_bytes <= 16 {
                SHAPE_SMALL
            } else {
                SHAPE_NARROW
            }
        } else {
            SHAPE_ANY
        }
    }

    /// Bytes of the table without the slack.
    pub(crate) fn table_bytes(&self) -> usize {
        self.d * self.buckets as usize * self.bucket_bytes
    }

    /// Byte offset of bucket `bucket` of subtable `i`.
    #[inline(always)]
    pub(crate) fn bucket_offset(&self, i: usize, bucket: u64) -> usize {
        (i as u64 * self.buckets + bucket) as usize * self.bucket_bytes
    }

    /// The remainder field of a cell value.
    #[inline(always)]
    pub(crate) fn cell_remainder(&self, cell: u32) -> u32 {
        cell & self.rem_mask
    }

    /// The counter of a cell value (0: empty).
    #[inline(always)]
    pub(crate) fn cell_counter(&self, cell: u32) -> u32 {
        (cell & self.counter_field) >> self.rem_bits
    }
}

/// The fixed random permutations `P_1..P_d` of one filter (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Permutations {
    /// `B = 2^q`: `P_i(f) = a_i f mod 2^(q+r)` ([`Pow2Map`]); else [`GeneralMap`].
    pub(crate) pow2: bool,
    /// `2^(q+r) - 1` (power-of-two map).
    pub(crate) fmask: u64,
    /// The odd multipliers (`a_i` or `k_i`).
    pub(crate) mult: [u64; 8],
    /// The offsets `s_i` (general map).
    pub(crate) add: [u64; 8],
    /// Byte offset of subtable `i`'s first bucket, `i B bucket_bytes`.
    pub(crate) base: [usize; 8],
}

/// SplitMix64 step: the constants of the permutations come from the filter's seed.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    mix64(*state)
}

impl Permutations {
    /// The permutations of a filter with geometry `g`, drawn from `seed`.
    pub(crate) fn new(g: &Geometry, seed: u64) -> Self {
        let mut state = seed ^ 0xd1ef_7c0b_f11e_5eed;
        let mut p = Permutations {
            pow2: g.buckets.is_power_of_two(),
            fmask: 0,
            mult: [0; 8],
            add: [0; 8],
            base: [0; 8],
        };
        for i in 0..8 {
            p.mult[i] = splitmix(&mut state) | 1;
            p.add[i] = splitmix(&mut state);
            p.base[i] = if i < g.d { g.bucket_offset(i, 0) } else { 0 };
        }
        let bits = g.buckets.trailing_zeros() + g.rem_bits;
        p.fmask = if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        p
    }
}

/// The true fingerprint of hash `h` split as `(u, v)`: `f = u 2^r + v`.
#[inline(always)]
pub(crate) fn split_hash(g: &Geometry, h: u64) -> (u64, u64) {
    (fast_range64(h, g.buckets), h & u64::from(g.rem_mask))
}

/// One family of permutations, chosen at compile time so the probe loops have no branch
/// on it.
pub(crate) trait MapKind {
    /// Whether every subtable stores the same remainder (`v`) for a fingerprint.
    const SAME_REM: bool;

    /// (bucket byte offset, remainder) in subtable `i < d` of the fingerprint
    /// `f = u 2^r + v`.
    fn at(g: &Geometry, p: &Permutations, u: u64, v: u64, f: u64, i: usize) -> (usize, u32);
}

/// Bonomi et al.'s map for `B = 2^q`: `a_i f mod 2^(q+r)`, bucket = top `q` bits.
pub(crate) struct Pow2Map;

/// The general bijection for any `B` (see the module docs).
pub(crate) struct GeneralMap;

impl MapKind for Pow2Map {
    const SAME_REM: bool = false;

    #[inline(always)]
    fn at(g: &Geometry, p: &Permutations, _u: u64, _v: u64, f: u64, i: usize) -> (usize, u32) {
        let x = p.mult[i & 7].wrapping_mul(f) & p.fmask;
        let bucket = (x >> g.rem_bits) as usize;
        (
            p.base[i & 7] + bucket * g.bucket_bytes,
            x as u32 & g.rem_mask,
        )
    }
}

impl MapKind for GeneralMap {
    const SAME_REM: bool = true;

    #[inline(always)]
    fn at(g: &Geometry, p: &Permutations, u: u64, v: u64, _f: u64, i: usize) -> (usize, u32) {
        let x = v.wrapping_mul(p.mult[i & 7]).wrapping_add(p.add[i & 7]);
        let mut bucket = u + fast_range64(x, g.buckets);
        if bucket >= g.buckets {
            bucket -= g.buckets;
        }
        (p.base[i & 7] + bucket as usize * g.bucket_bytes, v as u32)
    }
}

/// The candidate cells of one hash under map `M`: [`at`](Self::at)`(i)` is the byte offset
/// of its bucket in subtable `i` and the remainder to look for there.
#[derive(Clone, Copy)]
pub(crate) struct Locator<'a, M> {
    g: &'a Geometry,
    perm: &'a Permutations,
    u: u64,
    v: u64,
    f: u64,
    map: core::marker::PhantomData<M>,
}

impl<'a, M: MapKind> Locator<'a, M> {
    /// Splits hash `h` into its true fingerprint.
    #[inline(always)]
    pub(crate) fn new(g: &'a Geometry, perm: &'a Permutations, h: u64) -> Self {
        let (u, v) = split_hash(g, h);
        Self {
            g,
            perm,
            u,
            v,
            f: (u << g.rem_bits) | v,
            map: core::marker::PhantomData,
        }
    }

    /// (bucket byte offset, remainder) in subtable `i < d`.
    #[inline(always)]
    pub(crate) fn at(&self, i: usize) -> (usize, u32) {
        M::at(self.g, self.perm, self.u, self.v, self.f, i)
    }
}

/// The `d` candidate cells of hash `h`: byte offset of each bucket and the remainder to
/// look for there (test reference for [`Locator`]).
#[cfg(test)]
#[derive(Clone, Copy)]
pub(crate) struct Probe {
    pub(crate) offset: [usize; 8],
    pub(crate) rem: [u32; 8],
}

#[cfg(test)]
impl Probe {
    /// Locates the candidate buckets and remainders of hash `h`.
    #[inline(always)]
    pub(crate) fn new<M: MapKind>(g: &Geometry, perm: &Permutations, h: u64) -> Self {
        let mut p = Probe {
            offset: [0; 8],
            rem: [0; 8],
        };
        let loc = Locator::<M>::new(g, perm, h);
        for i in 0..g.d.min(8) {
            (p.offset[i], p.rem[i]) = loc.at(i);
        }
        p
    }
}

/// `(bucket, remainder)` of fingerprint `(u, v)` in subtable `i` (the map `P_i`; the
/// reference for [`MapKind::at`]).
#[cfg(test)]
pub(crate) fn permute(g: &Geometry, perm: &Permutations, i: usize, u: u64, v: u64) -> (u64, u32) {
    let r = g.rem_bits;
    let rmask = u64::from(g.rem_mask);
    if perm.pow2 {
        let x = perm.mult[i].wrapping_mul((u << r) | v) & perm.fmask;
        (x >> r, (x & rmask) as u32)
    } else {
        let x = v.wrapping_mul(perm.mult[i]).wrapping_add(perm.add[i]);
        ((u + fast_range64(x, g.buckets)) % g.buckets, v as u32)
    }
}

/// Inverse of an odd number modulo 2^64 (Newton's iteration).
fn inverse_odd(a: u64) -> u64 {
    let mut x = a; // correct to 3 bits
    for _ in 0..6 {
        x = x.wrapping_mul(2u64.wrapping_sub(a.wrapping_mul(x)));
    }
    x
}

/// The inverse of `P_i`: the fingerprint `(u, v)` stored at `(bucket, remainder)` of
/// subtable `i`.
pub(crate) fn unpermute(
    g: &Geometry,
    perm: &Permutations,
    i: usize,
    bucket: u64,
    rem: u32,
) -> (u64, u64) {
    let r = g.rem_bits;
    let rmask = u64::from(g.rem_mask);
    if perm.pow2 {
        let x = (bucket << r) | u64::from(rem);
        let f = inverse_odd(perm.mult[i]).wrapping_mul(x) & perm.fmask;
        (f >> r, f & rmask)
    } else {
        let v = u64::from(rem);
        let x = v.wrapping_mul(perm.mult[i]).wrapping_add(perm.add[i]);
        let shift = fast_range64(x, g.buckets);
        ((bucket + g.buckets - shift) % g.buckets, v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// A remainder width near `u32::MAX` (as hostile bytes may hold) is refused, not
    /// added into an overflow.
    #[test]
    fn huge_remainder_bits_are_refused() {
        for r in [33, u32::MAX - 7, u32::MAX - 3, u32::MAX] {
            assert!(Geometry::new(4, 64, 8, r, 4).is_err(), "remainder_bits {r}");
        }
        assert!(Geometry::new(4, 64, 8, 28, 4).is_ok());
    }

    /// Every map P_i is a bijection of [B] x [2^r], and `unpermute` inverts it: the
    /// property that makes a remainder match identify the true fingerprint.
    #[test]
    fn permutations_are_bijections() {
        for &(buckets, r) in &[
            (1u64, 3u32),
            (8, 4),
            (16, 5),
            (7, 4),
            (12, 3),
            (33, 2),
            (1, 1),
            (64, 1),
        ] {
            for seed in 0..4 {
                let g = Geometry::new(4, buckets, 4, r, 2).unwrap();
                let perm = Permutations::new(&g, seed);
                assert_eq!(perm.pow2, buckets.is_power_of_two());
                for i in 0..4 {
                    let mut seen = HashSet::new();
                    for u in 0..buckets {
                        for v in 0..(1u64 << r) {
                            let (b, rem) = permute(&g, &perm, i, u, v);
                            assert!(b < buckets && rem < (1 << r));
                            assert!(seen.insert((b, rem)), "P_{i} not injective");
                            assert_eq!(unpermute(&g, &perm, i, b, rem), (u, v));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn probe_matches_permute() {
        for &buckets in &[1u64 << 10, 1000] {
            let g = Geometry::new(4, buckets, 8, 12, 2).unwrap();
            let perm = Permutations::new(&g, 9);
            for h in (0..1000u64).map(mix64) {
                let p = if perm.pow2 {
                    Probe::new::<Pow2Map>(&g, &perm, h)
                } else {
                    Probe::new::<GeneralMap>(&g, &perm, h)
                };
                let (u, v) = split_hash(&g, h);
                for i in 0..4 {
                    let (b, rem) = permute(&g, &perm, i, u, v);
                    assert_eq!(p.offset[i], g.bucket_offset(i, b));
                    assert_eq!(p.rem[i], rem);
                }
            }
        }
    }

    #[test]
    fn largest_fingerprint_space() {
        // q + r = 64 exactly is allowed; one bit more is not.
        let g = Geometry::new(1, 1 << 40, 1, 24, 8).unwrap();
        assert!(matches!(
            Geometry::new(1, 1 << 40, 1, 25, 2),
            Err(DLeftError::InvalidParameter {
                name: "buckets_per_subtable",
                ..
            })
        ));
        let perm = Permutations::new(&g, 1);
        assert!(perm.pow2 && perm.fmask == u64::MAX);
        for h in [0u64, u64::MAX, 1 << 63, 12345] {
            let (u, v) = split_hash(&g, h);
            assert_eq!((u << 24) | v, h);
            let (b, rem) = permute(&g, &perm, 0, u, v);
            assert_eq!(unpermute(&g, &perm, 0, b, rem), (u, v));
        }
    }
}
