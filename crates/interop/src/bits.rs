//! The bit array and probe sequences Guava's and Spark's filters share: `m = 64 * words`
//! bits, bit `i` in word `i / 64` at position `i % 64`, written as a big-endian `int` word
//! count and big-endian `long` words; `k` positions per key from two hashes, each reduced
//! modulo `m` (Java's `%` on a non-negative `long`).

use crate::{Error, Result};
use bloomforge_core::batch::prefetch;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Keys per step of the batch loops: hashed and their `k` words prefetched one step ahead
/// of the bit updates, so that the step's cache misses overlap. 16 keys of `k` <= 10
/// probes keep ~100-160 lines in flight (core's `PREFETCH_AHEAD` is 128).
const STEP: usize = 16;
/// Keys per task of the parallel build.
const PAR_CHUNK: usize = 1 << 14;

/// `x % m` for a fixed `m` by multiplications (Lemire, Kaser & Kurz, "Faster remainder by
/// direct computation", 2019: `M = ceil(2^128 / m)`, `x % m = ((M x mod 2^128) m) >> 128`,
/// exact for every 64-bit `x` and `m`). Written here because the probes of Guava's and
/// Spark's filters are remainders by a bit count that is rarely a power of two, `k` of
/// them a key: a 64-bit `div` costs 14 to 45 cycles on the x86 cores measured, four
/// multiplications a few.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FastMod {
    m: u64,
    magic: u128,
}

impl FastMod {
    pub(crate) fn new(m: u64) -> Self {
        assert!(m > 0, "a remainder by zero");
        Self {
            m,
            magic: (u128::MAX / u128::from(m)).wrapping_add(1),
        }
    }

    #[inline(always)]
    pub(crate) fn rem(self, x: u64) -> u64 {
        let low = self.magic.wrapping_mul(u128::from(x));
        let m = u128::from(self.m);
        let bottom = ((low as u64 as u128) * m) >> 64;
        let top = (low >> 64) * m;
        ((bottom + top) >> 64) as u64
    }
}

/// The probe sequence of one key: which scheme, and its two hashes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Probe {
    /// Guava `MURMUR128_MITZ_64`: `c = h1`; position `(c & Long.MAX_VALUE) % m`, then
    /// `c += h2`.
    Mitz64 { h1: u64, h2: u64 },
    /// Guava `MURMUR128_MITZ_32` and Spark version 1: for `i` in `1..=k`, the `int`
    /// `c = h1 + i * h2`, complemented when negative, `% m`.
    Int32 { h1: i32, h2: i32 },
    /// Spark version 2: the `long` `c = h1 * Integer.MAX_VALUE`; for each probe `c += h2`,
    /// complemented when negative, `% m`.
    Long64 { h1: i32, h2: i32 },
}

impl Probe {
    /// Calls `f` with each of the `k` positions in `0..m`, stopping (and returning
    /// `false`) as soon as `f` returns `false`.
    #[inline(always)]
    pub(crate) fn each(self, k: u32, m: FastMod, mut f: impl FnMut(u64) -> bool) -> bool {
        match self {
            Probe::Mitz64 { h1, h2 } => {
                let mut c = h1;
                for _ in 0..k {
                    if !f(m.rem(c & i64::MAX as u64)) {
                        return false;
                    }
                    c = c.wrapping_add(h2);
                }
            }
            Probe::Int32 { h1, h2 } => {
                for i in 1..=k as i32 {
                    let mut c = h1.wrapping_add(i.wrapping_mul(h2));
                    if c < 0 {
                        c = !c;
                    }
                    if !f(m.rem(c as u64)) {
                        return false;
                    }
                }
            }
            Probe::Long64 { h1, h2 } => {
                let mut c = i64::from(h1) * i64::from(i32::MAX);
                for _ in 0..k {
                    c = c.wrapping_add(i64::from(h2));
                    let p = if c < 0 { !c } else { c };
                    if !f(m.rem(p as u64)) {
                        return false;
                    }
                }
            }
        }
        true
    }
}

/// `words` 64-bit words, `k` probes a key. The words are atomics so that the parallel
/// build sets bits from many threads through `&self`; the single-threaded paths use
/// `get_mut` (plain loads and stores).
pub(crate) struct Bits {
    words: Box<[AtomicU64]>,
    m: u64,
    fast: FastMod,
    k: u32,
}

impl Bits {
    /// Zeroed words, with core's allocation (huge-page advice, parallel zeroing of big
    /// arrays, an error instead of an abort when memory runs out).
    pub(crate) fn zeroed(words: usize, k: u32) -> Result<Self> {
        let v = bloomforge_core::memory::try_vec_filled(words, 0u64).map_err(|_| {
            Error::Core(bloomforge_core::Error::AllocationFailed {
                bytes: words.saturating_mul(8),
            })
        })?;
        Ok(Self::from_words(v, k))
    }

    pub(crate) fn from_words(words: Vec<u64>, k: u32) -> Self {
        // An in-place map: `AtomicU64` has `u64`'s layout, so no second allocation.
        let words: Box<[AtomicU64]> = words.into_iter().map(AtomicU64::new).collect();
        let m = words.len() as u64 * 64;
        Self {
            words,
            m,
            fast: FastMod::new(m),
            k,
        }
    }

    pub(crate) fn num_bits(&self) -> u64 {
        self.m
    }

    pub(crate) fn num_words(&self) -> usize {
        self.words.len()
    }

    pub(crate) fn k(&self) -> u32 {
        self.k
    }

    pub(crate) fn word(&self, i: usize) -> u64 {
        self.words[i].load(Relaxed)
    }

    pub(crate) fn words(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        self.words.iter().map(|w| w.load(Relaxed))
    }

    #[inline(always)]
    fn prefetch(&self, pos: u64) {
        prefetch(&self.words[(pos >> 6) as usize]);
    }

    #[inline(always)]
    pub(crate) fn get(&self, pos: u64) -> bool {
        self.words[(pos >> 6) as usize].load(Relaxed) & (1 << (pos & 63)) != 0
    }

    /// Sets a key's bits; `true` when one of them was clear (Java's `put` result).
    #[inline]
    pub(crate) fn insert(&mut self, p: Probe) -> bool {
        let (k, m) = (self.k, self.fast);
        let mut changed = false;
        p.each(k, m, |pos| {
            let w = self.words[(pos >> 6) as usize].get_mut();
            let bit = 1u64 << (pos & 63);
            changed |= *w & bit == 0;
            *w |= bit;
            true
        });
        changed
    }

    #[inline]
    pub(crate) fn contains(&self, p: Probe) -> bool {
        p.each(self.k, self.fast, |pos| self.get(pos))
    }

    /// The batch loop: each step hashes [`STEP`] keys, stores and prefetches their
    /// positions, then sets (`shared`: atomically) or tests them.
    fn steps<K>(
        &self,
        keys: &[K],
        hash: &impl Fn(&K) -> Probe,
        mut visit: impl FnMut(usize, &[u64]),
    ) {
        let k = self.k as usize;
        let mut pos = vec![0u64; STEP * k];
        for (s, chunk) in keys.chunks(STEP).enumerate() {
            for (j, key) in chunk.iter().enumerate() {
                let slot = &mut pos[j * k..(j + 1) * k];
                let mut i = 0;
                hash(key).each(self.k, self.fast, |p| {
                    slot[i] = p;
                    i += 1;
                    self.prefetch(p);
                    true
                });
            }
            for j in 0..chunk.len() {
                visit(s * STEP + j, &pos[j * k..(j + 1) * k]);
            }
        }
    }

    pub(crate) fn insert_batch<K>(&mut self, keys: &[K], hash: impl Fn(&K) -> Probe) {
        // The positions are computed through `&self`, then set with plain stores: a
        // locked `or` a probe (the shared path) costs more than the hashing.
        let k = self.k as usize;
        let mut pos = vec![0u64; STEP * k];
        for chunk in keys.chunks(STEP) {
            for (j, key) in chunk.iter().enumerate() {
                let slot = &mut pos[j * k..(j + 1) * k];
                let mut i = 0;
                let this = &*self;
                hash(key).each(this.k, this.fast, |p| {
                    slot[i] = p;
                    i += 1;
                    this.prefetch(p);
                    true
                });
            }
            for &p in &pos[..chunk.len() * k] {
                *self.words[(p >> 6) as usize].get_mut() |= 1 << (p & 63);
            }
        }
    }

    fn insert_batch_shared<K>(&self, keys: &[K], hash: &impl Fn(&K) -> Probe) {
        self.steps(keys, hash, |_, positions| {
            for &p in positions {
                let w = &self.words[(p >> 6) as usize];
                let bit = 1u64 << (p & 63);
                if w.load(Relaxed) & bit == 0 {
                    w.fetch_or(bit, Relaxed);
                }
            }
        });
    }

    pub(crate) fn par_insert_batch<K: Sync>(
        &mut self,
        keys: &[K],
        hash: impl Fn(&K) -> Probe + Sync,
    ) {
        let this = &*self;
        keys.par_chunks(PAR_CHUNK)
            .for_each(|chunk| this.insert_batch_shared(chunk, &hash));
    }

    pub(crate) fn contains_batch<K>(
        &self,
        keys: &[K],
        out: &mut [bool],
        hash: impl Fn(&K) -> Probe,
    ) -> Result<()> {
        if keys.len() != out.len() {
            return Err(Error::Core(bloomforge_core::Error::LengthMismatch {
                keys: keys.len(),
                out: out.len(),
            }));
        }
        self.steps(keys, &hash, |i, positions| {
            out[i] = positions.iter().all(|&p| self.get(p));
        });
        Ok(())
    }

    /// `(set bits / m)^k` (both libraries' `expectedFpp()`).
    pub(crate) fn expected_false_pos(&self) -> f64 {
        (self.count_ones() as f64 / self.m as f64).powi(self.k as i32)
    }

    /// `-m/k ln(1 - ones/m)`: the distinct keys that best explain the set bits.
    pub(crate) fn estimated_len(&self) -> f64 {
        let m = self.m as f64;
        -(m / f64::from(self.k)) * (1.0 - self.count_ones() as f64 / m).ln()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.words().all(|w| w == 0)
    }

    pub(crate) fn count_ones(&self) -> u64 {
        self.words().map(|w| u64::from(w.count_ones())).sum()
    }

    pub(crate) fn clear(&mut self) {
        for w in self.words.iter_mut() {
            *w.get_mut() = 0;
        }
    }

    pub(crate) fn same_shape(&self, other: &Bits) -> bool {
        self.m == other.m && self.k == other.k
    }

    pub(crate) fn union(&mut self, other: &Bits) {
        for (a, b) in self.words.iter_mut().zip(other.words()) {
            *a.get_mut() |= b;
        }
    }

    pub(crate) fn intersect(&mut self, other: &Bits) {
        for (a, b) in self.words.iter_mut().zip(other.words()) {
            *a.get_mut() &= b;
        }
    }

    /// Java's `DataOutputStream` form of the words: a big-endian `int` count, then each
    /// word as a big-endian `long`.
    pub(crate) fn write_be(&self, out: &mut Vec<u8>) {
        out.reserve(4 + 8 * self.words.len());
        out.extend_from_slice(&(self.words.len() as i32).to_be_bytes());
        for w in self.words() {
            out.extend_from_slice(&w.to_be_bytes());
        }
    }

    /// Reads what [`write_be`](Self::write_be) wrote from the start of `bytes`; returns
    /// the words and the bytes after them. `format` names the format in errors.
    pub(crate) fn read_be<'a>(
        bytes: &'a [u8],
        k: u32,
        format: &'static str,
    ) -> Result<(Self, &'a [u8])> {
        let bad = |reason: String| Error::Format { format, reason };
        let Some((count, rest)) = bytes.split_first_chunk::<4>() else {
            return Err(bad(format!(
                "{} bytes where the word count (4 bytes) should be",
                bytes.len()
            )));
        };
        let count = i32::from_be_bytes(*count);
        if count <= 0 {
            return Err(bad(format!("word count {count} (must be positive)")));
        }
        let count = count as usize;
        let need = count * 8;
        if rest.len() < need {
            return Err(bad(format!(
                "truncated: {count} words need {need} bytes, {} present",
                rest.len()
            )));
        }
        let (body, rest) = rest.split_at(need);
        let mut words = Vec::new();
        words
            .try_reserve_exact(count)
            .map_err(|_| Error::Core(bloomforge_core::Error::AllocationFailed { bytes: need }))?;
        words.extend(
            body.chunks_exact(8)
                .map(|c| u64::from_be_bytes(c.try_into().expect("8 bytes"))),
        );
        Ok((Self::from_words(words, k), rest))
    }
}

impl Clone for Bits {
    fn clone(&self) -> Self {
        Self::from_words(self.words().collect(), self.k)
    }
}

impl PartialEq for Bits {
    fn eq(&self, other: &Self) -> bool {
        self.same_shape(other) && self.words().eq(other.words())
    }
}

impl Eq for Bits {}

#[cfg(test)]
mod tests {
    use super::FastMod;

    #[test]
    fn fast_remainder_is_the_remainder() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut divisors = vec![
            1u64,
            2,
            3,
            63,
            64,
            65,
            9600,
            95_872,
            143_808,
            1 << 31,
            (1 << 37) - 64,
        ];
        divisors.extend((0..200).map(|_| next() >> 27 | 1));
        for m in divisors {
            let f = FastMod::new(m);
            for x in [0, 1, m - 1, m, m + 1, u64::MAX, i64::MAX as u64] {
                assert_eq!(f.rem(x), x % m, "{x} % {m}");
            }
            for _ in 0..2000 {
                let x = next();
                assert_eq!(f.rem(x), x % m, "{x} % {m}");
                assert_eq!(f.rem(x >> 1), (x >> 1) % m, "{x} % {m}");
            }
        }
    }
}
