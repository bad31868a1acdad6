//! [`AtomicCountingBloomFilter`]: the counting filter with `&self` insert, remove and
//! query, built on one compare-exchange per touched word.

use crate::error::{CountingError, CountingShape};
use crate::layout::{
    line_index, line_mask, prefetch, standard_positions, AtomicCounterLine, CounterLayout,
    CounterLine, MAX_HASHES, PREFETCH_AHEAD,
};
use crate::nibble::{
    atomic_decrement_report, atomic_increment, get_at, min_of, nonzero, COUNTER_MAX,
};
use crate::plain::{check_batch_len, counter_statistics, split_position, CountingBloomFilter};
use bloomforge_core::builder::BuildFilter;
use bloomforge_core::hash::{hasher_fingerprint, DefaultHasher};
use bloomforge_core::{Count, Filter, RemoveOutcome};
use core::fmt;
use core::hash::{BuildHasher, Hash};
use core::sync::atomic::Ordering::Relaxed;

/// A [`CountingBloomFilter`] whose insert, remove and query take `&self`: safe from any
/// number of threads (`Sync`), same layout and hashing, converts to and from the plain
/// filter for free.
///
/// Each touched `u64` word (16 counters) is updated with one compare-exchange loop that
/// recomputes the new value from the value it replaces, so an update is never lost, a
/// counter never passes 15 and never goes below 0. A key's counters live in several words
/// (of one cache line in the blocked layout), updated one after another: an insert or
/// remove is atomic per word, not per key.
///
/// # What is guaranteed under concurrency
///
/// * **Never an underflow, never a lost saturation.** A counter is decremented only by an
///   exchange that saw it at 1..=14, incremented only by one that saw it below 15.
/// * **Removes of inserted keys are exact.** If every `remove(k)` is matched by an earlier
///   `insert(k)` that *happened before* it (same thread, or ordered by a join, lock,
///   channel, barrier...), each removed key's counters are at least 1 whenever the remove
///   reaches them, so every decrement lands. Then the final counters equal those of the
///   sequential filter running the same operations in some order consistent with each
///   word's history; in particular, while no counter saturates, they equal the
///   sequential result exactly (increments and decrements commute). No false negatives.
/// * **`remove` racing with an `insert` of the same key it is not ordered after** (e.g.
///   the key's only insert runs concurrently). `remove` first checks that all the key's
///   counters are non-zero (`Err(NotPresent)`, nothing changed, if not), then decrements
///   word by word. Seeing a partial insert it may report `NotPresent`, or pass the check
///   and then find a counter at 0 because a racing remove emptied it: that decrement is
///   **skipped**, never applied below zero. A skipped decrement leaves the counter one
///   higher than the sequential result: the filter may keep answering `true` for the
///   key (a false positive) and `count` may be higher. `remove` returns `Ok(())` in that
///   case (its other decrements have landed and cannot be withdrawn atomically).
///   It may also pass the check on a partial insert because a counter the insert has not
///   reached yet is held at 1 by *another* key: its decrement then takes that key's count
///   to 0 until the insert lands there, so **during the race another key can read absent
///   (a transient false negative)**. Once both calls have returned, the counters are never
///   below the sequential result, so no key reads absent afterwards. Callers who need
///   no false negatives at every instant order each `remove` after its `insert`.
/// * **Queries** (`contains`, `count`) use relaxed loads; they see every operation that
///   happened before them. A query racing with an insert or remove of the same key may
///   see it partially (some words updated): `contains` is then `true` or `false`, and
///   `count` a value between the before and after minimum.
/// * Removing a key that was never inserted is the caller's error exactly as in the
///   plain filter (see [`CountingBloomFilter`]).
///
/// `Relaxed` ordering suffices: the filter publishes nothing but its counters, each
/// counter update is one read-modify-write of its word (the word's modification order
/// contains every update), and visibility across threads comes from whatever
/// synchronization orders the caller's operations.
///
/// ```
/// use bloomforge_counting::{AtomicCountingBloomFilter, CountingBloomFilter};
/// let f = AtomicCountingBloomFilter::with_false_pos(0.01).expected_items(1000)?;
/// std::thread::scope(|s| {
///     s.spawn(|| f.insert(&1u64));
///     s.spawn(|| f.insert(&2u64));
/// });
/// f.remove(&1u64)?;
/// let plain: CountingBloomFilter = f.into_inner();
/// assert!(plain.contains(&2u64) && !plain.contains(&1u64));
/// # Ok::<(), bloomforge_counting::CountingError>(())
/// ```
pub struct AtomicCountingBloomFilter<S = DefaultHasher> {
    lines: Box<[AtomicCounterLine]>,
    num_counters: u64,
    k: u32,
    layout: CounterLayout,
    /// The kernels' backend, taken from the plain filter (chosen once, not per query).
    backend: bloomforge_core::Backend,
    hasher: S,
}

impl AtomicCountingBloomFilter {
    /// Reads the bytes of [`CountingBloomFilter::to_bytes`] (either type's), converted
    /// for free.
    ///
    /// # Errors
    /// As [`CountingBloomFilter::from_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, CountingError> {
        CountingBloomFilter::from_bytes(bytes).map(Self::from)
    }

    /// Reads one serialized filter from `reader`, as [`CountingBloomFilter::read_from`].
    ///
    /// # Errors
    /// As [`CountingBloomFilter::read_from`].
    pub fn read_from<R: std::io::Read>(reader: R) -> Result<Self, CountingError> {
        CountingBloomFilter::read_from(reader).map(Self::from)
    }
}

bloomforge_core::builder_constructors! {
    AtomicCountingBloomFilter,
    new: " and the blocked layout",
    false_pos: "A blocked-layout filter, sized as \
        [`CountingBloomFilter::with_false_pos`]; for the standard layout convert a plain \
        one: `AtomicCountingBloomFilter::from(plain)`.",
    with_num_counters: "a blocked-layout filter of `counters` counters",
}

impl<S> BuildFilter for AtomicCountingBloomFilter<S> {
    type Filter<S2: BuildHasher> = AtomicCountingBloomFilter<S2>;
    type Error = CountingError;

    fn for_false_pos<S2: BuildHasher>(
        fp: f64,
        items: u64,
        hasher: S2,
    ) -> Result<AtomicCountingBloomFilter<S2>, CountingError> {
        CountingBloomFilter::sized_for(CounterLayout::Blocked, fp, items, hasher)
            .map(AtomicCountingBloomFilter::from)
    }

    fn for_bits_and_hashes<S2: BuildHasher>(
        counters: u64,
        k: u32,
        hasher: S2,
    ) -> Result<AtomicCountingBloomFilter<S2>, CountingError> {
        CountingBloomFilter::with_shape(CounterLayout::Blocked, counters, k, hasher)
            .map(AtomicCountingBloomFilter::from)
    }
}

impl<S> From<CountingBloomFilter<S>> for AtomicCountingBloomFilter<S> {
    /// Free: the lines are reinterpreted in place.
    fn from(plain: CountingBloomFilter<S>) -> Self {
        let len = plain.lines.len();
        let ptr = Box::into_raw(plain.lines).cast::<AtomicCounterLine>();
        // SAFETY: AtomicCounterLine has the size and alignment of CounterLine (checked at
        // compile time) and AtomicU64 has u64's in-memory representation; the allocation
        // is reinterpreted in place with its length and owned by the new box alone.
        let lines = unsafe { Box::from_raw(core::ptr::slice_from_raw_parts_mut(ptr, len)) };
        Self {
            lines,
            num_counters: plain.num_counters,
            k: plain.k,
            layout: plain.layout,
            backend: plain.backend,
            hasher: plain.hasher,
        }
    }
}

impl<S> From<AtomicCountingBloomFilter<S>> for CountingBloomFilter<S> {
    fn from(atomic: AtomicCountingBloomFilter<S>) -> Self {
        atomic.into_inner()
    }
}

impl<S> AtomicCountingBloomFilter<S> {
    /// The plain filter with the same counters. Free: the lines are reinterpreted in place.
    pub fn into_inner(self) -> CountingBloomFilter<S> {
        let len = self.lines.len();
        let ptr = Box::into_raw(self.lines).cast::<CounterLine>();
        // SAFETY: the inverse of `From<CountingBloomFilter>`; owning the box means no other
        // thread still accesses the atomics.
        let lines = unsafe { Box::from_raw(core::ptr::slice_from_raw_parts_mut(ptr, len)) };
        let mut plain = CountingBloomFilter {
            lines,
            num_counters: self.num_counters,
            k: self.k,
            layout: self.layout,
            backend: self.backend,
            hasher: self.hasher,
            items: 0,
        };
        plain.items = plain.estimated_len().round() as u64;
        plain
    }

    /// The words of every line (relaxed loads).
    fn line_words(&self) -> impl Iterator<Item = [u64; 8]> + '_ {
        self.lines
            .iter()
            .map(|l| core::array::from_fn(|i| l.words[i].load(Relaxed)))
    }

    counter_statistics!();

    /// Whether every counter is zero (every query answers `false`; `estimated_len() == 0`).
    /// The atomic filter keeps no exact count (one shared counter would serialise its
    /// threads), so it has no `len()`: [`estimated_len`](Self::estimated_len) estimates it,
    /// and the plain filter from [`into_inner`](Self::into_inner) starts from that estimate.
    /// Relaxed loads: a snapshot while other threads insert.
    pub fn is_empty(&self) -> bool {
        self.lines
            .iter()
            .all(|l| l.words.iter().all(|w| w.load(Relaxed) == 0))
    }
}

impl<S: BuildHasher> AtomicCountingBloomFilter<S> {
    /// Increments `key`'s counters from any thread. Returns `true` if they were all
    /// non-zero just before this call's update of each word.
    #[inline]
    pub fn insert<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.insert_hash(self.hasher.hash_one(key))
    }

    /// Removes one occurrence of `key` from any thread (see the type's docs for races).
    /// The outcome is [`CountingBloomFilter::remove`]'s: `Saturated` when one of the key's
    /// counters is at 15 and was left as it is.
    ///
    /// # Errors
    /// [`CountingError::NotPresent`], with nothing changed, if one of its counters is 0.
    #[inline]
    pub fn remove<T: Hash + ?Sized>(&self, key: &T) -> Result<RemoveOutcome, CountingError> {
        self.remove_hash(self.hasher.hash_one(key))
    }

    /// Whether `key` may be present.
    #[inline]
    pub fn contains<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.contains_hash(self.hasher.hash_one(key))
    }

    /// The smallest of `key`'s counters (see [`CountingBloomFilter::count`]).
    #[inline]
    pub fn count<T: Hash + ?Sized>(&self, key: &T) -> Count {
        self.count_hash(self.hasher.hash_one(key))
    }

    /// [`insert`](Self::insert) by precomputed hash.
    #[inline]
    pub fn insert_hash(&self, hash: u64) -> bool {
        match self.layout {
            CounterLayout::Blocked => {
                let line = &self.lines[line_index(hash, self.lines.len())];
                line_insert(line, hash as u32, self.k)
            }
            CounterLayout::Standard => {
                let mut pos = [0u64; MAX_HASHES as usize];
                let n = standard_positions(hash, self.num_counters, self.k, &mut pos);
                let mut present = true;
                for &p in &pos[..n] {
                    let (l, w, sh) = split_position(p);
                    let before = atomic_increment(&self.lines[l].words[w], 1u64 << sh);
                    present &= get_at(before, sh) != 0;
                }
                present
            }
        }
    }

    /// [`remove`](Self::remove) by precomputed hash.
    ///
    /// # Errors
    /// As [`remove`](Self::remove).
    #[inline]
    pub fn remove_hash(&self, hash: u64) -> Result<RemoveOutcome, CountingError> {
        match self.layout {
            CounterLayout::Blocked => {
                let line = &self.lines[line_index(hash, self.lines.len())];
                line_remove(line, hash as u32, self.k)
            }
            CounterLayout::Standard => {
                let mut pos = [0u64; MAX_HASHES as usize];
                let n = standard_positions(hash, self.num_counters, self.k, &mut pos);
                let absent = pos[..n].iter().any(|&p| {
                    let (l, w, sh) = split_position(p);
                    get_at(self.lines[l].words[w].load(Relaxed), sh) == 0
                });
                if absent {
                    return Err(CountingError::NotPresent);
                }
                let mut saturated = false;
                for &p in &pos[..n] {
                    let (l, w, sh) = split_position(p);
                    let (_, full) = atomic_decrement_report(&self.lines[l].words[w], 1u64 << sh);
                    saturated |= full != 0;
                }
                Ok(outcome(saturated))
            }
        }
    }

    /// [`contains`](Self::contains) by precomputed hash.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        match self.layout {
            CounterLayout::Blocked => {
                crate::kernels::d_atomic_contains_one(self.backend, &self.lines, hash, self.k)
            }
            CounterLayout::Standard => {
                let mut probes = bloomforge_core::Probes::new(hash);
                (0..self.k).all(|_| {
                    let (l, w, sh) = split_position(probes.next_pos(self.num_counters));
                    get_at(self.lines[l].words[w].load(Relaxed), sh) != 0
                })
            }
        }
    }

    /// [`count`](Self::count) by precomputed hash.
    #[inline]
    pub fn count_hash(&self, hash: u64) -> Count {
        let min = match self.layout {
            CounterLayout::Blocked => {
                let line = &self.lines[line_index(hash, self.lines.len())];
                let mask = line_mask(hash as u32, self.k);
                line.words
                    .iter()
                    .zip(mask)
                    .filter(|(_, m)| *m != 0)
                    .map(|(w, m)| min_of(w.load(Relaxed), m))
                    .min()
                    .unwrap_or(0)
            }
            CounterLayout::Standard => {
                let mut pos = [0u64; MAX_HASHES as usize];
                let n = standard_positions(hash, self.num_counters, self.k, &mut pos);
                pos[..n]
                    .iter()
                    .map(|&p| {
                        let (l, w, sh) = split_position(p);
                        get_at(self.lines[l].words[w].load(Relaxed), sh)
                    })
                    .min()
                    .unwrap_or(0)
            }
        };
        Count::from_counter(u64::from(min), u64::from(COUNTER_MAX))
    }

    /// Runs `op(i, hash)` over a batch with lines prefetched [`PREFETCH_AHEAD`] items
    /// ahead (blocked layout; the standard layout runs the plain loop).
    #[inline(always)]
    fn pipelined(
        &self,
        len: usize,
        hash_at: impl Fn(usize) -> u64,
        mut op: impl FnMut(usize, u64),
    ) {
        if self.layout != CounterLayout::Blocked {
            for i in 0..len {
                op(i, hash_at(i));
            }
            return;
        }
        let nl = self.lines.len();
        bloomforge_core::batch_pipeline!(ahead: PREFETCH_AHEAD, len: len,
            prepare |p| {
                let h = hash_at(p);
                prefetch(&self.lines[line_index(h, nl)]);
                h
            },
            probe |i, h| op(i, h));
    }

    /// Pipelined batch insert from this thread.
    pub fn insert_batch<T: Hash>(&self, keys: &[T]) {
        self.pipelined(
            keys.len(),
            |i| self.hasher.hash_one(&keys[i]),
            |_, h| {
                self.insert_hash(h);
            },
        );
    }

    /// Pipelined batch query.
    ///
    /// # Errors
    /// Core's `LengthMismatch` unless `keys.len() == out.len()`.
    pub fn contains_batch<T: Hash>(
        &self,
        keys: &[T],
        out: &mut [bool],
    ) -> Result<(), CountingError> {
        check_batch_len(keys.len(), out.len())?;
        self.pipelined(
            keys.len(),
            |i| self.hasher.hash_one(&keys[i]),
            |i, h| {
                out[i] = self.contains_hash(h);
            },
        );
        Ok(())
    }

    /// Pipelined batch remove; `removed[i]` tells whether key `i` was removed (`true`
    /// includes a remove that left a saturated counter;
    /// [`remove_batch_outcomes`](Self::remove_batch_outcomes) tells them apart).
    ///
    /// # Errors
    /// Core's `LengthMismatch` (nothing removed) unless `keys.len() == removed.len()`.
    pub fn remove_batch<T: Hash>(
        &self,
        keys: &[T],
        removed: &mut [bool],
    ) -> Result<(), CountingError> {
        check_batch_len(keys.len(), removed.len())?;
        self.pipelined(
            keys.len(),
            |i| self.hasher.hash_one(&keys[i]),
            |i, h| {
                removed[i] = self.remove_hash(h).is_ok();
            },
        );
        Ok(())
    }

    /// Pipelined batch remove reporting each key's outcome as [`remove`](Self::remove)
    /// does: `Some(Removed)`, `Some(Saturated)`, or `None` (not present, nothing changed
    /// for it), as [`CountingBloomFilter::remove_batch_outcomes`].
    ///
    /// # Errors
    /// Core's `LengthMismatch` (nothing removed) unless `keys.len() == out.len()`.
    pub fn remove_batch_outcomes<T: Hash>(
        &self,
        keys: &[T],
        out: &mut [Option<RemoveOutcome>],
    ) -> Result<(), CountingError> {
        check_batch_len(keys.len(), out.len())?;
        self.pipelined(
            keys.len(),
            |i| self.hasher.hash_one(&keys[i]),
            |i, h| {
                out[i] = self.remove_hash(h).ok();
            },
        );
        Ok(())
    }

    /// Inserts `keys` from all threads of the current rayon pool (run it inside
    /// `pool.install(..)` to choose the pool). While no counter saturates the result equals
    /// a sequential build.
    pub fn par_insert_batch<T: Hash + Sync>(&self, keys: &[T])
    where
        S: Sync,
    {
        use rayon::prelude::*;
        /// Keys per rayon task: large enough to amortise the task, small enough to balance.
        const CHUNK: usize = 1 << 14;
        keys.par_chunks(CHUNK)
            .for_each(|chunk| self.insert_batch(chunk));
    }

    /// Removes `keys` from all threads of the current rayon pool; returns how many were
    /// removed (the others were not present).
    pub fn par_remove_batch<T: Hash + Sync>(&self, keys: &[T]) -> u64
    where
        S: Sync,
    {
        use rayon::prelude::*;
        keys.par_iter()
            .map(|key| u64::from(self.remove(key).is_ok()))
            .sum()
    }

    /// A copy of the current counters as a plain filter (relaxed loads: a consistent
    /// snapshot only when no operation runs concurrently).
    pub fn snapshot(&self) -> CountingBloomFilter<S>
    where
        S: Clone,
    {
        let mut plain = CountingBloomFilter {
            lines: self
                .line_words()
                .map(|words| CounterLine { words })
                .collect(),
            num_counters: self.num_counters,
            k: self.k,
            layout: self.layout,
            backend: self.backend,
            hasher: self.hasher.clone(),
            items: 0,
        };
        plain.items = plain.estimated_len().round() as u64;
        plain
    }

    /// Layout, size, probes and hasher fingerprint.
    pub fn shape(&self) -> CountingShape {
        CountingShape {
            layout: self.layout,
            num_counters: self.num_counters,
            num_hashes: self.k,
            hasher_fingerprint: hasher_fingerprint(&self.hasher),
        }
    }
}

#[inline(always)]
fn line_insert(line: &AtomicCounterLine, h32: u32, k: u32) -> bool {
    let mask = line_mask(h32, k);
    let mut missing = 0;
    for (word, m) in line.words.iter().zip(mask) {
        if m != 0 {
            missing |= m & !nonzero(atomic_increment(word, m));
        }
    }
    missing == 0
}

#[inline(always)]
fn line_remove(line: &AtomicCounterLine, h32: u32, k: u32) -> Result<RemoveOutcome, CountingError> {
    let mask = line_mask(h32, k);
    let missing = line.words.iter().zip(mask).fold(0, |acc, (w, m)| {
        if m == 0 {
            acc
        } else {
            acc | (m & !nonzero(w.load(Relaxed)))
        }
    });
    if missing != 0 {
        return Err(CountingError::NotPresent);
    }
    let mut saturated = 0;
    for (word, m) in line.words.iter().zip(mask) {
        if m != 0 {
            // A non-zero result means a racing remove emptied a counter after the check:
            // that decrement is skipped (see the type's docs).
            saturated |= atomic_decrement_report(word, m).1;
        }
    }
    Ok(outcome(saturated != 0))
}

/// The outcome of a remove that found the key, from whether a counter was saturated.
#[inline(always)]
fn outcome(saturated: bool) -> RemoveOutcome {
    if saturated {
        RemoveOutcome::Saturated
    } else {
        RemoveOutcome::Removed
    }
}

impl<S: bloomforge_core::format::PersistentHasher> AtomicCountingBloomFilter<S> {
    /// Writes the bytes [`CountingBloomFilter::to_bytes`] gives for the current counters,
    /// streamed from the lines in place with relaxed loads (no copy of the filter).
    ///
    /// # Errors
    /// Core's `Io` if the writer fails, or if operations ran concurrently and changed the
    /// counters between the checksum pass and the write pass (write once they have
    /// stopped).
    pub fn write_to<W: std::io::Write>(&self, writer: W) -> Result<(), CountingError> {
        let (shape, items) = (self.shape(), self.estimated_len());
        let read = |l: &AtomicCounterLine| core::array::from_fn(|i| l.words[i].load(Relaxed));
        crate::persist::write_lines(writer, &self.hasher, shape, items, &self.lines, read)
    }

    /// [`CountingBloomFilter::to_bytes`] of the current counters: one snapshot of the
    /// lines (a copy of the filter), so the bytes always pass their checksum, even while
    /// operations run.
    pub fn to_bytes(&self) -> Vec<u8>
    where
        S: Clone,
    {
        self.snapshot().to_bytes()
    }
}

/// A copy of the current counters (relaxed loads: consistent when no operation runs
/// concurrently, as [`snapshot`](AtomicCountingBloomFilter::snapshot)).
impl<S: BuildHasher + Clone> Clone for AtomicCountingBloomFilter<S> {
    fn clone(&self) -> Self {
        Self::from(self.snapshot())
    }
}

impl<S: fmt::Debug> fmt::Debug for AtomicCountingBloomFilter<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AtomicCountingBloomFilter")
            .field("layout", &self.layout)
            .field("num_counters", &self.num_counters)
            .field("num_hashes", &self.k)
            .field("hasher", &self.hasher)
            .finish_non_exhaustive()
    }
}

/// Inserts every key (the `&self` insert; `&mut self` only because `Extend` asks for it:
/// extend through a shared reference, `(&filter).extend(keys)`, from any number of
/// threads).
impl<T: Hash, S: BuildHasher> Extend<T> for AtomicCountingBloomFilter<S> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        (&*self).extend(iter);
    }
}

/// Inserts every key through the shared reference, so threads holding `&filter` can each
/// extend it.
impl<T: Hash, S: BuildHasher> Extend<T> for &AtomicCountingBloomFilter<S> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        bloomforge_core::batch::for_each_chunk(iter, |chunk| self.insert_batch(chunk));
    }
}

/// Collects keys as [`CountingBloomFilter`]'s `FromIterator` does (blocked layout, sized
/// for their number at 1 % false positives, default hasher), then converts for free.
impl<T: Hash> FromIterator<T> for AtomicCountingBloomFilter {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Self::from(iter.into_iter().collect::<CountingBloomFilter>())
    }
}

impl<T: Hash + ?Sized, S: BuildHasher> Filter<T> for AtomicCountingBloomFilter<S> {
    type InsertError = core::convert::Infallible;
    fn insert(&mut self, key: &T) -> Result<bool, Self::InsertError> {
        Ok(AtomicCountingBloomFilter::insert(self, key))
    }
    fn contains(&self, key: &T) -> bool {
        AtomicCountingBloomFilter::contains(self, key)
    }
    fn memory_bits(&self) -> u64 {
        AtomicCountingBloomFilter::memory_bits(self)
    }
    fn expected_false_pos(&self) -> f64 {
        AtomicCountingBloomFilter::expected_false_pos(self)
    }
}
