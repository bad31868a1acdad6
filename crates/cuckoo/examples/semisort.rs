//! Semi-sorted buckets (Fan et al. 2014, section 5.2), measured without building them
//! into the crate: the decode cost of the 4-slot, 4-bit-prefix encoding against this crate's packed
//! 12-bit buckets, single queries, one run:
//! `cargo run --release -p bloomforge-cuckoo --example semisort -- [keys, default 1M]`.
//!
//! Both tables hold the same fingerprints (12 bits, 4 slots, load 0.94, `keys` keys) and
//! answer the same queries with the crate's derivation (fingerprint, fast range, the
//! alternate bucket). Packed: 48 bits a bucket, the crate's SWAR match. Semi-sorted: the
//! four fingerprints sorted, their 4-bit prefixes (3876 sorted 4-tuples of 0..15) stored as
//! one 12-bit index, the four low bytes as they are: 44 bits a bucket (one bit per
//! fingerprint saved), decoded through a 3876-entry table of `u32` (15.5 KB, L1) and
//! matched with the same SWAR test on 16-bit lanes. Prints ns/query (median of 9 rounds,
//! interleaved) and the two tables' bits per key.

use std::hint::black_box;
use std::time::Instant;

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn fast_range(h: u64, m: u64) -> u64 {
    ((u128::from(h) * u128::from(m)) >> 64) as u64
}

#[inline(always)]
fn probe(h: u64, m: u64) -> (u32, u64, u64) {
    let fp = (((h & 0xffff_ffff) * 0xfff) >> 32) as u32 + 1;
    let i1 = fast_range(h, m);
    let hf = fast_range(u64::from(fp).wrapping_mul(0x9e37_79b9_7f4a_7c15), m);
    let r = hf + m - i1;
    (fp, i1, if r >= m { r - m } else { r })
}

#[inline(always)]
fn read64(t: &[u8], byte: usize) -> u64 {
    u64::from_le_bytes(t[byte..byte + 8].try_into().unwrap())
}

/// SWAR "some field equals fp" over `lo`-marked fields.
#[inline(always)]
fn has(w: u64, fp: u64, lo: u64, hi: u64) -> u64 {
    let x = w ^ (fp * lo);
    x.wrapping_sub(lo) & !x & hi
}

/// Bytes 0..3 of `x` spread to the low bytes of four 16-bit lanes.
#[inline(always)]
fn spread(x: u64) -> u64 {
    let x = (x | x << 16) & 0x0000_ffff_0000_ffff;
    (x | x << 8) & 0x00ff_00ff_00ff_00ff
}

/// ns per query of `q` over `queries`.
fn time(queries: &[u64], q: impl Fn(u64) -> bool) -> f64 {
    let t = Instant::now();
    let mut hits = 0usize;
    for &h in queries {
        hits += usize::from(q(black_box(h)));
    }
    black_box(hits);
    t.elapsed().as_nanos() as f64 / queries.len() as f64
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .map_or(1_000_000, |a| a.parse().expect("keys"));
    let m = (n as f64 / (4.0 * 0.94)).ceil() as u64;
    // The 3876 non-decreasing 4-tuples of prefixes, and their index.
    let mut decode: Vec<u32> = Vec::new();
    let mut index = vec![0u16; 1 << 16];
    for a in 0..16u32 {
        for b in a..16 {
            for c in b..16 {
                for d in c..16 {
                    index[(a | b << 4 | c << 8 | d << 12) as usize] = decode.len() as u16;
                    decode.push(a | b << 8 | c << 16 | d << 24);
                }
            }
        }
    }
    assert_eq!(decode.len(), 3876);
    // Random buckets at load 0.94 (a slot is empty, 0, with probability 0.06).
    let mut rng = 7u64;
    let mut packed = vec![0u8; m as usize * 6 + 16];
    let mut semi = vec![0u8; (m as usize * 44).div_ceil(8) + 16];
    for i in 0..m as usize {
        let mut fps = [0u32; 4];
        for f in &mut fps {
            let r = splitmix(&mut rng);
            *f = if r % 100 < 6 {
                0
            } else {
                (r >> 32) as u32 % 0xfff + 1
            };
        }
        let w: u64 = fps
            .iter()
            .enumerate()
            .fold(0, |a, (j, &f)| a | u64::from(f) << (12 * j));
        packed[6 * i..6 * i + 6].copy_from_slice(&w.to_le_bytes()[..6]);
        fps.sort_unstable();
        let key = fps
            .iter()
            .enumerate()
            .fold(0u32, |a, (j, &f)| a | (f >> 8) << (4 * j));
        let low = fps
            .iter()
            .enumerate()
            .fold(0u64, |a, (j, &f)| a | u64::from(f & 0xff) << (8 * j));
        let code = u64::from(index[key as usize]) | low << 12;
        let bit = 44 * i;
        let old = read64(&semi, bit / 8);
        let merged = old | code << (bit % 8);
        semi[bit / 8..bit / 8 + 8].copy_from_slice(&merged.to_le_bytes());
    }
    let queries: Vec<u64> = (0..n).map(|_| splitmix(&mut rng)).collect();
    let lo12 = 0x0010_0100_1001u64;
    let hi12 = lo12 << 11;
    let lo16 = 0x0001_0001_0001_0001u64;
    let hi16 = lo16 << 15;
    let q_packed = |h: u64| {
        let (fp, i1, i2) = probe(h, m);
        let (w1, w2) = (
            read64(&packed, 6 * i1 as usize),
            read64(&packed, 6 * i2 as usize),
        );
        has(w1, u64::from(fp), lo12, hi12) | has(w2, u64::from(fp), lo12, hi12) != 0
    };
    let q_semi = |h: u64| {
        let (fp, i1, i2) = probe(h, m);
        let bucket = |i: u64| {
            let bit = 44 * i as usize;
            let w = read64(&semi, bit / 8) >> (bit % 8);
            let prefixes = u64::from(decode[(w & 0xfff) as usize]);
            (spread(prefixes) << 8) | spread((w >> 12) & 0xffff_ffff)
        };
        let (l1, l2) = (bucket(i1), bucket(i2));
        has(l1, u64::from(fp), lo16, hi16) | has(l2, u64::from(fp), lo16, hi16) != 0
    };
    // Both encodings answer alike.
    for &h in queries.iter().take(200_000) {
        assert_eq!(q_packed(h), q_semi(h));
    }
    let (mut tp, mut ts) = (Vec::new(), Vec::new());
    for _ in 0..9 {
        tp.push(time(&queries, q_packed));
        ts.push(time(&queries, q_semi));
    }
    tp.sort_by(f64::total_cmp);
    ts.sort_by(f64::total_cmp);
    let bits = |bytes: usize| bytes as f64 * 8.0 / (4.0 * 0.94 * m as f64);
    println!(
        "{n} keys, {m} buckets: packed 12-bit {:.2} ns/query ({:.2} bits/key), semi-sorted {:.2} ns/query ({:.2} bits/key): {:.2}x",
        tp[4],
        bits(packed.len() - 16),
        ts[4],
        bits(semi.len() - 16),
        ts[4] / tp[4]
    );
}
