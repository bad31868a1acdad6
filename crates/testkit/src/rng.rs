//! Deterministic pseudo-random generators for tests and the harness's workloads:
//! SplitMix64 (also a bijective counter-to-key map, so generated keys are distinct by
//! construction) and xoshiro256** for streams. Fixed seeds make every statistical test
//! reproducible.

/// The SplitMix64 golden-ratio increment.
pub const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// The SplitMix64 output function: a bijection on `u64`.
#[inline(always)]
pub const fn splitmix64_mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Key number `i` of the stream seeded with `seed`: `mix(seed + (i + 1) * GOLDEN)`.
///
/// For a fixed seed this is a bijection of `i` (an odd multiplier and a bijective mix),
/// so distinct indices give distinct keys: members `0..n` and non-members `n..n + q` are
/// disjoint with no lookup.
#[inline(always)]
pub const fn indexed_key(seed: u64, i: u64) -> u64 {
    splitmix64_mix(seed.wrapping_add(i.wrapping_add(1).wrapping_mul(GOLDEN)))
}

/// SplitMix64 (Steele, Lea, Flood 2014): one add and a mix per output.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator starting at `seed`.
    pub const fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next output.
    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        splitmix64_mix(self.state)
    }

    /// The next `n` outputs.
    pub fn keys(&mut self, n: usize) -> Vec<u64> {
        (0..n).map(|_| self.next_u64()).collect()
    }

    /// A uniform value in `0..n` (Lemire's multiply-shift; `n > 0`).
    #[inline(always)]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

/// xoshiro256** (Blackman, Vigna 2018), seeded through SplitMix64.
#[derive(Clone, Debug)]
pub struct Xoshiro256 {
    s: [u64; 4],
}

impl Xoshiro256 {
    /// A generator whose state is four SplitMix64 outputs of `seed` (never all zero).
    pub fn new(seed: u64) -> Self {
        let mut sm = SplitMix64::new(seed);
        let s = [sm.next_u64(), sm.next_u64(), sm.next_u64(), sm.next_u64()];
        Self { s }
    }

    /// The next output.
    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// A uniform value in `0..n` (Lemire's multiply-shift; `n > 0`).
    #[inline(always)]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_values() {
        // First outputs of SplitMix64 seeded with 0 (Vigna's reference implementation).
        let mut g = SplitMix64::new(0);
        assert_eq!(g.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(g.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn indexed_keys_are_distinct() {
        let mut keys: Vec<u64> = (0..100_000).map(|i| indexed_key(42, i)).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), 100_000);
    }

    #[test]
    fn below_stays_in_range() {
        let mut g = Xoshiro256::new(1);
        assert!((0..10_000).all(|_| g.below(7) < 7));
    }
}
