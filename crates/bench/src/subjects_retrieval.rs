//! Binary fuse rows from `bloomforge-retrieval`, registered in
//! [`registry`](crate::subjects::registry) beside xorf's `BinaryFuse8` (`xorf-bfuse8`).
//!
//! Both are static: built from the member keys by the row's build function (the "insert"
//! time is the build), one size whatever the budget (about 9 bits/key above a million
//! keys, more for small sets), FP 2^-8. Ours hashes every key with core's foldhash
//! (`DefaultHasher`, the sizing's seed) and builds on rayon's pool; xorf takes the `u64`
//! key itself (std's SipHash for strings). The harness checks every row's answers (no
//! member missed, batch and single queries agree) before it reports a number.

use crate::subjects::{Sizing, Subject};
use crate::theory::{self, Prediction};
use crate::workload::BenchKey;
use crate::BenchError;
use bloomforge_retrieval::{BinaryFuseFilter, Fingerprint};

/// A bloomforge binary fuse filter (static: built from the members).
pub struct BinaryFuse<F: Fingerprint>(BinaryFuseFilter<F>);

impl<F: Fingerprint, K: BenchKey> Subject<K> for BinaryFuse<F> {
    fn insert_all(&mut self, _keys: &[K]) {}
    #[inline]
    fn contains_one(&self, key: &K) -> bool {
        self.0.contains(key)
    }
    fn memory_bits(&self) -> u64 {
        self.0.memory_bytes() as u64 * 8
    }
    fn num_hashes(&self) -> Option<u32> {
        Some(3)
    }
    fn predict(&self, _n: u64) -> Prediction {
        theory::fixed(self.0.expected_false_pos())
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
    let filter =
        BinaryFuseFilter::<u8>::build_from(keys, s.seed).map_err(|e| BenchError::Build {
            filter: "binary-fuse-8",
            reason: e.to_string(),
        })?;
    Ok(Box::new(BinaryFuse(filter)))
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
}
