//! A `full_u32()` bitmap must not fault in its 512 MiB before the first insert. Alone in
//! its own test binary so no other test's allocations disturb the resident-set reading.

#[cfg(target_os = "linux")]
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

#[cfg(target_os = "linux")]
#[test]
fn full_u32_bitmaps_are_not_faulted_in_before_use() {
    let before = resident_bytes();
    let mut b = bloomforge_bitmap::Bitmap::full_u32().unwrap();
    let mut t = bloomforge_bitmap::TwoBitmap::full_u32().unwrap();
    b.insert(u32::MAX);
    t.insert(0).unwrap();
    let grown = resident_bytes().saturating_sub(before);
    // 1.5 GiB allocated; a few (huge) pages touched.
    assert!(grown < 64 << 20, "resident set grew by {grown} bytes");
    assert!(b.contains(u32::MAX));
    b.clear();
    assert!(
        resident_bytes().saturating_sub(before) < 64 << 20,
        "clear wrote zeros"
    );
}
