//! The two MurmurHash3 variants the other systems hash keys with.
//!
//! * [`murmur3_x64_128`]: Guava's `Hashing.murmur3_128()` (seed 0), which feeds its Bloom
//!   filter. The standard x64 128-bit MurmurHash3.
//! * [`spark_hash_bytes`] and [`spark_hash_long`]: Spark's
//!   `org.apache.spark.util.sketch.Murmur3_x86_32` (`hashUnsafeBytes`, `hashLong`), which
//!   feeds its Bloom filter. `hashUnsafeBytes` is *not* the standard x86 32-bit
//!   MurmurHash3 when the length is not a multiple of 4: each trailing byte,
//!   sign-extended, goes through a whole block round (`mixK1`, `mixH1`) instead of being
//!   gathered into one tail word. Spark's filters depend on that, so it is reproduced as
//!   is. [`murmur3_x86_32`] is the standard function, for comparison.
//!
//! Written here rather than taken from a crate: Spark's byte variant exists in no crate,
//! and the `murmur3` crate hashes through `std::io::Read` (a call per block), several
//! times slower than these slice loops on the short keys filters hash. Checked against
//! published vectors and against the real libraries' filters
//! (`crates/interop/tests/data`).

const C1_32: u32 = 0xcc9e_2d51;
const C2_32: u32 = 0x1b87_3593;

#[inline(always)]
fn mix_k1(k1: u32) -> u32 {
    k1.wrapping_mul(C1_32).rotate_left(15).wrapping_mul(C2_32)
}

#[inline(always)]
fn mix_h1(h1: u32, k1: u32) -> u32 {
    (h1 ^ k1)
        .rotate_left(13)
        .wrapping_mul(5)
        .wrapping_add(0xe654_6b64)
}

#[inline(always)]
fn fmix32(mut h: u32, len: u32) -> u32 {
    h ^= len;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

#[inline(always)]
fn body32(data: &[u8], seed: u32) -> u32 {
    let mut h1 = seed;
    for block in data.chunks_exact(4) {
        let k1 = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
        h1 = mix_h1(h1, mix_k1(k1));
    }
    h1
}

/// The standard MurmurHash3 x86 32-bit hash of `data` with `seed`.
///
/// ```
/// use bloomforge_interop::murmur3::murmur3_x86_32;
/// assert_eq!(murmur3_x86_32(b"hello", 0), 0x248b_fa47);
/// ```
pub fn murmur3_x86_32(data: &[u8], seed: u32) -> u32 {
    let aligned = data.len() - data.len() % 4;
    let mut h1 = body32(&data[..aligned], seed);
    let tail = &data[aligned..];
    if !tail.is_empty() {
        let mut k1 = 0u32;
        for (i, &b) in tail.iter().enumerate() {
            k1 |= u32::from(b) << (8 * i);
        }
        h1 ^= mix_k1(k1);
    }
    fmix32(h1, data.len() as u32)
}

/// Spark's `Murmur3_x86_32.hashUnsafeBytes(bytes, seed)`: the x86 32-bit MurmurHash3 body
/// over the whole 4-byte words, then one block round per trailing byte (the byte
/// sign-extended to an `int`), then the standard finalisation. Equal to
/// [`murmur3_x86_32`] when `data.len()` is a multiple of 4.
///
/// ```
/// use bloomforge_interop::murmur3::{murmur3_x86_32, spark_hash_bytes};
/// assert_eq!(spark_hash_bytes(b"abcd", 7), murmur3_x86_32(b"abcd", 7) as i32);
/// assert_ne!(spark_hash_bytes(b"abc", 7), murmur3_x86_32(b"abc", 7) as i32);
/// ```
pub fn spark_hash_bytes(data: &[u8], seed: i32) -> i32 {
    let aligned = data.len() - data.len() % 4;
    let mut h1 = body32(&data[..aligned], seed as u32);
    for &b in &data[aligned..] {
        h1 = mix_h1(h1, mix_k1(b as i8 as i32 as u32));
    }
    fmix32(h1, data.len() as u32) as i32
}

/// Spark's `Murmur3_x86_32.hashLong(value, seed)`: the low then the high 32 bits of the
/// value as two blocks, finalised with length 8 (the standard hash of its 8 little-endian
/// bytes).
///
/// ```
/// use bloomforge_interop::murmur3::{murmur3_x86_32, spark_hash_long};
/// let v = -42i64;
/// assert_eq!(spark_hash_long(v, 0), murmur3_x86_32(&v.to_le_bytes(), 0) as i32);
/// ```
#[inline]
pub fn spark_hash_long(value: i64, seed: i32) -> i32 {
    let low = value as u32;
    let high = (value as u64 >> 32) as u32;
    let h1 = mix_h1(seed as u32, mix_k1(low));
    let h1 = mix_h1(h1, mix_k1(high));
    fmix32(h1, 8) as i32
}

const C1_64: u64 = 0x87c3_7b91_1142_53d5;
const C2_64: u64 = 0x4cf5_ad43_2745_937f;

#[inline(always)]
fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

#[inline(always)]
fn mix_k1_64(k1: u64) -> u64 {
    k1.wrapping_mul(C1_64).rotate_left(31).wrapping_mul(C2_64)
}

#[inline(always)]
fn mix_k2_64(k2: u64) -> u64 {
    k2.wrapping_mul(C2_64).rotate_left(33).wrapping_mul(C1_64)
}

/// The standard MurmurHash3 x64 128-bit hash of `data` with `seed`, as its two 64-bit
/// halves `(h1, h2)`: the first and second eight bytes of the digest read little-endian
/// (Guava's `HashCode.asLong()` is `h1`).
///
/// ```
/// use bloomforge_interop::murmur3::murmur3_x64_128;
/// assert_eq!(murmur3_x64_128(b"", 0), (0, 0));
/// ```
pub fn murmur3_x64_128(data: &[u8], seed: u32) -> (u64, u64) {
    let mut h1 = u64::from(seed);
    let mut h2 = u64::from(seed);
    let mut blocks = data.chunks_exact(16);
    for block in &mut blocks {
        let (a, b) = block.split_at(8);
        let k1 = u64::from_le_bytes(a.try_into().expect("8 bytes"));
        let k2 = u64::from_le_bytes(b.try_into().expect("8 bytes"));
        h1 ^= mix_k1_64(k1);
        h1 = h1
            .rotate_left(27)
            .wrapping_add(h2)
            .wrapping_mul(5)
            .wrapping_add(0x52dc_e729);
        h2 ^= mix_k2_64(k2);
        h2 = h2
            .rotate_left(31)
            .wrapping_add(h1)
            .wrapping_mul(5)
            .wrapping_add(0x3849_5ab5);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut k1 = 0u64;
        let mut k2 = 0u64;
        for (i, &b) in tail.iter().enumerate() {
            if i < 8 {
                k1 |= u64::from(b) << (8 * i);
            } else {
                k2 |= u64::from(b) << (8 * (i - 8));
            }
        }
        if tail.len() > 8 {
            h2 ^= mix_k2_64(k2);
        }
        h1 ^= mix_k1_64(k1);
    }
    let len = data.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    (h1, h2)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Published vectors (the reference C++ implementation; the same values as Python's
    // `mmh3`): `murmur3_x86_32` and the two halves of `murmur3_x64_128`.
    #[test]
    fn x86_32_vectors() {
        assert_eq!(murmur3_x86_32(b"", 0), 0);
        assert_eq!(murmur3_x86_32(b"", 1), 0x514e_28b7);
        assert_eq!(murmur3_x86_32(b"", 0xffff_ffff), 0x81f1_6f39);
        assert_eq!(murmur3_x86_32(&[0xff; 4], 0), 0x7629_3b50);
        assert_eq!(murmur3_x86_32(&[0x21, 0x43, 0x65, 0x87], 0), 0xf55b_516b);
        assert_eq!(
            murmur3_x86_32(&[0x21, 0x43, 0x65, 0x87], 0x5082_edee),
            0x2362_f9de
        );
        assert_eq!(murmur3_x86_32(&[0x21, 0x43, 0x65], 0), 0x7e4a_8634);
        assert_eq!(murmur3_x86_32(&[0x21, 0x43], 0), 0xa0f7_b07a);
        assert_eq!(murmur3_x86_32(&[0x21], 0), 0x7266_1cf4);
        assert_eq!(murmur3_x86_32(b"hello", 0), 0x248b_fa47);
        assert_eq!(
            murmur3_x86_32(b"The quick brown fox jumps over the lazy dog", 0),
            0x2e4f_f723
        );
    }

    #[test]
    fn spark_bytes_is_standard_on_whole_words_only() {
        for len in 0..24usize {
            let data: Vec<u8> = (0..len as u8).map(|i| i.wrapping_mul(37) ^ 0x9c).collect();
            let spark = spark_hash_bytes(&data, 0x1234_5678);
            let standard = murmur3_x86_32(&data, 0x1234_5678) as i32;
            assert_eq!(spark == standard, len % 4 == 0, "len {len}");
        }
    }

    #[test]
    fn spark_long_is_the_standard_hash_of_its_bytes() {
        for v in [0i64, 1, -1, i64::MIN, i64::MAX, 0x0123_4567_89ab_cdef] {
            for seed in [0i32, -7, 42] {
                assert_eq!(
                    spark_hash_long(v, seed),
                    murmur3_x86_32(&v.to_le_bytes(), seed as u32) as i32
                );
            }
        }
    }
}
