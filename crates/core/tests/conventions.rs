//! The workspace conventions (docs/conventions.md) as they apply to core's filters:
//! `is_empty` / `estimated_len` on every filter, plain and atomic.

use bloomforge_core::{
    AtomicBlockedBloomFilter, AtomicSplitBlockBloomFilter, AtomicStandardBloomFilter,
    BlockedBloomFilter, SplitBlockBloomFilter, StandardBloomFilter,
};

/// Core's filters cannot count their keys: `is_empty` means "no bit set", which is
/// `estimated_len() == 0`, on the plain and the atomic forms alike.
#[test]
fn atomic_filters_have_is_empty() {
    let a = AtomicBlockedBloomFilter::new(1000, 0.01).unwrap();
    let s = AtomicSplitBlockBloomFilter::new(1000, 0.01).unwrap();
    let t = AtomicStandardBloomFilter::new(1000, 0.01).unwrap();
    assert!(a.is_empty() && s.is_empty() && t.is_empty());
    assert_eq!(
        (a.estimated_len(), s.estimated_len(), t.estimated_len()),
        (0.0, 0.0, 0.0)
    );
    a.insert(&7u64);
    s.insert(&7u64);
    t.insert(&7u64);
    assert!(!a.is_empty() && !s.is_empty() && !t.is_empty());
    assert!(a.estimated_len() > 0.5 && s.estimated_len() > 0.5 && t.estimated_len() > 0.5);
    // The plain forms agree.
    let (a, s, t): (
        BlockedBloomFilter,
        SplitBlockBloomFilter,
        StandardBloomFilter,
    ) = (a.into_inner(), s.into_inner(), t.into_inner());
    assert!(!a.is_empty() && !s.is_empty() && !t.is_empty());
    let mut a = a;
    a.clear();
    assert!(a.is_empty() && a.estimated_len() == 0.0);
}

/// `FromIterator` on the atomic filters equals the plain filter's (same sizing, same
/// bits); `Extend` works owned and through `&filter` from several threads.
#[test]
fn atomic_filters_collect_and_extend() {
    let keys: Vec<u64> = (0..5000u64).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();

    let a: AtomicBlockedBloomFilter = keys.iter().collect();
    let plain: BlockedBloomFilter = keys.iter().collect();
    assert!(a.snapshot() == plain);
    let s: AtomicSplitBlockBloomFilter = keys.iter().collect();
    let plain: SplitBlockBloomFilter = keys.iter().collect();
    assert!(s.snapshot() == plain);
    let t: AtomicStandardBloomFilter = keys.iter().collect();
    let plain: StandardBloomFilter = keys.iter().collect();
    assert!(t.snapshot() == plain);
    assert!(keys
        .iter()
        .all(|k| a.contains(k) && s.contains(k) && t.contains(k)));

    let mut a = AtomicBlockedBloomFilter::new(10_000, 0.01).unwrap();
    let mut s = AtomicSplitBlockBloomFilter::new(10_000, 0.01).unwrap();
    let mut t = AtomicStandardBloomFilter::new(10_000, 0.01).unwrap();
    a.extend(&keys[..100]);
    s.extend(&keys[..100]);
    t.extend(&keys[..100]);
    std::thread::scope(|scope| {
        for chunk in keys[100..].chunks(1300) {
            let (a, s, t) = (&a, &s, &t);
            scope.spawn(move || {
                let (mut a, mut s, mut t) = (a, s, t);
                a.extend(chunk);
                s.extend(chunk);
                t.extend(chunk);
            });
        }
    });
    assert!(keys
        .iter()
        .all(|k| a.contains(k) && s.contains(k) && t.contains(k)));
    let mut seq = BlockedBloomFilter::new(10_000, 0.01).unwrap();
    seq.extend(&keys);
    assert!(a.into_inner() == seq, "concurrent extend lost no bit");
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

/// `Error::Io` keeps the `io::Error` as its source (kind and all); `?` converts an
/// `io::Error`; the message reads as before.
#[test]
fn io_errors_keep_their_source() {
    use bloomforge_core::{Error, IoError};
    use std::error::Error as _;
    let err = BlockedBloomFilter::read_from(Broken).unwrap_err();
    let Error::Io(io) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(io.kind(), Some(std::io::ErrorKind::ConnectionReset));
    assert_eq!(err.to_string(), "i/o: boom");
    let source = err.source().expect("the io::Error is the source");
    let os = source.downcast_ref::<std::io::Error>().unwrap();
    assert_eq!(os.kind(), std::io::ErrorKind::ConnectionReset);

    fn via_question_mark() -> bloomforge_core::Result<()> {
        Err(std::io::Error::other("disk on fire"))?;
        Ok(())
    }
    let err = via_question_mark().unwrap_err();
    assert!(matches!(&err, Error::Io(io) if io.kind() == Some(std::io::ErrorKind::Other)));
    assert!(err.source().is_some());
    // A message-only Io error has no source.
    let plain = Error::Io("payload of 3 bytes".into());
    assert!(plain.source().is_none());
    assert_eq!(plain, Error::Io(IoError::new("payload of 3 bytes")));
}

/// The version error says which versions this crate reads.
#[test]
fn unsupported_version_names_the_readable_versions() {
    use bloomforge_core::format::FORMAT_VERSION;
    let mut bytes = BlockedBloomFilter::new(100, 0.01).unwrap().to_bytes();
    let v = FORMAT_VERSION + 1;
    // The version follows the 4-byte magic.
    bytes[4..6].copy_from_slice(&v.to_le_bytes());
    let err = BlockedBloomFilter::from_bytes(&bytes).unwrap_err();
    assert_eq!(err, bloomforge_core::Error::UnsupportedVersion(v));
    let msg = err.to_string();
    assert!(
        msg.contains(&format!("reads versions 1 to {FORMAT_VERSION}")),
        "{msg}"
    );
    assert!(!msg.contains("reads version 1;"), "{msg}");
}
