//! Units as the report and the plots print them (shared by both, so neither imports the
//! other's helpers).

/// `32768` as `32 KiB`.
pub fn human_bytes(b: u64) -> String {
    let whole = |unit: u32| b >= 1 << unit && b & ((1 << unit) - 1) == 0;
    if whole(30) {
        format!("{} GiB", b >> 30)
    } else if whole(20) {
        format!("{} MiB", b >> 20)
    } else if whole(10) {
        format!("{} KiB", b >> 10)
    } else {
        format!("{b} B")
    }
}
