//! Static rows from `bloomforge-retrieval`, registered in
//! [`registry`](crate::registry::registry) beside their xorf 0.11 peers: ours
//! `binary-fuse-8`, `binary-fuse-16`, `xor-8`, `xor-16` against xorf's `BinaryFuse8`,
//! `BinaryFuse16`, `Xor8`, `Xor16` (`xorf-bfuse8`, `xorf-bfuse16`, `xorf-xor8`,
//! `xorf-xor16`), and `bloomier-8` (a `BloomierFilter` of 8-bit values with 8-bit
//! fingerprints, timed by `get`); `count-min` and `count-min-blocked` (a `CountMin<u8>`
//! in subtables or in blocked lines, used as a membership filter: `insert(key, 1)`,
//! present when `get(key) > 0`).
//!
//! All are static: built from the member keys by the row's build function (the "insert"
//! time is the build), one size whatever the budget (binary fuse about 9 / 18 bits/key
//! above a million keys, xor 1.23 x 8 / 16 + a little; more for small sets), FP 2^-8 or
//! 2^-16. Ours hashes every key with core's foldhash (`DefaultHasher`, the sizing's seed)
//! and builds on rayon's pool; xorf takes the `u64` key itself (std's SipHash for
//! strings). Our fuse and xor rows also time `contains_batch` (pipelined, prefetched);
//! xorf has no batch query. The harness checks every row's answers (no member missed, batch and single
//! queries agree, and for the Bloomier row every member's value, [`Subject::wrong_values`])
//! before it reports a number.

use crate::subjects::{Sizing, Subject, Target};
use crate::theory::{self, math, Prediction};
use crate::workload::BenchKey;
use crate::BenchError;
use bloomforge_retrieval::{
    BinaryFuseFilter, BloomierFilter, CellLayout, CountMin, Fingerprint, XorFilter,
};

/// A bloomforge binary fuse filter (static: built from the members).
pub struct BinaryFuse<F: Fingerprint>(BinaryFuseFilter<F>);

impl<F: Fingerprint, K: BenchKey> Subject<K> for BinaryFuse<F> {
    fn insert_all(&mut self, _keys: &[K]) {}
    #[inline]
    fn contains_one(&self, key: &K) -> bool {
        self.0.contains(key)
    }
    fn contains_batch(&self, keys: &[K], out: &mut [bool]) -> bool {
        self.0.contains_batch(keys, out).is_ok()
    }
    fn memory_bits(&self) -> u64 {
        self.0.memory_bytes() * 8
    }
    fn num_hashes(&self) -> Option<u32> {
        Some(3)
    }
    fn predict(&self, _n: u64) -> Prediction {
        theory::fixed(self.0.expected_false_pos())
    }
}

fn fuse_err(filter: &'static str, e: impl std::fmt::Display) -> BenchError {
    BenchError::Build {
        filter,
        reason: e.to_string(),
    }
}

/// The `binary-fuse-8` row: `BinaryFuseFilter<u8>` built from the members.
///
/// # Errors
/// [`BenchError::Build`] if construction fails.
pub fn build_binary_fuse8<K: BenchKey>(
    s: &Sizing,
    keys: &[K],
) -> Result<Box<dyn Subject<K>>, BenchError> {
    let filter = BinaryFuseFilter::<u8>::build_from(keys, s.seed)
        .map_err(|e| fuse_err("binary-fuse-8", e))?;
    Ok(Box::new(BinaryFuse(filter)))
}

/// The `binary-fuse-16` row: `BinaryFuseFilter<u16>` built from the members.
///
/// # Errors
/// [`BenchError::Build`] if construction fails.
pub fn build_binary_fuse16<K: BenchKey>(
    s: &Sizing,
    keys: &[K],
) -> Result<Box<dyn Subject<K>>, BenchError> {
    let filter = BinaryFuseFilter::<u16>::build_from(keys, s.seed)
        .map_err(|e| fuse_err("binary-fuse-16", e))?;
    Ok(Box::new(BinaryFuse(filter)))
}

/// A bloomforge xor filter (static: built from the members).
pub struct Xor<F: Fingerprint>(XorFilter<F>);

impl<F: Fingerprint, K: BenchKey> Subject<K> for Xor<F> {
    fn insert_all(&mut self, _keys: &[K]) {}
    #[inline]
    fn contains_one(&self, key: &K) -> bool {
        self.0.contains(key)
    }
    fn contains_batch(&self, keys: &[K], out: &mut [bool]) -> bool {
        self.0.contains_batch(keys, out).is_ok()
    }
    fn memory_bits(&self) -> u64 {
        self.0.memory_bytes() * 8
    }
    fn num_hashes(&self) -> Option<u32> {
        Some(3)
    }
    fn predict(&self, _n: u64) -> Prediction {
        theory::fixed(self.0.expected_false_pos())
    }
}

/// The `xor-8` row: `XorFilter<u8>` built from the members.
///
/// # Errors
/// [`BenchError::Build`] if construction fails.
pub fn build_xor8<K: BenchKey>(s: &Sizing, keys: &[K]) -> Result<Box<dyn Subject<K>>, BenchError> {
    let filter = XorFilter::<u8>::build_from(keys, s.seed).map_err(|e| fuse_err("xor-8", e))?;
    Ok(Box::new(Xor(filter)))
}

/// The `xor-16` row: `XorFilter<u16>` built from the members.
///
/// # Errors
/// [`BenchError::Build`] if construction fails.
pub fn build_xor16<K: BenchKey>(s: &Sizing, keys: &[K]) -> Result<Box<dyn Subject<K>>, BenchError> {
    let filter = XorFilter::<u16>::build_from(keys, s.seed).map_err(|e| fuse_err("xor-16", e))?;
    Ok(Box::new(Xor(filter)))
}

/// Value bits and fingerprint bits of the `bloomier-8` row.
pub const BLOOMIER_BITS: (u32, u32) = (8, 8);

/// The value the `bloomier-8` row stores for `key`: the xor of its first and last bytes
/// (of its plain encoding; 0 for an empty string). Cheap, so checking a member's value
/// costs next to nothing beside the `get` it checks.
#[inline(always)]
pub fn bloomier_value<K: BenchKey>(key: &K) -> u32 {
    key.with_bytes(|b| match (b.first(), b.last()) {
        (Some(x), Some(y)) => u32::from(x ^ y),
        _ => 0,
    })
}

/// A bloomforge Bloomier filter mapping each member to [`bloomier_value`]; a query is
/// `get(key).is_some()` (`None` for a non-member except with probability 2^-8), and
/// [`Subject::wrong_values`] checks the members' values.
pub struct Bloomier(BloomierFilter);

impl<K: BenchKey> Subject<K> for Bloomier {
    fn insert_all(&mut self, _keys: &[K]) {}
    #[inline]
    fn contains_one(&self, key: &K) -> bool {
        self.0.get(key).is_some()
    }
    fn memory_bits(&self) -> u64 {
        self.0.memory_bytes() * 8
    }
    fn num_hashes(&self) -> Option<u32> {
        Some(3)
    }
    fn predict(&self, _n: u64) -> Prediction {
        theory::fixed(self.0.expected_false_pos())
    }
    fn wrong_values(&self, members: &[K]) -> usize {
        members
            .iter()
            .filter(|k| self.0.get(*k) != Some(bloomier_value(*k)))
            .count()
    }
}

/// The `bloomier-8` row: `BloomierFilter` of [`BLOOMIER_BITS`] (8-bit values, 8-bit
/// fingerprints) built from `(member, bloomier_value(member))` (the pairs borrow the
/// keys; making them is part of the build time).
///
/// # Errors
/// [`BenchError::Build`] if construction fails.
pub fn build_bloomier<K: BenchKey>(
    s: &Sizing,
    keys: &[K],
) -> Result<Box<dyn Subject<K>>, BenchError> {
    let pairs: Vec<(&K, u32)> = keys.iter().map(|k| (k, bloomier_value(k))).collect();
    let (v, f) = BLOOMIER_BITS;
    let filter = BloomierFilter::build_with_seed(&pairs, v, f, s.seed)
        .map_err(|e| fuse_err("bloomier-8", e))?;
    Ok(Box::new(Bloomier(filter)))
}

/// An xorf filter over `BenchKey::fuse_key` (`BinaryFuse16`, `Xor8`, `Xor16`; xorf's
/// `BinaryFuse8` is [`Fuse8`](crate::subjects_core::Fuse8)).
pub struct Xorf<T> {
    filter: T,
    bits: u64,
    fp: f64,
}

impl<T: xorf::Filter<u64> + Send + Sync, K: BenchKey> Subject<K> for Xorf<T> {
    fn insert_all(&mut self, _keys: &[K]) {}
    #[inline]
    fn contains_one(&self, key: &K) -> bool {
        self.filter.contains(&key.fuse_key())
    }
    fn memory_bits(&self) -> u64 {
        self.bits
    }
    fn num_hashes(&self) -> Option<u32> {
        Some(3)
    }
    fn predict(&self, _n: u64) -> Prediction {
        theory::fixed(self.fp)
    }
}

fn fuse_keys<K: BenchKey>(keys: &[K]) -> Vec<u64> {
    keys.iter().map(BenchKey::fuse_key).collect()
}

/// The `xorf-bfuse16` row: xorf's `BinaryFuse16` of the members' `fuse_key`s.
///
/// # Errors
/// [`BenchError::Build`] if construction fails.
pub fn build_xorf_bfuse16<K: BenchKey>(
    _: &Sizing,
    keys: &[K],
) -> Result<Box<dyn Subject<K>>, BenchError> {
    let filter = xorf::BinaryFuse16::try_from_iterator(keys.iter().map(BenchKey::fuse_key))
        .map_err(|e| fuse_err("xorf-bfuse16", e))?;
    let bits = filter.fingerprints.len() as u64 * 16;
    Ok(Box::new(Xorf {
        filter,
        bits,
        fp: 1.0 / 65536.0,
    }))
}

/// The `xorf-xor8` row: xorf's `Xor8` of the members' `fuse_key`s.
///
/// # Errors
/// Never (xorf's `Xor8` construction does not fail); the signature is the registry's.
pub fn build_xorf_xor8<K: BenchKey>(
    _: &Sizing,
    keys: &[K],
) -> Result<Box<dyn Subject<K>>, BenchError> {
    let filter = xorf::Xor8::from(&fuse_keys(keys)[..]);
    let bits = filter.fingerprints.len() as u64 * 8;
    Ok(Box::new(Xorf {
        filter,
        bits,
        fp: 1.0 / 256.0,
    }))
}

/// The `xorf-xor16` row: xorf's `Xor16` of the members' `fuse_key`s.
///
/// # Errors
/// Never (xorf's `Xor16` construction does not fail); the signature is the registry's.
pub fn build_xorf_xor16<K: BenchKey>(
    _: &Sizing,
    keys: &[K],
) -> Result<Box<dyn Subject<K>>, BenchError> {
    let filter = xorf::Xor16::from(&fuse_keys(keys)[..]);
    let bits = filter.fingerprints.len() as u64 * 16;
    Ok(Box::new(Xorf {
        filter,
        bits,
        fp: 1.0 / 65536.0,
    }))
}

/// A count-min sketch (`CountMin<u8>`: the compact approximator over the additive
/// lattice) as a membership filter: every member inserted with count 1, a key present
/// when `get` is above 0, i.e. when every one of its cells was touched. That is the
/// false-positive event of a partitioned Bloom filter (subtables: `(1 - (1 - 1/s)^n)^k`
/// for subtables of `s` cells) or of a blocked one (64 `u8` cells a line, probes with
/// replacement: core's `blocked_fp_exact_load`), which the harness checks.
pub struct CountMinRow(CountMin<u8>);

impl<K: BenchKey> Subject<K> for CountMinRow {
    fn insert_all(&mut self, keys: &[K]) {
        for k in keys {
            self.0.insert(k, 1);
        }
    }
    #[inline]
    fn contains_one(&self, key: &K) -> bool {
        self.0.get(key) > 0
    }
    fn contains_batch(&self, keys: &[K], out: &mut [bool]) -> bool {
        if out.len() != keys.len() {
            return false;
        }
        // `get_batch` writes counts: a block at a time into a stack buffer (no allocation
        // per call), then the test.
        let mut counts = [0u8; 256];
        for (keys, out) in keys.chunks(counts.len()).zip(out.chunks_mut(counts.len())) {
            let counts = &mut counts[..keys.len()];
            if self.0.get_batch(keys, counts).is_err() {
                return false;
            }
            for (o, &c) in out.iter_mut().zip(counts.iter()) {
                *o = c > 0;
            }
        }
        true
    }
    fn memory_bits(&self) -> u64 {
        self.0.cells() as u64 * 8
    }
    fn num_hashes(&self) -> Option<u32> {
        Some(self.0.num_hashes())
    }
    fn predict(&self, n: u64) -> Prediction {
        let (m, k) = (self.0.cells() as u64, self.0.num_hashes());
        match self.0.layout() {
            CellLayout::Subtables => {
                let s = (m / u64::from(k)) as f64;
                Prediction {
                    fp: (-(n as f64 * (-1.0 / s).ln_1p()).exp_m1()).powi(k as i32),
                    instance_sd: math::std_fp_instance_sd(m as f64, n as f64, k),
                }
            }
            CellLayout::Blocked => Prediction {
                fp: math::blocked_fp_exact_load(m, n, 64, k, math::ProbeModel::Replace),
                instance_sd: math::blocked_fp_instance_sd(m, n, 64, k, math::ProbeModel::Replace),
            },
        }
    }
}

/// A `CountMin<u8>` in `layout` for a sizing: a bits-per-key budget buys `c / 8` cells a
/// key and the best `k <= 16` for the layout's formula; a target rate is the crate's own
/// sizing (`new(n, p)` with the layout).
fn count_min(s: &Sizing, layout: CellLayout) -> Result<CountMinRow, BenchError> {
    let name = match layout {
        CellLayout::Subtables => "count-min",
        CellLayout::Blocked => "count-min-blocked",
    };
    match s.target {
        Target::BitsPerKey(c) => {
            let cells = (s.bits(c) / 8).max(1);
            let per_key = cells as f64 / s.n as f64;
            let k = match layout {
                CellLayout::Subtables => math::std_best_k(per_key, 16).0,
                CellLayout::Blocked => {
                    math::best_k(|k| math::blocked_fp_cached(per_key, 64, k), 16).0
                }
            };
            CountMin::<u8>::with_layout(
                layout,
                cells as usize,
                k as usize,
                bloomforge_core::DefaultHasher::with_seed(s.seed),
            )
        }
        Target::FalsePos(p) => CountMin::<u8>::builder()
            .expected_items(s.n)
            .false_pos(p)
            .seed(s.seed)
            .layout(layout)
            .build(),
    }
    .map(CountMinRow)
    .map_err(|e| fuse_err(name, e))
}

/// The `count-min` row: `CountMin<u8>` in subtables.
///
/// # Errors
/// [`BenchError::Build`] if the table cannot be made.
pub fn build_count_min<K: BenchKey>(
    s: &Sizing,
    _: &[K],
) -> Result<Box<dyn Subject<K>>, BenchError> {
    Ok(Box::new(count_min(s, CellLayout::Subtables)?))
}

/// The `count-min-blocked` row: `CountMin<u8>` in blocked lines.
///
/// # Errors
/// [`BenchError::Build`] if the table cannot be made.
pub fn build_count_min_blocked<K: BenchKey>(
    s: &Sizing,
    _: &[K],
) -> Result<Box<dyn Subject<K>>, BenchError> {
    Ok(Box::new(count_min(s, CellLayout::Blocked)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subjects::Target;
    use crate::workload::random_u64;

    /// Ours and xorf's answer alike on members and stay near 2^-8 on others.
    #[test]
    fn ours_and_xorf_agree_on_members() {
        let w = random_u64(20_000, 20_000, 3);
        let s = Sizing {
            n: 20_000,
            target: Target::BitsPerKey(9.0),
            seed: 3,
        };
        let ours = build_binary_fuse8(&s, &w.members).unwrap();
        assert_eq!(ours.count_contains(&w.members), 20_000);
        // 2^-8 of 20 000 non-members: mean 78, sd 8.8; 200 is 14 sd out (p < 1e-12).
        assert!(ours.count_contains(&w.non_members) < 200);
        let bpk = ours.memory_bits() as f64 / 20_000.0;
        assert!((8.0..12.0).contains(&bpk), "{bpk}");
    }

    /// The count-min rows, sized by a target rate and by a bits-per-key budget: every
    /// member found, batch answers equal to single ones, and the FP at the layout's
    /// theory (within 7 binomial sd plus 10 % of the rate for the instance spread, which
    /// at 50 000 keys is about 1 %: false alarm far below 1e-6).
    #[test]
    fn count_min_rows_find_members_at_their_theory() {
        let n = 50_000;
        let w = random_u64(n, 200_000, 7);
        for target in [Target::FalsePos(0.01), Target::BitsPerKey(40.0)] {
            let s = Sizing {
                n: n as u64,
                target,
                seed: 7,
            };
            let rows = [
                build_count_min(&s, &w.members).unwrap(),
                build_count_min_blocked(&s, &w.members).unwrap(),
            ];
            for mut row in rows {
                row.insert_all(&w.members);
                assert_eq!(row.count_contains(&w.members), n);
                let mut out = vec![false; w.non_members.len()];
                assert!(row.contains_batch(&w.non_members, &mut out));
                assert!(w
                    .non_members
                    .iter()
                    .zip(&out)
                    .all(|(k, &o)| o == row.contains_one(k)));
                let fp = out.iter().filter(|&&o| o).count() as f64 / 200_000.0;
                let p = row.predict(n as u64).fp;
                let sd = (p * (1.0 - p) / 200_000.0).sqrt();
                assert!(
                    (fp - p).abs() < 7.0 * sd + 0.1 * p,
                    "{target:?}: {fp} against {p}"
                );
            }
        }
    }

    /// Every static row of this file and its xorf peer: all members found (the Bloomier
    /// row with their values), FP near its 2^-bits, bits/key in range.
    #[test]
    fn every_static_row_and_its_peer() {
        type Build = fn(&Sizing, &[u64]) -> Result<Box<dyn Subject<u64>>, BenchError>;
        let n = 50_000;
        let w = random_u64(n, 200_000, 5);
        let s = Sizing {
            n: n as u64,
            target: Target::BitsPerKey(9.0),
            seed: 5,
        };
        let rows: [(&str, Build, f64, (f64, f64)); 9] = [
            ("binary-fuse-8", build_binary_fuse8, 8.0, (8.0, 12.0)),
            ("binary-fuse-16", build_binary_fuse16, 16.0, (16.0, 24.0)),
            ("xor-8", build_xor8, 8.0, (9.5, 10.5)),
            ("xor-16", build_xor16, 16.0, (19.0, 21.0)),
            ("bloomier-8", build_bloomier, 8.0, (16.0, 24.0)),
            (
                "xorf-bfuse8",
                crate::subjects_core::build_xorf,
                8.0,
                (8.0, 12.0),
            ),
            ("xorf-bfuse16", build_xorf_bfuse16, 16.0, (16.0, 24.0)),
            ("xorf-xor8", build_xorf_xor8, 8.0, (9.5, 10.5)),
            ("xorf-xor16", build_xorf_xor16, 16.0, (19.0, 21.0)),
        ];
        for (name, build, fp_bits, (lo, hi)) in rows {
            let f = build(&s, &w.members).unwrap();
            assert_eq!(f.count_contains(&w.members), n, "{name}");
            assert_eq!(f.wrong_values(&w.members), 0, "{name}");
            let p = (-fp_bits).exp2();
            assert_eq!(f.predict(n as u64).fp, p, "{name}");
            // Non-members: binomial(200 000, p); the mean plus 7 sd (and 12 for 2^-16,
            // mean 3) is passed with probability below 1e-11 (Chernoff, p < 1e-7).
            let q = w.non_members.len() as f64;
            let limit = q * p + 7.0 * (q * p).sqrt() + 12.0;
            let x = f.count_contains(&w.non_members) as f64;
            assert!(x < limit, "{name}: {x} false positives, limit {limit}");
            if fp_bits == 8.0 {
                // At 2^-8 (mean 781) the lower tail too: 7 sd below is below 1e-11.
                assert!(x > q * p - 7.0 * (q * p).sqrt(), "{name}: {x}");
            }
            let bpk = f.memory_bits() as f64 / n as f64;
            assert!((lo..hi).contains(&bpk), "{name}: {bpk} bits/key");
        }
    }

    /// The Bloomier row's check catches a wrong value: a filter built with other values
    /// answers every member (`contains_one`), but `wrong_values` counts them.
    #[test]
    fn bloomier_wrong_values_are_caught() {
        let keys: Vec<String> = (0..2000).map(|i| format!("key-{i}")).collect();
        let pairs: Vec<(&String, u32)> = keys
            .iter()
            .map(|k| (k, (bloomier_value(k) + 1) & 0xff))
            .collect();
        let f = Bloomier(BloomierFilter::build_with_seed(&pairs, 8, 8, 1).unwrap());
        assert_eq!(Subject::<String>::count_contains(&f, &keys), 2000);
        assert_eq!(f.wrong_values(&keys), 2000);
        assert_eq!(bloomier_value(&String::new()), 0);
        assert_eq!(bloomier_value(&0x0100_0000_0000_00ffu64), 0xfe);
    }
}
