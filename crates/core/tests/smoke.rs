use bloomforge_core::*;

#[test]
fn smoke_all_backends() {
    for b in Backend::available() {
        let mut f = BlockedBloomFilter::with_false_pos(0.01)
            .expected_items(10_000)
            .unwrap();
        f.set_backend(b).unwrap();
        for i in 0..10_000u64 {
            f.insert(&i);
        }
        assert!((0..10_000u64).all(|i| f.contains(&i)), "{b:?}");
        let fp = (10_000..110_000u64).filter(|i| f.contains(i)).count();
        println!(
            "{b:?} blocked k={} bits={} fp={} exp={}",
            f.num_hashes(),
            f.num_bits(),
            fp as f64 / 1e5,
            f.expected_false_pos()
        );
        let mut s = SplitBlockBloomFilter::with_false_pos(0.01)
            .expected_items(10_000)
            .unwrap();
        s.set_backend(b).unwrap();
        for i in 0..10_000u64 {
            s.insert(&i);
        }
        assert!((0..10_000u64).all(|i| s.contains(&i)));
        let fp = (10_000..110_000u64).filter(|i| s.contains(i)).count();
        println!(
            "{b:?} split bits={} fp={} exp={} est={}",
            s.num_bits(),
            fp as f64 / 1e5,
            s.expected_false_pos(),
            s.estimated_len()
        );
    }
}
