//! Cache-line-aligned block types: the unit one key touches.

/// A 512-bit block (one 64-byte cache line) of a [`BlockedBloomFilter`](crate::BlockedBloomFilter),
/// as eight little-endian-ordered `u64` words: bit `p` of the block is bit `p % 64` of
/// word `p / 64`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(C, align(64))]
pub struct Block512 {
    /// The eight words of the block.
    pub words: [u64; 8],
}

/// A 256-bit split block of a [`SplitBlockBloomFilter`](crate::SplitBlockBloomFilter):
/// eight `u32` words, one probe bit per word (the Parquet SBBF block).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(C, align(32))]
pub struct Block256 {
    /// The eight words of the block.
    pub words: [u32; 8],
}

impl Block512 {
    /// The all-zeros block.
    pub const ZERO: Block512 = Block512 { words: [0; 8] };

    /// Number of set bits.
    #[inline]
    pub fn count_ones(&self) -> u32 {
        self.words.iter().map(|w| w.count_ones()).sum()
    }

    /// Whether every bit of `mask` is set in `self`.
    #[inline(always)]
    pub fn contains_mask(&self, mask: &Block512) -> bool {
        self.words
            .iter()
            .zip(&mask.words)
            .fold(0u64, |acc, (w, m)| acc | (m & !w))
            == 0
    }
}

impl Block256 {
    /// The all-zeros block.
    pub const ZERO: Block256 = Block256 { words: [0; 8] };

    /// Number of set bits.
    #[inline]
    pub fn count_ones(&self) -> u32 {
        self.words.iter().map(|w| w.count_ones()).sum()
    }
}

/// Multiplier of the blocked layout's probe sequence: probe `j` of a key with 32-bit
/// hash `h` is the top 9 bits of `h * C^(j+1) mod 2^32` (RocksDB's FastLocalBloom scheme:
/// each probe re-mixes all 32 bits, unlike splitting a hash into 9-bit pieces).
pub const BLOCKED_MULTIPLIER: u32 = 0x9e37_79b9;

/// Position (0..512) of probe `j` of a key whose low 32 hash bits are `h32`, in a blocked
/// filter's block: the top 9 bits of `h32 * C^(j+1) mod 2^32`. Public so structures that
/// share the blocked hashing (the counting filter) derive identical positions: the top 7
/// bits, for a 128-counter line, are this value `>> 2`.
///
/// # Panics
/// If `j >= 64` ([`BLOCKED_MAX_HASHES`]).
#[inline(always)]
pub const fn blocked_position(h32: u32, j: usize) -> u32 {
    h32.wrapping_mul(BLOCKED_POWERS[j]) >> 23
}

/// Largest number of probes a blocked filter supports.
pub const BLOCKED_MAX_HASHES: u32 = 64;

/// `BLOCKED_POWERS[j] = C^(j+1) mod 2^32`, so probe `j` is `(h * BLOCKED_POWERS[j]) >> 23`
/// and all probes can be computed at once in SIMD lanes.
pub(crate) const BLOCKED_POWERS: [u32; BLOCKED_MAX_HASHES as usize] = {
    let mut out = [0u32; BLOCKED_MAX_HASHES as usize];
    let mut acc = BLOCKED_MULTIPLIER;
    let mut j = 0;
    while j < out.len() {
        out[j] = acc;
        acc = acc.wrapping_mul(BLOCKED_MULTIPLIER);
        j += 1;
    }
    out
};

/// [`BLOCKED_POWERS`] zero-extended to 64-bit lanes (for kernels that multiply with
/// `vpmuludq`, one micro-op where a 32-bit `vpmulld` takes two).
pub(crate) const BLOCKED_POWERS_U64: [u64; BLOCKED_MAX_HASHES as usize] = {
    let mut out = [0u64; BLOCKED_MAX_HASHES as usize];
    let mut j = 0;
    while j < out.len() {
        out[j] = BLOCKED_POWERS[j] as u64;
        j += 1;
    }
    out
};

/// The Parquet split-block salts (one odd multiplier per word), from the specification.
pub const SPLIT_SALTS: [u32; 8] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];

/// Types whose all-zero bit pattern is a valid (empty) value, and whose bytes can be
/// viewed directly (`layout::le_bytes`).
///
/// # Safety
/// Implementors must be plain integers or arrays / `repr(C)` structs of them without
/// padding bytes, so that zeroed memory is a valid value and every byte is initialised.
pub(crate) unsafe trait ZeroInit: Sized {}
// SAFETY: an integer.
unsafe impl ZeroInit for u64 {}
// SAFETY: repr(C, align(64)) array of eight u64: 64 bytes, no padding.
unsafe impl ZeroInit for Block512 {}
// SAFETY: repr(C, align(32)) array of eight u32: 32 bytes, no padding.
unsafe impl ZeroInit for Block256 {}
const _: () = {
    assert!(core::mem::size_of::<Block512>() == 64);
    assert!(core::mem::size_of::<Block256>() == 32);
};
