//! Thread pools for parallel bulk loading.
//!
//! `par_insert_batch` runs on the current rayon pool; run it inside
//! [`pinned_thread_pool`]`(n)?.install(..)` to load from `n` threads pinned one per core.
//! Pinning happens in each worker's `start_handler`: pinning the calling thread instead
//! would make every worker inherit its single-core affinity.

use crate::{Error, Result};

/// A rayon pool of `threads` workers, worker `i` pinned to core `i % cores` with
/// `core_affinity` (unpinned where the platform cannot report its cores).
///
/// ```
/// use bloomforge_core::{parallel::pinned_thread_pool, AtomicBlockedBloomFilter};
/// let keys: Vec<u64> = (0..100_000).collect();
/// let filter = AtomicBlockedBloomFilter::with_false_pos(0.01).expected_items(100_000)?;
/// pinned_thread_pool(2)?.install(|| filter.par_insert_batch(&keys));
/// assert!(keys.iter().all(|k| filter.contains(k)));
/// # Ok::<(), bloomforge_core::Error>(())
/// ```
///
/// # Errors
/// [`Error::ThreadPool`] if rayon cannot start the threads (or `threads == 0`).
pub fn pinned_thread_pool(threads: usize) -> Result<rayon::ThreadPool> {
    if threads == 0 {
        return Err(Error::ThreadPool("a pool needs at least one thread".into()));
    }
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .start_handler(move |i| {
            if !cores.is_empty() {
                // Pinning is best effort: an unpinned worker is still correct.
                let _ = core_affinity::set_for_current(cores[i % cores.len()]);
            }
        })
        .build()
        .map_err(|e| Error::ThreadPool(e.to_string()))
}
