//! The workspace conventions (docs/conventions.md) as they apply to the bitmaps: `len`
//! (distinct values) and `is_empty` on every form.

use bloomforge_bitmap::{AtomicTwoBitmap, TwoBitmap, TwoBitmapView};

#[test]
fn two_bitmap_len_counts_distinct_values() {
    let mut t = TwoBitmap::new(1000).unwrap();
    assert_eq!((t.len(), t.is_empty()), (0, true));
    for x in [1u32, 2, 2, 3, 3, 3, 999] {
        t.insert(x).unwrap();
    }
    assert_eq!(t.len(), 4);
    assert_eq!(t.len(), t.count_distinct());
    let bytes = t.to_bytes();
    let v = TwoBitmapView::from_bytes(&bytes).unwrap();
    assert_eq!((v.len(), v.is_empty()), (4, false));

    let a = AtomicTwoBitmap::new(1000).unwrap();
    assert_eq!((a.len(), a.is_empty()), (0, true));
    for x in [1u32, 2, 2, 3, 3, 3, 999] {
        a.insert(x).unwrap();
    }
    assert_eq!((a.len(), a.is_empty()), (4, false));
    let back = a.into_inner();
    assert!(back == t);
    t.clear();
    assert_eq!((t.len(), t.is_empty()), (0, true));
}

/// `FromIterator` on the atomic bitmaps equals the plain ones'; `Extend` works owned and
/// through `&bitmap` from several threads.
#[test]
fn atomic_bitmaps_collect_and_extend() {
    use bloomforge_bitmap::{AtomicBitmap, Bitmap, Seen};
    let values: Vec<u32> = (0..10_000u32).map(|i| (i * 7919) % 5000).collect();
    let a: AtomicBitmap = values.iter().copied().collect();
    let plain: Bitmap = values.iter().copied().collect();
    assert_eq!(a.universe(), plain.universe());
    assert!(a.into_inner() == plain);
    let t: AtomicTwoBitmap = values.iter().copied().collect();
    let plain: TwoBitmap = values.iter().copied().collect();
    assert!(t.into_inner() == plain);

    let mut a = AtomicBitmap::new(5000).unwrap();
    let mut t = AtomicTwoBitmap::new(5000).unwrap();
    a.extend(values[..1000].iter().copied());
    t.extend(values[..1000].iter().copied());
    std::thread::scope(|s| {
        for chunk in values[1000..].chunks(3000) {
            let (a, t) = (&a, &t);
            s.spawn(move || {
                let (mut a, mut t) = (a, t);
                a.extend(chunk.iter().copied());
                t.extend(chunk.iter().copied());
            });
        }
    });
    assert_eq!(a.len(), 5000);
    assert_eq!(t.len(), 5000);
    assert!((0..5000u32).all(|x| t.seen(x) == Seen::Many));
    let caught = std::panic::catch_unwind(|| {
        let mut a = AtomicBitmap::new(10).unwrap();
        a.extend([1u32, 10]);
    });
    assert!(caught.is_err(), "a value outside the universe panics");
}

/// `TwoBitmap::builder()` mirrors `Bitmap::builder()` (universe, backend).
#[test]
fn two_bitmap_builder() {
    use bloomforge_bitmap::{Backend, BitmapError};
    let t = TwoBitmap::builder()
        .universe(100)
        .backend(Backend::Scalar)
        .build()
        .unwrap();
    assert_eq!(t.universe(), 100);
    assert!(t == TwoBitmap::new(100).unwrap());
    assert!(matches!(
        TwoBitmap::builder().universe(0).build(),
        Err(BitmapError::InvalidUniverse(0))
    ));
    assert_eq!(
        TwoBitmap::builder()
            .universe(64)
            .build()
            .unwrap()
            .universe(),
        64
    );
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

/// `?` from a bitmap error into core's `Error`: a wrapped core error (an I/O failure,
/// with the `io::Error` as its source) comes back as itself, a bitmap-only one as
/// `Error::Filter` that downcasts back.
#[test]
fn errors_convert_into_core_and_keep_their_source() {
    use bloomforge_bitmap::{Bitmap, BitmapError};
    use std::error::Error as _;
    fn read() -> bloomforge_core::Result<Bitmap> {
        Ok(Bitmap::read_from(Broken)?)
    }
    let err = read().unwrap_err();
    assert!(matches!(&err, bloomforge_core::Error::Io(io)
        if io.kind() == Some(std::io::ErrorKind::ConnectionReset)));
    let os = err.source().unwrap().downcast_ref::<std::io::Error>();
    assert_eq!(
        os.map(|e| e.kind()),
        Some(std::io::ErrorKind::ConnectionReset)
    );

    fn out_of_range() -> bloomforge_core::Result<()> {
        Bitmap::new(10)?.try_insert(10)?;
        Ok(())
    }
    let err = out_of_range().unwrap_err();
    let bloomforge_core::Error::Filter(wrapped) = &err else {
        panic!("{err:?}")
    };
    assert!(matches!(
        wrapped.downcast_ref::<BitmapError>(),
        Some(BitmapError::OutOfRange {
            value: 10,
            universe: 10
        })
    ));
}
