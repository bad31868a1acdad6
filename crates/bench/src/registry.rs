//! The registry: every filter the harness measures, ours first, each an [`Entry`] built
//! by the generic build function of its `subjects_*` module.

use crate::entry;
use crate::subjects::Entry;
use crate::subjects_core::*;
use crate::subjects_cuckoo::{build_cuckoo, build_cuckoofilter, build_scalable_cuckoo};
use crate::subjects_retrieval::{
    build_binary_fuse16, build_binary_fuse8, build_bloomier, build_count_min,
    build_count_min_blocked, build_xor16, build_xor8, build_xorf_bfuse16, build_xorf_xor16,
    build_xorf_xor8,
};
use crate::subjects_stream::{
    build_growable, build_scalable, build_scalable_standard, build_stable,
};

/// Every filter the harness knows, ours first.
pub fn registry() -> Vec<Entry> {
    vec![
        entry!("blocked", Blocked512, Ours, static = false, "BlockedBloomFilter, foldhash", build_blocked),
        entry!("blocked-atomic", Blocked512, Ours, static = false, "AtomicBlockedBloomFilter, foldhash", build_blocked_atomic),
        entry!("split-block", SplitBlock256, Ours, static = false, "SplitBlockBloomFilter, foldhash", build_split),
        entry!("split-block-atomic", SplitBlock256, Ours, static = false, "AtomicSplitBlockBloomFilter, foldhash", build_split_atomic),
        entry!("standard", Standard, Ours, static = false, "StandardBloomFilter, foldhash", build_standard),
        entry!("standard-atomic", Standard, Ours, static = false, "AtomicStandardBloomFilter, foldhash", build_standard_atomic),
        entry!("counting", Counting, Ours, static = false, "CountingBloomFilter, 4-bit counters, 128 per line, foldhash", build_counting),
        entry!("counting-atomic", Counting, Ours, static = false, "AtomicCountingBloomFilter (CAS per word), foldhash", build_counting_atomic),
        entry!("d-left", DLeft, Ours, static = false, "DLeftCountingBloomFilter, d=4, 8 cells; a bits/key budget: 2-bit counters, a target FP: the crate's sizing (4-bit counters); foldhash", build_dleft),
        entry!("cuckoo", Cuckoo, Ours, static = false, "CuckooFilter, 4-slot buckets (2 where 12 bits need it), 12- or 16-bit fingerprints, foldhash", build_cuckoo),
        entry!("cuckoofilter", Cuckoo, Peer, static = false, "cuckoofilter 0.5, 8-bit fingerprints, power-of-two buckets, SipHash-1-3", build_cuckoofilter),
        entry!("scalable-cuckoo", Cuckoo, Peer, static = false, "scalable_cuckoo_filter 0.3, SipHash-1-3, grows", build_scalable_cuckoo),
        entry!("scalable", Scalable, Ours, static = false, "ScalableBloomFilter, blocked-512 slices, n0 = n/100, s = 2, r = 0.85, foldhash", build_scalable),
        entry!("scalable-standard", Scalable, Ours, static = false, "ScalableBloomFilter, standard slices (fewest bits), n0 = n/100, s = 2, r = 0.85, foldhash", build_scalable_standard),
        entry!("growable-bloom", Scalable, Peer, static = false, "growable-bloom-filter 2.1, n0 = n/100, s = 2, r = 0.85, xxh3", build_growable),
        entry!("stable", Stable, Ours, static = false, "StableBloomFilter, 8-bit cells sized to remember the n members (miss <= 1e-9), at its stable point (burn-in), foldhash", build_stable),
        entry!("fastbloom", Standard, Peer, static = false, "fastbloom 0.17 BloomFilter, SipHash-1-3", build_fastbloom),
        entry!("fastbloom-atomic", Standard, Peer, static = false, "fastbloom 0.17 AtomicBloomFilter, SipHash-1-3", build_fastbloom_atomic),
        entry!("bloomfilter", Standard, Peer, static = false, "bloomfilter 3 Bloom, SipHash-1-3 x2, own k", build_bloomfilter),
        entry!("sbbf-rs-safe", SplitBlock256, Peer, static = false, "sbbf-rs-safe 0.3 Filter, XXH64", build_sbbf_rs),
        entry!("parquet-sbbf", SplitBlock256, Peer, static = false, "parquet 59 Sbbf, XXH64, power-of-two size", build_parquet),
        entry!("binary-fuse-8", BinaryFuse8, Ours, static = true, "bloomforge-retrieval BinaryFuseFilter<u8>, foldhash, parallel build (static, build = insert)", build_binary_fuse8),
        entry!("xorf-bfuse8", BinaryFuse8, Peer, static = true, "xorf 0.11 BinaryFuse8 (static, build = insert)", build_xorf),
        entry!("binary-fuse-16", BinaryFuse16, Ours, static = true, "bloomforge-retrieval BinaryFuseFilter<u16>, foldhash, parallel build (static, build = insert)", build_binary_fuse16),
        entry!("xorf-bfuse16", BinaryFuse16, Peer, static = true, "xorf 0.11 BinaryFuse16 (static, build = insert)", build_xorf_bfuse16),
        entry!("xor-8", Xor8, Ours, static = true, "bloomforge-retrieval XorFilter<u8>, foldhash (static, build = insert)", build_xor8),
        entry!("xorf-xor8", Xor8, Peer, static = true, "xorf 0.11 Xor8 (static, build = insert)", build_xorf_xor8),
        entry!("xor-16", Xor16, Ours, static = true, "bloomforge-retrieval XorFilter<u16>, foldhash (static, build = insert)", build_xor16),
        entry!("xorf-xor16", Xor16, Peer, static = true, "xorf 0.11 Xor16 (static, build = insert)", build_xorf_xor16),
        entry!("bloomier-8", Bloomier, Ours, static = true, "bloomforge-retrieval BloomierFilter, 8-bit values + 8-bit fingerprints, query = get (values checked), foldhash (static, build = insert)", build_bloomier),
        entry!("count-min", CountMin, Ours, static = false, "bloomforge-retrieval CountMin<u8> (compact approximator, subtables) as a membership filter: insert(key, 1), present when get > 0; foldhash", build_count_min),
        entry!("count-min-blocked", CountMin, Ours, static = false, "bloomforge-retrieval CountMin<u8>, CellLayout::Blocked (64 cells a line), as a membership filter; foldhash", build_count_min_blocked),
        entry!("hashset", Exact, Reference, static = false, "std HashSet, SipHash-1-3 (exact)", build_hashset),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subjects::{Layout, Sizing, Target};
    use crate::workload::random_u64;

    #[test]
    fn every_entry_builds_and_finds_its_members() {
        let w = random_u64(3000, 3000, 1);
        for target in [Target::BitsPerKey(10.0), Target::FalsePos(0.01)] {
            let s = Sizing {
                n: 3000,
                target,
                seed: 1,
            };
            for e in registry() {
                let mut f = (e.build_u64)(&s, &w.members).unwrap();
                f.insert_all(&w.members);
                assert_eq!(f.count_contains(&w.members), 3000, "{}", e.name);
                assert_eq!(f.wrong_values(&w.members), 0, "{}", e.name);
                let bpk = f.memory_bits() as f64 / 3000.0;
                assert!(bpk > 4.0, "{} {bpk}", e.name);
                // At 10 bits/key the counting filters have 2.5 counters per key and the
                // d-left filter 5-bit remainders: only sanity here.
                let limit = match target {
                    // A budget cannot size a growing or a stable filter: both run at 1 %.
                    Target::BitsPerKey(_)
                        if matches!(e.layout, Layout::Scalable | Layout::Stable) =>
                    {
                        if e.name == "growable-bloom" {
                            0.07
                        } else {
                            0.02
                        }
                    }
                    Target::BitsPerKey(_) => 0.9,
                    // Fixed 8-bit fingerprints: about 2-3 % whatever the target.
                    Target::FalsePos(_) if e.name == "cuckoofilter" => 0.04,
                    // Slices at P r^i: its own bound tends to P / (1 - r) = 6.7 P.
                    Target::FalsePos(p) if e.name == "growable-bloom" => 7.0 * p,
                    // At the stable point, by its construction: at most the target.
                    Target::FalsePos(p) if e.name == "stable" => p * (1.0 + 1e-12),
                    Target::FalsePos(p) => 2.0 * p,
                };
                assert!(f.predict(3000).fp < limit, "{}", e.name);
                // Each row looked up what it inserted: every member found (above), the
                // Bloomier row's values are the stored ones (above), and the stable row's
                // answers are its stable point's (a burned-in filter).
                if e.name == "stable" {
                    let realised = f.realised_fp().unwrap();
                    assert!(realised > 0.001 && realised < 0.03, "stable at {realised}");
                }
            }
        }
    }
}
