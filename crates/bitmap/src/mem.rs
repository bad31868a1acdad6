//! Zeroed word arrays that the OS fills lazily.
//!
//! A `full_u32()` bitmap is 512 MiB and a full 2-bitmap 1 GiB; writing zeros into them
//! would fault in every page before the first insert. These arrays come from
//! [`std::alloc::alloc_zeroed`] (`calloc`, which for large sizes maps fresh zero pages the
//! kernel fills on first touch), and are advised for transparent huge pages (core's
//! [`advise_huge_pages`](bloomforge_core::memory::advise_huge_pages), the same advice
//! `try_vec_filled` gives) before anything touches them.

use bloomforge_core::Error;
use core::mem::MaybeUninit;
use core::sync::atomic::AtomicU64;
use std::alloc::{alloc_zeroed, Layout};

/// `n >= 1` zeroed words, or [`Error::AllocationFailed`].
fn raw_zeroed(n: usize) -> Result<*mut u64, Error> {
    let bytes = n.saturating_mul(8);
    let layout = Layout::array::<u64>(n).map_err(|_| Error::AllocationFailed { bytes })?;
    assert!(n > 0, "callers never ask for zero words");
    // SAFETY: the layout has a non-zero size (n >= 1).
    let ptr = unsafe { alloc_zeroed(layout) }.cast::<u64>();
    if ptr.is_null() {
        return Err(Error::AllocationFailed { bytes });
    }
    // SAFETY: `ptr` is a live allocation of `n` u64 (zeroed, so also valid as
    // `MaybeUninit`); the slice is dropped before anything else borrows it.
    let region = unsafe { core::slice::from_raw_parts_mut(ptr.cast::<MaybeUninit<u64>>(), n) };
    bloomforge_core::memory::advise_huge_pages(region);
    Ok(ptr)
}

/// A `Vec` of `n >= 1` zero words whose pages are faulted in only when written.
pub(crate) fn zeroed_words(n: usize) -> Result<Vec<u64>, Error> {
    let ptr = raw_zeroed(n)?;
    // SAFETY: allocated by the global allocator with `Layout::array::<u64>(n)`, which is
    // the layout a `Vec<u64>` of capacity `n` frees with; all `n` words are initialised
    // (zero).
    Ok(unsafe { Vec::from_raw_parts(ptr, n, n) })
}

/// `n >= 1` zero atomic words, allocated like [`zeroed_words`].
pub(crate) fn zeroed_atomic_words(n: usize) -> Result<Box<[AtomicU64]>, Error> {
    let ptr = raw_zeroed(n)?.cast::<AtomicU64>();
    // SAFETY: `AtomicU64` has the size, alignment and bit validity of `u64`, so the
    // zeroed allocation of `Layout::array::<u64>(n)` is `n` valid `AtomicU64`, and the box
    // frees it with `Layout::for_value`, the same layout.
    Ok(unsafe { Box::from_raw(core::ptr::slice_from_raw_parts_mut(ptr, n)) })
}

/// Reinterprets atomic words as plain words (no copy).
pub(crate) fn atomic_into_plain(words: Box<[AtomicU64]>) -> Vec<u64> {
    let n = words.len();
    let ptr = Box::into_raw(words).cast::<u64>();
    // SAFETY: `AtomicU64` has the layout of `u64`; the boxed slice was allocated by the
    // global allocator for `n` such words, the layout `Vec<u64>` with capacity `n` frees.
    // Owning the box means no other thread holds a reference.
    unsafe { Vec::from_raw_parts(ptr, n, n) }
}

/// Reinterprets plain words as atomic words (no copy).
pub(crate) fn plain_into_atomic(words: Vec<u64>) -> Box<[AtomicU64]> {
    let boxed = words.into_boxed_slice();
    let n = boxed.len();
    let ptr = Box::into_raw(boxed).cast::<AtomicU64>();
    // SAFETY: as in `atomic_into_plain`, the other way round.
    unsafe { Box::from_raw(core::ptr::slice_from_raw_parts_mut(ptr, n)) }
}

/// A plain copy of atomic words, one relaxed load each (a snapshot, word by word, while
/// inserts run): what the atomic bitmaps serialize.
pub(crate) fn snapshot(words: &[AtomicU64]) -> Vec<u64> {
    words
        .iter()
        .map(|w| w.load(core::sync::atomic::Ordering::Relaxed))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn zeroed_words_are_zero_and_round_trip_through_atomics() {
        let w = super::zeroed_words(1000).unwrap();
        assert!(w.iter().all(|&x| x == 0));
        let a = super::plain_into_atomic(w);
        a[3].store(7, core::sync::atomic::Ordering::Relaxed);
        let w = super::atomic_into_plain(a);
        assert_eq!(w[3], 7);
        assert_eq!(w.len(), 1000);
    }
}
