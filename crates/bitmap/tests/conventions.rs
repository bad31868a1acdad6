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
    let back = a.into_two_bitmap();
    assert!(back == t);
    t.clear();
    assert_eq!((t.len(), t.is_empty()), (0, true));
}
