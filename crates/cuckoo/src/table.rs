//! Fingerprint sizes, the packed bucket table and the bucket-match kernels.
//!
//! A bucket of `b` slots of `f` bits is `b f / 8` bytes (`b` in {2, 4, 8}, `f` in
//! {8, 12, 16}: always whole bytes); slot `j` of bucket `i` is the little-endian bit
//! field at bit `8 i (b f / 8) + j f`. The table carries [`PAD`] zero bytes after the last
//! bucket so every kernel can load 16 bytes at any bucket's start. A slot holding 0 is
//! empty; fingerprints take the values `1..2^f`.
//!
//! The match "is `fp` in bucket `i1` or `i2`" exists once as scalar code (the oracle, a
//! loop over the slots) and once as an AVX2 kernel that loads both buckets into one
//! 256-bit register (one bucket per 128-bit lane) and answers with one compare and one
//! movemask: `vpcmpeqb` for 8-bit, `vpcmpeqw` for 16-bit fingerprints, and for packed 12-bit
//! fingerprints a `vpshufb` + shift + blend that widens them to 16-bit lanes first.
//! Without AVX2, a bucket of at most 8 bytes (every 2- and 4-slot bucket) is matched by
//! the SWAR kernel instead of the slot loop ([`Kernel::matches_one`] and the scalar batch
//! loop): one `u64` per bucket and a "has a zero field" test. Every kernel is tested
//! against the scalar oracle.

use bloomforge_core::Backend;

/// Zero bytes after the last bucket (a 16-byte load at any bucket start stays inside).
pub(crate) const PAD: usize = 16;

mod sealed {
    pub trait Sealed {}
}

/// A fingerprint size: [`Fp8`], [`Fp12`] (packed, the default) or [`Fp16`].
pub trait Fingerprint: sealed::Sealed + Copy + Send + Sync + core::fmt::Debug + 'static {
    /// Bits per fingerprint.
    const BITS: u32;
    /// `2^BITS - 1`: the mask of a slot.
    const MASK: u32 = (1u32 << Self::BITS) - 1;
}

/// 8-bit fingerprints: `2 b / 2^8` false positives (3.1 % at 4-slot buckets).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Fp8;
/// 12-bit fingerprints packed two per three bytes: 0.19 % at 4-slot buckets, 0.098 % at
/// 2-slot buckets. The default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Fp12;
/// 16-bit fingerprints: 0.012 % at 4-slot buckets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Fp16;

impl sealed::Sealed for Fp8 {}
impl sealed::Sealed for Fp12 {}
impl sealed::Sealed for Fp16 {}
impl Fingerprint for Fp8 {
    const BITS: u32 = 8;
}
impl Fingerprint for Fp12 {
    const BITS: u32 = 12;
}
impl Fingerprint for Fp16 {
    const BITS: u32 = 16;
}

/// The little-endian `u32` at `ptr`.
///
/// # Safety
/// `ptr..ptr + 4` is valid for reads (any alignment: the read is unaligned) and not
/// written during the call.
#[inline(always)]
unsafe fn read_u32(ptr: *const u8) -> u32 {
    // SAFETY: the caller guarantees four readable bytes; `read_unaligned` has no alignment
    // requirement.
    u32::from_le(unsafe { ptr.cast::<u32>().read_unaligned() })
}

/// Slot `slot` of the bucket starting at byte `bucket_start` of `table`.
///
/// # Safety
/// - `table..table + bucket_start + bucket_bytes + PAD` is valid for reads, where
///   `bucket_bytes` is the table's bucket size in bytes: true for every bucket start of a
///   table laid out as the module describes (`PAD` zero bytes after the last bucket).
/// - `slot < bucket_size` (the table's slots per bucket), so the unaligned 4-byte read at
///   byte `slot * F::BITS / 8` of the bucket ends before `bucket_bytes + 4`.
/// - Nothing writes those bytes during the call.
#[inline(always)]
pub(crate) unsafe fn slot_at<F: Fingerprint>(
    table: *const u8,
    bucket_start: usize,
    slot: usize,
) -> u32 {
    let bit = slot * F::BITS as usize;
    // SAFETY: the field starts in byte `bit / 8 < bucket_bytes` of the bucket, so the four
    // bytes read end before `bucket_bytes + 4 <= bucket_bytes + PAD` (caller's contract).
    let word = unsafe { read_u32(table.add(bucket_start + bit / 8)) };
    (word >> (bit % 8)) & F::MASK
}

/// Writes `value` (at most `F::MASK`) into slot `slot` of the bucket at `bucket_start`.
///
/// # Safety
/// As [`slot_at`], for reads and writes: `table..table + bucket_start + bucket_bytes +
/// PAD` is valid for reads and writes, `slot < bucket_size`, and nothing else accesses the
/// four bytes read and written (unaligned) during the call. (`value > F::MASK` would
/// corrupt the neighbouring slot, not memory outside the table.)
#[inline(always)]
pub(crate) unsafe fn set_slot<F: Fingerprint>(
    table: *mut u8,
    bucket_start: usize,
    slot: usize,
    value: u32,
) {
    let bit = slot * F::BITS as usize;
    // SAFETY: the same four bytes as `slot_at` reads, inside the table (caller).
    unsafe {
        let p = table.add(bucket_start + bit / 8).cast::<u32>();
        let word = u32::from_le(p.read_unaligned());
        let shift = bit % 8;
        let word = (word & !(F::MASK << shift)) | (value << shift);
        p.write_unaligned(word.to_le());
    }
}

/// Scalar oracle: whether `fp` is in the bucket at byte `b1` or `b2`.
///
/// # Safety
/// Both `b1` and `b2` satisfy the contract of [`slot_at`] for `table`, and `bucket_size`
/// is the table's slots per bucket (every `slot < bucket_size` is read).
#[inline(always)]
pub(crate) unsafe fn matches_scalar<F: Fingerprint>(
    table: *const u8,
    b1: usize,
    b2: usize,
    fp: u32,
    bucket_size: usize,
) -> bool {
    let mut hit = false;
    for j in 0..bucket_size {
        // SAFETY: forwarded from the caller.
        unsafe {
            hit |= slot_at::<F>(table, b1, j) == fp;
            hit |= slot_at::<F>(table, b2, j) == fp;
        }
    }
    hit
}

/// SWAR kernel for buckets of at most 8 bytes (every 2- and 4-slot bucket, 8 slots of
/// 8 bits): whether `fp` is in the bucket at byte `b1` or `b2`. Each bucket is one
/// unaligned `u64` load, xor-ed with `fp` in each of its `b` fields, and the "has a zero
/// field" test `(x - lo) & !x & hi` answers for all fields at once (exact for "any": a
/// borrow only runs upward, so the bytes past the bucket never disturb its fields). Both
/// tests are or-ed before the one branch, so the two loads issue together; no vector
/// registers, so it inlines into any caller (no call through a `target_feature`
/// boundary) on every backend.
///
/// # Safety
/// Both `b1` and `b2` satisfy the contract of [`slot_at`] for `table`: 8 bytes are read
/// (unaligned) from each bucket start, inside `bucket_bytes + PAD`. `bucket_size * F::BITS
/// <= 64` as well (a larger bucket overflows the field masks: a wrong answer or a panic,
/// not an out-of-bounds read).
#[inline(always)]
pub(crate) unsafe fn matches_swar<F: Fingerprint>(
    table: *const u8,
    b1: usize,
    b2: usize,
    fp: u32,
    bucket_size: usize,
) -> bool {
    debug_assert!(swar_fits::<F>(bucket_size));
    let f = F::BITS as usize;
    // Ones in the lowest bit of each of the bucket's fields; `hi` their top bits.
    let lo: u64 = match bucket_size {
        2 => 1 | 1 << f,
        4 => 1 | 1 << f | 1 << (2 * f) | 1 << (3 * f),
        _ => (0..bucket_size).fold(0u64, |a, j| a | 1 << (j * f)),
    };
    let hi = lo << (f - 1);
    let pattern = u64::from(fp) * lo;
    // SAFETY: `slot_at`'s contract gives `bucket_bytes + PAD >= 8` readable bytes from
    // each bucket start; `read_unaligned` needs no alignment.
    let (w1, w2) = unsafe {
        (
            u64::from_le(table.add(b1).cast::<u64>().read_unaligned()),
            u64::from_le(table.add(b2).cast::<u64>().read_unaligned()),
        )
    };
    let (x1, x2) = (w1 ^ pattern, w2 ^ pattern);
    let z = (x1.wrapping_sub(lo) & !x1) | (x2.wrapping_sub(lo) & !x2);
    z & hi != 0
}

/// Whether the SWAR kernel covers buckets of `bucket_size` slots of `F`.
#[inline(always)]
pub(crate) fn swar_fits<F: Fingerprint>(bucket_size: usize) -> bool {
    bucket_size * F::BITS as usize <= 64
}

/// AVX2 kernel: whether `fp` is in the bucket at byte `b1` or `b2`, with one compare.
///
/// # Safety
/// - The CPU must support AVX2; callers check with `Backend::is_available()` before
///   [`Kernel::for_backend`] gives `Kernel::Avx2`.
/// - `table + b1 .. table + b1 + PAD` and `table + b2 .. table + b2 + PAD` are valid for
///   reads (16 bytes, or 8 for buckets of at most 8 bytes, are loaded unaligned from each)
///   and not written during the call: true for two bucket starts of a table laid out as
///   the module describes.
/// - `bucket_size` is the table's slots per bucket (for the lane mask).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn matches_avx2<F: Fingerprint>(
    table: *const u8,
    b1: usize,
    b2: usize,
    fp: u32,
    bucket_size: usize,
) -> bool {
    use core::arch::x86_64::*;
    // Buckets of up to 8 bytes (every 2- and 4-slot bucket) are read with 8-byte loads:
    // a 16-byte load would cross into the next cache line twice as often (for 8-byte
    // buckets, one in eight; an 8-byte load at a multiple of 8 never does).
    // SAFETY: 16 bytes (so also 8) from each bucket start are within the table (caller).
    let (lo, hi) = unsafe {
        if bucket_size * F::BITS as usize <= 64 {
            (
                _mm_loadl_epi64(table.add(b1).cast::<__m128i>()),
                _mm_loadl_epi64(table.add(b2).cast::<__m128i>()),
            )
        } else {
            (
                _mm_loadu_si128(table.add(b1).cast::<__m128i>()),
                _mm_loadu_si128(table.add(b2).cast::<__m128i>()),
            )
        }
    };
    let v = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi);
    let (eq, valid_bytes) = match F::BITS {
        8 => (
            _mm256_cmpeq_epi8(v, _mm256_set1_epi8(fp as u8 as i8)),
            bucket_size,
        ),
        16 => (
            _mm256_cmpeq_epi16(v, _mm256_set1_epi16(fp as u16 as i16)),
            2 * bucket_size,
        ),
        _ => {
            // Widen the packed 12-bit fields to 16-bit lanes: lane j takes bytes
            // (12 j) / 8 and the next; even lanes keep the low 12 bits, odd lanes shift
            // right by 4.
            let ctl = _mm256_setr_epi8(
                0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 7, 8, 9, 10, 10, 11, 0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 7,
                8, 9, 10, 10, 11,
            );
            let w = _mm256_shuffle_epi8(v, ctl);
            let even = _mm256_and_si256(w, _mm256_set1_epi16(0x0fff));
            let odd = _mm256_srli_epi16::<4>(w);
            let lanes = _mm256_blend_epi16::<0b1010_1010>(even, odd);
            (
                _mm256_cmpeq_epi16(lanes, _mm256_set1_epi16(fp as u16 as i16)),
                2 * bucket_size,
            )
        }
    };
    let half = (1u32 << valid_bytes) - 1;
    (_mm256_movemask_epi8(eq) as u32) & (half | (half << 16)) != 0
}

/// Which bucket-match kernel a filter runs (from core's [`Backend`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    Scalar,
    #[cfg(target_arch = "x86_64")]
    Avx2,
}

impl Kernel {
    /// The kernel for `backend`: AVX2 for `Avx2` and `Avx512` (two buckets of at most 16
    /// bytes fill one 256-bit register; 512 bits would only add idle lanes), scalar for
    /// `Scalar` and `Wide`. The caller has checked `backend.is_available()`.
    pub(crate) fn for_backend(backend: Backend) -> Kernel {
        match backend {
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 | Backend::Avx512 => Kernel::Avx2,
            _ => Kernel::Scalar,
        }
    }

    /// The single-query match (`contains`): on the scalar kernel (the `Scalar` and `Wide`
    /// backends, every CPU without AVX2) the SWAR kernel wherever the bucket fits a `u64`
    /// (every 2- and 4-slot bucket), else this kernel. On AVX2 the AVX2 kernel stays: in
    /// cache (20K keys) a SWAR single query measured 3.2 ns with its mask fixed at compile
    /// time and 3.5 ns with the bucket-size dispatch, against 3.3 ns for the AVX2 call.
    ///
    /// # Safety
    /// - Both bucket starts satisfy the contract of [`slot_at`] for `table` (which covers
    ///   the SWAR and AVX2 kernels' 8- and 16-byte reads), and `bucket_size` is the
    ///   table's slots per bucket.
    /// - For `Kernel::Avx2`, the CPU supports AVX2: an `Avx2` kernel comes from
    ///   [`for_backend`](Self::for_backend) of a backend that passed
    ///   `Backend::is_available()`.
    #[inline(always)]
    pub(crate) unsafe fn matches_one<F: Fingerprint>(
        self,
        table: *const u8,
        b1: usize,
        b2: usize,
        fp: u32,
        bucket_size: usize,
    ) -> bool {
        match self {
            // SAFETY: forwarded from the caller; the SWAR kernel only where the bucket fits
            // a `u64`.
            Kernel::Scalar => unsafe {
                if swar_fits::<F>(bucket_size) {
                    matches_swar::<F>(table, b1, b2, fp, bucket_size)
                } else {
                    matches_scalar::<F>(table, b1, b2, fp, bucket_size)
                }
            },
            // SAFETY: forwarded; `Avx2` only exists for a CPU with AVX2.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { matches_avx2::<F>(table, b1, b2, fp, bucket_size) },
        }
    }

    /// Whether `fp` is in the bucket at byte `b1` or `b2`, by this kernel alone (the slot
    /// loop for `Scalar`): what the oracle tests compare.
    ///
    /// # Safety
    /// As [`matches_one`](Self::matches_one): both bucket starts satisfy the contract of
    /// [`slot_at`] for `table`, `bucket_size` is the table's, and for `Kernel::Avx2` the
    /// CPU supports AVX2.
    #[cfg(test)]
    #[inline(always)]
    pub(crate) unsafe fn matches<F: Fingerprint>(
        self,
        table: *const u8,
        b1: usize,
        b2: usize,
        fp: u32,
        bucket_size: usize,
    ) -> bool {
        match self {
            // SAFETY: forwarded from the caller.
            Kernel::Scalar => unsafe { matches_scalar::<F>(table, b1, b2, fp, bucket_size) },
            // SAFETY: forwarded; `Avx2` only exists for a CPU with AVX2.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { matches_avx2::<F>(table, b1, b2, fp, bucket_size) },
        }
    }
}
