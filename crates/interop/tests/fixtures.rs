//! Guava's and Spark's filters, bit for bit, against filters the real libraries wrote
//! (`tests/data`, made by `tools/interop/make-fixtures` with Guava 31.1 and Spark 4.3's
//! `spark-sketch` jar; `tools/interop/roundtrip` checks the other direction live).

use crate::common;

use bloomforge_interop::{ForeignFilter, GuavaBloomFilter, SparkBloomFilter};
use common::fixtures::{data_dir, read_keys, read_manifest};

#[test]
fn our_bits_are_the_libraries_bits_and_our_answers_theirs() {
    let dir = data_dir();
    let rows = read_manifest(&dir);
    assert!(rows.len() >= 20, "{} fixtures", rows.len());
    for row in rows {
        let keys = read_keys(&dir.join(&row.keys));
        let probes = read_keys(&dir.join(&row.probes));
        let theirs = std::fs::read(dir.join(format!("{}.bin", row.name))).expect("bin");
        let answers =
            std::fs::read_to_string(dir.join(format!("{}.answers", row.name))).expect("answers");
        let answers = answers.trim_end();
        assert_eq!(answers.len(), probes.len(), "{}", row.name);

        // Built here, three ways: one key at a time, the batch path, the parallel build.
        let mut one = row.empty_filter();
        for k in &keys {
            one.insert(k);
        }
        let mut batch = row.empty_filter();
        batch.insert_batch(&keys);
        let mut par = row.empty_filter();
        rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .expect("pool")
            .install(|| par.par_insert_batch(&keys));
        assert_eq!(one.num_bits(), row.num_bits, "{}: size", row.name);
        for (how, f) in [
            ("insert", &one),
            ("insert_batch", &batch),
            ("par_insert_batch", &par),
        ] {
            assert!(
                f.to_bytes() == theirs,
                "{}: bytes of {how} differ from the library's",
                row.name
            );
        }

        // Read here: the same filter, every key present, the library's answers.
        let read = ForeignFilter::from_bytes(&theirs).expect("readable");
        assert_eq!(read, one, "{}", row.name);
        assert_eq!(read.to_bytes(), theirs);
        assert!(
            keys.iter().all(|k| read.contains(k)),
            "{}: a false negative",
            row.name
        );
        let ours: String = probes
            .iter()
            .map(|k| if read.contains(k) { '1' } else { '0' })
            .collect();
        assert_eq!(ours, answers, "{}: probe answers", row.name);
        let mut batch_answers = vec![false; probes.len()];
        read.contains_batch(&probes, &mut batch_answers)
            .expect("lengths");
        let batch_answers: String = batch_answers
            .iter()
            .map(|&b| if b { '1' } else { '0' })
            .collect();
        assert_eq!(batch_answers, answers, "{}: batch probe answers", row.name);
    }
}

#[test]
fn corrupt_bytes_are_one_line_errors_never_panics() {
    let dir = data_dir();
    let guava = std::fs::read(dir.join("guava-strings-1000-0.01.bin")).expect("bin");
    let spark = std::fs::read(dir.join("spark2-strings-2000-0.03.bin")).expect("bin");
    for good in [&guava, &spark] {
        // Every truncation and one extra byte.
        for len in 0..good.len() {
            let err = ForeignFilter::from_bytes(&good[..len]).expect_err("truncated");
            assert!(!err.to_string().contains('\n'), "{err}");
        }
        let mut longer = good.to_vec();
        longer.push(0);
        let err = ForeignFilter::from_bytes(&longer).expect_err("trailing byte");
        assert!(
            err.to_string().contains("after the filter's words"),
            "{err}"
        );
    }
    let check = |bytes: &[u8], needle: &str| {
        let err = ForeignFilter::from_bytes(bytes).expect_err(needle);
        assert!(err.to_string().contains(needle), "{err} lacks {needle:?}");
    };
    let mut g = guava.clone();
    g[0] = 7;
    check(&g, "neither");
    assert!(GuavaBloomFilter::from_bytes(&g)
        .expect_err("strategy")
        .to_string()
        .contains("unknown strategy ordinal 7"));
    let mut g = guava.clone();
    g[1] = 0;
    check(&g, "Spark"); // [01 00 ..] is not a Spark version either
    let mut g = guava.clone();
    g[2..6].copy_from_slice(&(-3i32).to_be_bytes());
    check(&g, "word count -3");
    let mut g = guava.clone();
    g[2..6].copy_from_slice(&i32::MAX.to_be_bytes());
    check(&g, "truncated"); // refused before allocating 16 GiB
    let mut s = spark.clone();
    s[3] = 3;
    check(&s, "neither");
    assert!(SparkBloomFilter::from_bytes(&s)
        .expect_err("version")
        .to_string()
        .contains("unknown version 3"));
    let mut s = spark.clone();
    s[4..8].copy_from_slice(&0i32.to_be_bytes());
    check(&s, "0 hash functions");
    let mut s = spark.clone();
    s[4..8].copy_from_slice(&i32::MAX.to_be_bytes());
    check(&s, "hash functions");
    // Guava's bytes read as Spark's and the reverse: refused, naming the format.
    let err = ForeignFilter::from_bytes_as(&guava, bloomforge_interop::ForeignFormat::SparkV2)
        .expect_err("guava as spark");
    assert!(err.to_string().contains("spark"), "{err}");
}

#[test]
fn union_and_intersection_need_the_same_shape() {
    let mut a = GuavaBloomFilter::new(1000, 0.01).expect("a");
    let mut b = GuavaBloomFilter::new(1000, 0.01).expect("b");
    a.insert("x");
    b.insert("y");
    let mut both = a.clone();
    both.union(&b).expect("same shape");
    assert!(both.contains("x") && both.contains("y"));
    let mut common = both.clone();
    common.intersect(&a).expect("same shape");
    assert_eq!(common, a);
    let other = GuavaBloomFilter::new(2000, 0.01).expect("c");
    assert!(a.union(&other).is_err());
    let mut s1 = SparkBloomFilter::new(1000, 0.01).expect("s1");
    let s2 = SparkBloomFilter::with_version(bloomforge_interop::SparkVersion::V2, 1000, 0.01, 42)
        .expect("s2");
    let err = s1.union(&s2).expect_err("seeds differ");
    assert!(
        err.to_string().contains("seed 0") && err.to_string().contains("seed 42"),
        "{err}"
    );
}

#[test]
fn parameters_the_libraries_refuse_are_errors() {
    // Guava: zero bits ("data length is zero!"), k over a byte; Spark: zero items.
    assert!(GuavaBloomFilter::new(1, 0.9).is_err());
    assert!(GuavaBloomFilter::new(100, 1e-80).is_err());
    assert!(GuavaBloomFilter::new(100, 0.0).is_err());
    assert!(GuavaBloomFilter::new(100, f64::NAN).is_err());
    assert!(SparkBloomFilter::new(0, 0.01).is_err());
    assert!(SparkBloomFilter::new(100, 1.0).is_err());
    // Guava takes zero expected items as one.
    assert_eq!(
        GuavaBloomFilter::new(0, 0.01).expect("n = 0").num_bits(),
        GuavaBloomFilter::new(1, 0.01).expect("n = 1").num_bits()
    );
}
