//! The workspace conventions (docs/conventions.md) as they apply to the stream filters:
//! `estimated_len` (with the reason there is no `len`) and `is_empty`.

use bloomforge_stream::{AttenuatedBloomFilter, ScalableBloomFilter, StableBloomFilter};

/// The scalable filter's count is an estimate: a key that was a false positive when
/// inserted is not counted, and a union adds both sides' counts.
#[test]
fn scalable_estimated_len_undercounts_false_positives_and_double_counts_unions() {
    let mut f = ScalableBloomFilter::builder()
        .expected_items(100)
        .false_pos(0.2)
        .seed(3)
        .build()
        .unwrap();
    assert!(f.is_empty() && f.estimated_len() == 0.0);
    let mut fp_at_insert = 0u64;
    for k in 0..5000u64 {
        if f.contains(&k) {
            fp_at_insert += 1;
        }
        f.insert(&k).unwrap();
    }
    assert!(
        fp_at_insert > 0,
        "a loose filter has false positives at insert"
    );
    assert_eq!(f.estimated_len(), (5000 - fp_at_insert) as f64);
    assert!(!f.is_empty());
    // Repeated keys are not counted again.
    let before = f.estimated_len();
    for k in 0..100u64 {
        f.insert(&k).unwrap();
    }
    assert_eq!(f.estimated_len(), before);
    // The union of a filter with its copy holds the same keys, counted twice.
    let mut g = f.clone();
    g.union(&f).unwrap();
    assert_eq!(g.estimated_len(), 2.0 * before);
    // The former name still answers, as an integer (deprecated: it is an estimate).
    #[allow(deprecated)]
    let old = f.len();
    assert_eq!(old as f64, f.estimated_len());
    f.clear();
    assert!(f.is_empty() && f.estimated_len() == 0.0);
}

/// The stable filter forgets: `estimated_len` follows the keys still remembered (it
/// levels off at the stable point instead of growing with the stream), `is_empty` is
/// "every cell zero".
#[test]
fn stable_estimated_len_levels_off() {
    let mut f = StableBloomFilter::builder()
        .cells(1 << 14)
        .cell_bits(3)
        .false_pos(0.01)
        .seed(5)
        .rng_seed(9)
        .build()
        .unwrap();
    assert!(f.is_empty() && f.estimated_len() == 0.0);
    for k in 0..100u64 {
        f.insert(&k);
    }
    let small = f.estimated_len();
    assert!((80.0..120.0).contains(&small), "{small}");
    for k in 100..200_000u64 {
        f.insert(&k);
    }
    let at_stable = f.estimated_len();
    for k in 200_000..400_000u64 {
        f.insert(&k);
    }
    let later = f.estimated_len();
    assert!(at_stable < 100_000.0, "{at_stable}");
    assert!(
        (later / at_stable - 1.0).abs() < 0.1,
        "{at_stable} vs {later}"
    );
    assert!(!f.is_empty());
    f.clear();
    assert!(f.is_empty() && f.estimated_len() == 0.0);
}

/// The attenuated filter counts the node's own keys only.
#[test]
fn attenuated_counts_local_keys() {
    let mut a = AttenuatedBloomFilter::builder()
        .node_id(1)
        .expected_items(1000)
        .build()
        .unwrap();
    let mut b = AttenuatedBloomFilter::builder()
        .node_id(2)
        .expected_items(1000)
        .build()
        .unwrap();
    assert!(a.is_empty() && a.estimated_len() == 0.0);
    for k in 0..200u64 {
        b.insert(&k);
    }
    a.add_neighbour(2).unwrap();
    b.add_neighbour(1).unwrap();
    a.merge_from_neighbour(&b).unwrap();
    assert!(
        a.is_empty(),
        "what a neighbour reaches is not the node's own"
    );
    assert_eq!(a.route(&5u64), Some((2, 1)));
    let est = b.estimated_len();
    assert!((190.0..210.0).contains(&est), "{est}");
    assert!(!b.is_empty());
}

/// A reader that fails with an OS-style error.
struct Broken;
impl std::io::Read for Broken {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        Err(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "boom",
        ))
    }
}

/// `?` from a stream error into core's `Error` keeps the source chain: a stopped batch
/// (its cause, `TooManySlices`, as the source) becomes `Error::Filter` with the same
/// message and source; an I/O failure comes back as core's `Io` with the `io::Error`.
#[test]
fn errors_convert_into_core_and_keep_their_source() {
    use bloomforge_stream::StreamError;
    use std::error::Error as _;
    fn overflow() -> Result<u64, StreamError> {
        let mut f = ScalableBloomFilter::builder()
            .expected_items(10)
            .max_slices(1)
            .build()?;
        let keys: Vec<u64> = (0..1000).collect();
        f.insert_batch(&keys)
    }
    let local = overflow().unwrap_err();
    assert!(
        matches!(local, StreamError::BatchStopped { .. }),
        "{local:?}"
    );
    fn into_core() -> bloomforge_core::Result<u64> {
        Ok(overflow()?)
    }
    let err = into_core().unwrap_err();
    let bloomforge_core::Error::Filter(wrapped) = &err else {
        panic!("{err:?}")
    };
    assert!(matches!(
        wrapped.downcast_ref::<StreamError>(),
        Some(StreamError::BatchStopped { .. })
    ));
    assert_eq!(err.to_string(), local.to_string());
    // The source is the boxed cause (`Box<StreamError>`, the field's type).
    let cause = err.source().expect("the cause passes through");
    assert!(matches!(
        cause.downcast_ref::<Box<StreamError>>().map(|b| &**b),
        Some(StreamError::TooManySlices { .. })
    ));

    fn read() -> bloomforge_core::Result<StableBloomFilter> {
        Ok(StableBloomFilter::read_from(Broken)?)
    }
    let err = read().unwrap_err();
    let os = err.source().unwrap().downcast_ref::<std::io::Error>();
    assert_eq!(
        os.map(|e| e.kind()),
        Some(std::io::ErrorKind::ConnectionReset)
    );
}
