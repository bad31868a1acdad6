//! [`CountingBloomFilter`]: the single-threaded counting filter, its builders, statistics,
//! union and exports.

use crate::error::{CountingError, CountingShape};
use crate::kernels::{
    backend_available, d_contains_batch, d_contains_one, d_insert_batch, d_insert_one,
    d_remove_batch, d_remove_one, default_backend, Hashes, Keys,
};
use crate::layout::{
    counter_slot, gather_bytes, line_index, line_mask, standard_positions, CounterLayout,
    CounterLine, LINE_COUNTERS, MAX_HASHES,
};
use crate::nibble::{self, decrement, get, get_at, increment, min_of, nonzero, COUNTER_MAX};
use bloomforge_core::builder::{BuildFilter, Builder, FalsePosBuilder, NumBitsBuilder};
use bloomforge_core::hash::{hasher_fingerprint, DefaultHasher};
use bloomforge_core::{
    Backend, Block512, BlockedBloomFilter, Count, Error, Filter, RemoveOutcome, StandardBloomFilter,
};
use core::fmt;
use core::hash::{BuildHasher, Hash};

/// Largest number of 64-byte lines a filter may have (the allocation must fit `isize`).
pub(crate) const MAX_LINES: u64 = isize::MAX as u64 / 64;

/// A counting Bloom filter: 4-bit saturating counters packed sixteen to a `u64`, so keys
/// can be removed as well as inserted.
///
/// * [`insert`](Self::insert) increments the key's `k` counters (duplicate probes of one
///   key count once); a counter at 15 stays at 15 (saturated, sticky).
/// * [`remove`](Self::remove) fails with [`CountingError::NotPresent`] and changes nothing
///   if any of the key's counters is 0; otherwise it decrements every one of them that is
///   not saturated. Decrementing a saturated counter could create false negatives for
///   other keys, so saturation costs only false positives.
/// * [`contains`](Self::contains) checks that all `k` counters are non-zero;
///   [`count`](Self::count) returns their minimum.
///
/// **Contract:** remove only keys you inserted (and no more often than you inserted them).
/// Removing a key that was never inserted but whose counters are all non-zero (a false
/// positive, probability [`expected_false_pos`](Self::expected_false_pos)) succeeds and
/// decrements counters that belong to other keys, exactly as if the key had been inserted
/// once before; those keys may then read absent. This is inherent to counting Bloom
/// filters. Under the contract there is never a false negative: a counter that never
/// saturated holds exactly the number of present keys probing it, and a saturated one is
/// never decremented.
///
/// The default layout is [`CounterLayout::Blocked`] (a key's counters in one 64-byte line
/// of 128 counters: one cache miss per operation); [`CounterLayout::Standard`] places them
/// anywhere. Memory is exactly 4 bits per counter (rounded up to whole 64-byte lines) plus
/// a constant header.
///
/// ```
/// use bloomforge_counting::{CountingBloomFilter, CountingError};
/// let mut f = CountingBloomFilter::with_false_pos(0.01).expected_items(10_000)?;
/// f.insert(&"a");
/// f.insert(&"a");
/// assert_eq!(f.count(&"a").get(), 2);
/// f.remove(&"a")?;
/// assert!(f.contains(&"a"));
/// f.remove(&"a")?;
/// assert!(!f.contains(&"a"));
/// assert_eq!(f.remove(&"a"), Err(CountingError::NotPresent));
/// # Ok::<(), CountingError>(())
/// ```
pub struct CountingBloomFilter<S = DefaultHasher> {
    pub(crate) lines: Box<[CounterLine]>,
    pub(crate) num_counters: u64,
    pub(crate) k: u32,
    pub(crate) layout: CounterLayout,
    pub(crate) backend: Backend,
    pub(crate) hasher: S,
    /// Inserts minus successful removes (see [`len`](CountingBloomFilter::len)).
    pub(crate) items: u64,
}

/// Builder kind for [`CountingBloomFilter`] with the [`CounterLayout::Standard`] layout:
/// `CountingBloomFilter::standard_builder().expected_items(n).false_pos(p).build()?` or
/// `CountingBloomFilter::standard_with_false_pos(p).expected_items(n)?`. (The blocked
/// layout's builder kind is [`CountingBloomFilter`] itself.)
#[derive(Clone, Copy, Debug)]
pub struct StandardCounting;

bloomforge_core::builder_constructors! {
    CountingBloomFilter,
    new: " and the blocked layout",
    false_pos: "A blocked-layout filter, sized with the exact blocked theory for 128-counter \
        lines ([`math::blocked_size`](crate::math::blocked_size)).",
    with_num_counters: "a blocked-layout filter of `counters` counters (rounded up to whole \
        lines of 128)",
}

impl CountingBloomFilter {
    /// The builder of a standard-layout filter (`k` counters anywhere in the table, the
    /// standard Bloom filter's `m` and `k`), with the same setters as
    /// [`builder`](Self::builder):
    /// `CountingBloomFilter::standard_builder().expected_items(n).false_pos(p).seed(s).build()?`.
    ///
    /// ```
    /// use bloomforge_counting::{CounterLayout, CountingBloomFilter};
    /// let f = CountingBloomFilter::standard_builder()
    ///     .expected_items(10_000)
    ///     .false_pos(0.01)
    ///     .seed(7)
    ///     .build()?;
    /// let g = CountingBloomFilter::standard_with_false_pos(0.01)
    ///     .seed(7)
    ///     .expected_items(10_000)?;
    /// assert_eq!(f.layout(), CounterLayout::Standard);
    /// assert_eq!((f.num_counters(), f.num_hashes()), (g.num_counters(), g.num_hashes()));
    /// # Ok::<(), bloomforge_counting::CountingError>(())
    /// ```
    pub fn standard_builder() -> Builder<StandardCounting> {
        Builder::new()
    }

    /// Starts a builder for a standard-layout filter with target false-positive rate `fp`:
    /// `m` and `k` of the standard Bloom filter (`bloomforge_core::math::std_size`).
    pub fn standard_with_false_pos(fp: f64) -> FalsePosBuilder<StandardCounting> {
        FalsePosBuilder::new(fp)
    }

    /// Starts a builder for a standard-layout filter of exactly `counters` counters.
    pub fn standard_with_num_counters(counters: u64) -> NumBitsBuilder<StandardCounting> {
        NumBitsBuilder::new(counters)
    }
}

/// Allocates `n` zeroed lines, as an error instead of an abort.
pub(crate) fn alloc_lines(n: u64) -> Result<Box<[CounterLine]>, CountingError> {
    if n == 0 {
        return Err(Error::ZeroBits.into());
    }
    if n > MAX_LINES {
        return Err(Error::TooLarge {
            requested: n,
            max: MAX_LINES,
        }
        .into());
    }
    let n = n as usize;
    let v = bloomforge_core::memory::try_vec_filled(n, CounterLine::ZERO).map_err(|_| {
        Error::AllocationFailed {
            bytes: n.saturating_mul(64),
        }
    })?;
    Ok(v.into_boxed_slice())
}

/// Lines needed for `m` counters in `layout` (`m >= 1`).
fn lines_for(m: u64) -> u64 {
    m.div_ceil(u64::from(LINE_COUNTERS))
}

fn check_hashes(k: u32) -> Result<(), CountingError> {
    if k == 0 || k > MAX_HASHES {
        return Err(Error::InvalidHashCount {
            k,
            min: 1,
            max: MAX_HASHES,
        }
        .into());
    }
    Ok(())
}

fn check_counters(m: u64) -> Result<(), CountingError> {
    if m == 0 {
        return Err(Error::ZeroBits.into());
    }
    let max = MAX_LINES * u64::from(LINE_COUNTERS);
    if m > max {
        return Err(Error::TooLarge { requested: m, max }.into());
    }
    Ok(())
}

impl<S> CountingBloomFilter<S> {
    /// A filter of `layout` sized for `items` keys at false-positive rate `fp`, with that
    /// layout's own FP formula (the runtime-layout form of the builders).
    ///
    /// # Errors
    /// Core's `InvalidFalsePositiveRate` unless `0 < fp < 1`, `ZeroItems` for 0 items,
    /// `TooLarge` / `AllocationFailed` if it does not fit.
    pub fn sized_for(
        layout: CounterLayout,
        fp: f64,
        items: u64,
        hasher: S,
    ) -> Result<Self, CountingError> {
        if !(fp > 0.0 && fp < 1.0) {
            return Err(Error::InvalidFalsePositiveRate(fp).into());
        }
        if items == 0 {
            return Err(Error::ZeroItems.into());
        }
        match layout {
            CounterLayout::Blocked => {
                let (c, k) = crate::math::blocked_size(fp);
                // The solver caps counters per key; a target below that cap's FP is
                // refused rather than silently missed (1e-9 relative slack for the
                // bisection), as core's filters do.
                let best = crate::math::blocked_fp(c, k);
                if best > fp * (1.0 + 1e-9) {
                    return Err(Error::UnreachableFalsePositiveRate {
                        requested: fp,
                        best,
                    }
                    .into());
                }
                let lines = (items as f64 * c / f64::from(LINE_COUNTERS)).ceil();
                if lines >= MAX_LINES as f64 {
                    return Err(Error::TooLarge {
                        requested: lines as u64,
                        max: MAX_LINES,
                    }
                    .into());
                }
                let m = (lines as u64).max(1) * u64::from(LINE_COUNTERS);
                Self::with_shape(layout, m, k, hasher)
            }
            CounterLayout::Standard => {
                let (m, k) = bloomforge_core::math::std_size(items, fp);
                let k = k.min(MAX_HASHES);
                let best = bloomforge_core::math::std_fp(m as f64, items as f64, k);
                if best > fp * (1.0 + 1e-9) {
                    return Err(Error::UnreachableFalsePositiveRate {
                        requested: fp,
                        best,
                    }
                    .into());
                }
                Self::with_shape(layout, m, k, hasher)
            }
        }
    }

    /// An empty filter of `layout` with `counters` counters (the blocked layout rounds up
    /// to whole lines of 128) and `k` probes per key.
    ///
    /// # Errors
    /// Core's `ZeroBits` for 0 counters, `InvalidHashCount` unless `1 <= k <= 64`,
    /// `TooLarge` / `AllocationFailed` if it does not fit.
    pub fn with_shape(
        layout: CounterLayout,
        counters: u64,
        k: u32,
        hasher: S,
    ) -> Result<Self, CountingError> {
        check_counters(counters)?;
        check_hashes(k)?;
        let lines = alloc_lines(lines_for(counters))?;
        let num_counters = match layout {
            CounterLayout::Blocked => lines.len() as u64 * u64::from(LINE_COUNTERS),
            CounterLayout::Standard => counters,
        };
        Ok(Self {
            lines,
            num_counters,
            k,
            layout,
            backend: default_backend(),
            hasher,
            items: 0,
        })
    }

    /// Rebuilds a filter from its counter lines (as returned by
    /// [`as_lines`](Self::as_lines)), layout, counter count, probes and hasher.
    ///
    /// # Errors
    /// [`CountingError::InvalidLines`] if `lines.len()` is not `ceil(counters / 128)`, or a
    /// standard-layout filter has a non-zero counter at a position `>= counters`; core's
    /// `ZeroBits` / `InvalidHashCount` / `TooLarge` as for [`with_shape`](Self::with_shape).
    pub fn from_lines(
        layout: CounterLayout,
        lines: Vec<CounterLine>,
        counters: u64,
        k: u32,
        hasher: S,
    ) -> Result<Self, CountingError> {
        check_counters(counters)?;
        check_hashes(k)?;
        if lines.len() as u64 != lines_for(counters) {
            return Err(CountingError::InvalidLines {
                reason: "the number of lines must be ceil(counters / 128)",
            });
        }
        let num_counters = match layout {
            CounterLayout::Blocked => lines.len() as u64 * u64::from(LINE_COUNTERS),
            CounterLayout::Standard => counters,
        };
        let used = num_counters - (lines.len() as u64 - 1) * u64::from(LINE_COUNTERS);
        if let Some(last) = lines.last() {
            if (used as u32..LINE_COUNTERS).any(|c| last.counter(c) != 0) {
                return Err(CountingError::InvalidLines {
                    reason: "counters past the filter's size must be zero",
                });
            }
        }
        let mut f = Self {
            lines: lines.into_boxed_slice(),
            num_counters,
            k,
            layout,
            backend: default_backend(),
            hasher,
            items: 0,
        };
        f.items = f.estimated_len().round() as u64;
        Ok(f)
    }
}

impl<S> BuildFilter for CountingBloomFilter<S> {
    type Filter<S2: BuildHasher> = CountingBloomFilter<S2>;
    type Error = CountingError;

    fn for_false_pos<S2: BuildHasher>(
        fp: f64,
        items: u64,
        hasher: S2,
    ) -> Result<CountingBloomFilter<S2>, CountingError> {
        CountingBloomFilter::sized_for(CounterLayout::Blocked, fp, items, hasher)
    }

    fn for_bits_and_hashes<S2: BuildHasher>(
        counters: u64,
        k: u32,
        hasher: S2,
    ) -> Result<CountingBloomFilter<S2>, CountingError> {
        CountingBloomFilter::with_shape(CounterLayout::Blocked, counters, k, hasher)
    }
}

impl BuildFilter for StandardCounting {
    type Filter<S2: BuildHasher> = CountingBloomFilter<S2>;
    type Error = CountingError;

    fn for_false_pos<S2: BuildHasher>(
        fp: f64,
        items: u64,
        hasher: S2,
    ) -> Result<CountingBloomFilter<S2>, CountingError> {
        CountingBloomFilter::sized_for(CounterLayout::Standard, fp, items, hasher)
    }

    fn for_bits_and_hashes<S2: BuildHasher>(
        counters: u64,
        k: u32,
        hasher: S2,
    ) -> Result<CountingBloomFilter<S2>, CountingError> {
        CountingBloomFilter::with_shape(CounterLayout::Standard, counters, k, hasher)
    }
}

/// Line, word and bit shift of standard-layout counter `p` (counter `p % 128` of line
/// `p / 128`, numbered as in [`CounterLine`]).
#[inline(always)]
pub(crate) fn split_position(p: u64) -> (usize, usize, u32) {
    let (w, shift) = counter_slot((p & 127) as u32);
    ((p >> 7) as usize, w, shift)
}

// --- blocked-layout helpers -----------------------------------------------------------

#[inline(always)]
fn line_count(line: &CounterLine, h32: u32, k: u32) -> u32 {
    let mask = line_mask(h32, k);
    line.words
        .iter()
        .zip(mask)
        .map(|(&w, m)| min_of(w, m))
        .min()
        .unwrap_or(0)
}

impl<S: BuildHasher> CountingBloomFilter<S> {
    /// Increments `key`'s counters (saturating at 15). Returns `true` if they were all
    /// non-zero before (the key may have been present), `false` if it was certainly new.
    #[inline]
    pub fn insert<T: Hash + ?Sized>(&mut self, key: &T) -> bool {
        self.insert_hash(self.hasher.hash_one(key))
    }

    /// Removes one occurrence of `key`: decrements its counters that are not saturated.
    /// Returns [`RemoveOutcome::Removed`] when every counter was decremented, and
    /// [`RemoveOutcome::Saturated`] when one of them is saturated (15) and was left as it
    /// is: the filter no longer tracks this key exactly (it answers present while its other
    /// counters stay above zero).
    ///
    /// # Errors
    /// [`CountingError::NotPresent`], with the filter unchanged, if any of its counters is
    /// 0. See the type's docs for removing keys that were never inserted.
    #[inline]
    pub fn remove<T: Hash + ?Sized>(&mut self, key: &T) -> Result<RemoveOutcome, CountingError> {
        self.remove_hash(self.hasher.hash_one(key))
    }

    /// Whether `key` may be present (all its counters non-zero); `false`: certainly not.
    #[inline]
    pub fn contains<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.contains_hash(self.hasher.hash_one(key))
    }

    /// The smallest of `key`'s counters: an upper bound of how many times it is present
    /// (inserts minus removes), exact when no other key shares all its counters.
    /// [`Count::AtLeast`]`(15)` means "15 or more" (saturated); in general
    /// `count.get() >= min(true count, 15)`.
    #[inline]
    pub fn count<T: Hash + ?Sized>(&self, key: &T) -> Count {
        self.count_hash(self.hasher.hash_one(key))
    }

    /// [`insert`](Self::insert) by precomputed 64-bit hash (it must be well mixed).
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) -> bool {
        self.items = self.items.saturating_add(1);
        match self.layout {
            CounterLayout::Blocked => d_insert_one(self.backend, &mut self.lines, hash, self.k),
            CounterLayout::Standard => self.standard_insert(hash),
        }
    }

    /// [`remove`](Self::remove) by precomputed hash.
    ///
    /// # Errors
    /// As [`remove`](Self::remove).
    #[inline]
    pub fn remove_hash(&mut self, hash: u64) -> Result<RemoveOutcome, CountingError> {
        match self.layout {
            CounterLayout::Blocked => {
                if !d_remove_one(self.backend, &mut self.lines, hash, self.k) {
                    return Err(CountingError::NotPresent);
                }
            }
            CounterLayout::Standard => self.standard_remove(hash)?,
        }
        self.items = self.items.saturating_sub(1);
        // Saturated counters do not move, so "one of them is at 15" after the remove is
        // "one of them was left alone". Only removes pay for this check.
        Ok(if self.max_counter_hash(hash) == COUNTER_MAX {
            RemoveOutcome::Saturated
        } else {
            RemoveOutcome::Removed
        })
    }

    /// The largest of the key's counters (its hash given).
    fn max_counter_hash(&self, hash: u64) -> u32 {
        match self.layout {
            CounterLayout::Blocked => {
                let line = &self.lines[line_index(hash, self.lines.len())];
                let mask = line_mask(hash as u32, self.k);
                let full = line
                    .words
                    .iter()
                    .zip(mask)
                    .fold(0, |acc, (&w, m)| acc | (nibble::saturated(w) & m));
                if full != 0 {
                    COUNTER_MAX
                } else {
                    // Not needed exactly: only "saturated or not" is asked.
                    0
                }
            }
            CounterLayout::Standard => {
                let mut pos = [0u64; MAX_HASHES as usize];
                let n = standard_positions(hash, self.num_counters, self.k, &mut pos);
                pos[..n]
                    .iter()
                    .map(|&p| {
                        let (l, w, sh) = split_position(p);
                        get_at(self.lines[l].words[w], sh)
                    })
                    .max()
                    .unwrap_or(0)
            }
        }
    }

    /// [`contains`](Self::contains) by precomputed hash.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        match self.layout {
            CounterLayout::Blocked => d_contains_one(self.backend, &self.lines, hash, self.k),
            CounterLayout::Standard => self.standard_contains(hash),
        }
    }

    /// [`count`](Self::count) by precomputed hash.
    #[inline]
    pub fn count_hash(&self, hash: u64) -> Count {
        let min = match self.layout {
            CounterLayout::Blocked => {
                let i = line_index(hash, self.lines.len());
                line_count(&self.lines[i], hash as u32, self.k)
            }
            CounterLayout::Standard => {
                let mut pos = [0u64; MAX_HASHES as usize];
                let n = standard_positions(hash, self.num_counters, self.k, &mut pos);
                pos[..n]
                    .iter()
                    .map(|&p| {
                        let (l, w, sh) = split_position(p);
                        get_at(self.lines[l].words[w], sh)
                    })
                    .min()
                    .unwrap_or(0)
            }
        };
        Count::from_counter(u64::from(min), u64::from(COUNTER_MAX))
    }

    fn standard_insert(&mut self, hash: u64) -> bool {
        let mut pos = [0u64; MAX_HASHES as usize];
        let n = standard_positions(hash, self.num_counters, self.k, &mut pos);
        let mut present = true;
        for &p in &pos[..n] {
            let (l, w, sh) = split_position(p);
            let word = &mut self.lines[l].words[w];
            present &= get_at(*word, sh) != 0;
            *word = increment(*word, 1u64 << sh);
        }
        present
    }

    fn standard_remove(&mut self, hash: u64) -> Result<(), CountingError> {
        let mut pos = [0u64; MAX_HASHES as usize];
        let n = standard_positions(hash, self.num_counters, self.k, &mut pos);
        let absent = pos[..n].iter().any(|&p| {
            let (l, w, sh) = split_position(p);
            get_at(self.lines[l].words[w], sh) == 0
        });
        if absent {
            return Err(CountingError::NotPresent);
        }
        for &p in &pos[..n] {
            let (l, w, sh) = split_position(p);
            let word = &mut self.lines[l].words[w];
            *word = decrement(*word, 1u64 << sh);
        }
        Ok(())
    }

    fn standard_contains(&self, hash: u64) -> bool {
        let mut probes = bloomforge_core::Probes::new(hash);
        (0..self.k).all(|_| {
            let (l, w, sh) = split_position(probes.next_pos(self.num_counters));
            get_at(self.lines[l].words[w], sh) != 0
        })
    }

    /// Inserts every key of `keys`, hashing ahead and prefetching lines so cache misses
    /// overlap (the fast path for filters larger than the cache).
    pub fn insert_batch<T: Hash>(&mut self, keys: &[T]) {
        match self.layout {
            CounterLayout::Blocked => {
                self.items = self.items.saturating_add(keys.len() as u64);
                d_insert_batch(
                    self.backend,
                    &mut self.lines,
                    self.k,
                    &Keys {
                        keys,
                        hasher: &self.hasher,
                    },
                );
            }
            CounterLayout::Standard => {
                for key in keys {
                    self.insert(key);
                }
            }
        }
    }

    /// [`insert_batch`](Self::insert_batch) for precomputed hashes.
    pub fn insert_hash_batch(&mut self, hashes: &[u64]) {
        match self.layout {
            CounterLayout::Blocked => {
                self.items = self.items.saturating_add(hashes.len() as u64);
                d_insert_batch(self.backend, &mut self.lines, self.k, &Hashes(hashes));
            }
            CounterLayout::Standard => {
                for &h in hashes {
                    self.insert_hash(h);
                }
            }
        }
    }

    /// Queries every key of `keys` into `out[i]`, pipelined like
    /// [`insert_batch`](Self::insert_batch).
    ///
    /// # Errors
    /// Core's `LengthMismatch` (and `out` untouched) unless `keys.len() == out.len()`.
    pub fn contains_batch<T: Hash>(
        &self,
        keys: &[T],
        out: &mut [bool],
    ) -> Result<(), CountingError> {
        check_batch_len(keys.len(), out.len())?;
        match self.layout {
            CounterLayout::Blocked => d_contains_batch(
                self.backend,
                &self.lines,
                self.k,
                &Keys {
                    keys,
                    hasher: &self.hasher,
                },
                out,
            ),
            CounterLayout::Standard => {
                for (key, o) in keys.iter().zip(out) {
                    *o = self.contains(key);
                }
            }
        }
        Ok(())
    }

    /// [`contains_batch`](Self::contains_batch) for precomputed hashes.
    ///
    /// # Errors
    /// Core's `LengthMismatch` unless `hashes.len() == out.len()`.
    pub fn contains_hash_batch(
        &self,
        hashes: &[u64],
        out: &mut [bool],
    ) -> Result<(), CountingError> {
        check_batch_len(hashes.len(), out.len())?;
        match self.layout {
            CounterLayout::Blocked => {
                d_contains_batch(self.backend, &self.lines, self.k, &Hashes(hashes), out);
            }
            CounterLayout::Standard => {
                for (&h, o) in hashes.iter().zip(out) {
                    *o = self.contains_hash(h);
                }
            }
        }
        Ok(())
    }

    /// Removes every key of `keys` (pipelined), writing into `removed[i]` whether key `i`
    /// was removed (`false`: it was not present and nothing changed for it). Keys are
    /// processed in order, so a key listed twice is removed twice. `true` includes keys
    /// whose remove left a saturated counter; [`remove_batch_outcomes`](Self::remove_batch_outcomes)
    /// tells them apart.
    ///
    /// # Errors
    /// Core's `LengthMismatch` (and nothing removed) unless `keys.len() == removed.len()`.
    pub fn remove_batch<T: Hash>(
        &mut self,
        keys: &[T],
        removed: &mut [bool],
    ) -> Result<(), CountingError> {
        check_batch_len(keys.len(), removed.len())?;
        match self.layout {
            CounterLayout::Blocked => {
                d_remove_batch(
                    self.backend,
                    &mut self.lines,
                    self.k,
                    &Keys {
                        keys,
                        hasher: &self.hasher,
                    },
                    removed,
                );
                let n = removed.iter().filter(|&&r| r).count() as u64;
                self.items = self.items.saturating_sub(n);
            }
            CounterLayout::Standard => {
                for (key, r) in keys.iter().zip(removed) {
                    *r = self.remove(key).is_ok();
                }
            }
        }
        Ok(())
    }

    /// [`remove_batch`](Self::remove_batch) that reports what happened to each key, as
    /// [`remove`](Self::remove) does: `out[i]` is `Some(Removed)`, `Some(Saturated)` (one
    /// of its counters is at 15 and was left as it is) or `None` (not present: nothing
    /// changed for it, the single remove's `NotPresent`). Keys are processed in order and
    /// the outcomes equal those of removing them one by one. Hashes the keys into a
    /// buffer first (8 bytes a key) to check the removed keys' counters afterwards.
    ///
    /// ```
    /// use bloomforge_core::RemoveOutcome;
    /// let mut f = bloomforge_counting::CountingBloomFilter::new(1000, 0.01)?;
    /// for _ in 0..20 {
    ///     f.insert(&"hot");
    /// }
    /// f.insert(&"cold");
    /// let mut out = [None; 3];
    /// f.remove_batch_outcomes(&["cold", "hot", "gone"], &mut out)?;
    /// assert_eq!(out, [Some(RemoveOutcome::Removed), Some(RemoveOutcome::Saturated), None]);
    /// # Ok::<(), bloomforge_counting::CountingError>(())
    /// ```
    ///
    /// # Errors
    /// Core's `LengthMismatch` (nothing removed, `out` untouched) unless
    /// `keys.len() == out.len()`.
    pub fn remove_batch_outcomes<T: Hash>(
        &mut self,
        keys: &[T],
        out: &mut [Option<RemoveOutcome>],
    ) -> Result<(), CountingError> {
        check_batch_len(keys.len(), out.len())?;
        match self.layout {
            CounterLayout::Blocked => {
                let hashes: Vec<u64> = keys.iter().map(|k| self.hasher.hash_one(k)).collect();
                let mut removed = vec![false; keys.len()];
                d_remove_batch(
                    self.backend,
                    &mut self.lines,
                    self.k,
                    &Hashes(&hashes),
                    &mut removed,
                );
                let n = removed.iter().filter(|&&r| r).count() as u64;
                self.items = self.items.saturating_sub(n);
                // A remove never raises a counter, and a saturated one never moves: a
                // counter of key i is at 15 now exactly when it was right after key i's
                // remove, so checking after the batch gives the one-by-one outcomes.
                for ((o, &r), &h) in out.iter_mut().zip(&removed).zip(&hashes) {
                    *o = r.then(|| {
                        if self.max_counter_hash(h) == COUNTER_MAX {
                            RemoveOutcome::Saturated
                        } else {
                            RemoveOutcome::Removed
                        }
                    });
                }
            }
            CounterLayout::Standard => {
                for (key, o) in keys.iter().zip(out) {
                    *o = self.remove(key).ok();
                }
            }
        }
        Ok(())
    }

    /// Counter-wise saturating sum with `other`: afterwards the filter holds the keys of
    /// both (each key's count is at least the sum, capped at 15).
    ///
    /// # Errors
    /// [`CountingError::IncompatibleFilters`], with `self` unchanged, if the layouts,
    /// sizes, probe counts or hashers differ.
    pub fn union(&mut self, other: &Self) -> Result<(), CountingError> {
        let (left, right) = (self.shape(), other.shape());
        if left != right {
            return Err(CountingError::IncompatibleFilters { left, right });
        }
        for (a, b) in self.lines.iter_mut().zip(other.lines.iter()) {
            for (x, &y) in a.words.iter_mut().zip(&b.words) {
                *x = nibble::saturating_add(*x, y);
            }
        }
        self.items = self.items.saturating_add(other.items);
        Ok(())
    }

    /// Layout, size, probes and hasher fingerprint: what must match to combine filters.
    pub fn shape(&self) -> CountingShape {
        CountingShape {
            layout: self.layout,
            num_counters: self.num_counters,
            num_hashes: self.k,
            hasher_fingerprint: hasher_fingerprint(&self.hasher),
        }
    }

    /// Exports a read-only [`BlockedBloomFilter`] that answers `contains` exactly as this
    /// filter does, for every key (same hasher, same line index, same probes): counter `c`
    /// of line `b` becomes bits `4c..4c + 4` of block `b`. Core's blocked probe `j` is bit
    /// `p = (h32 * C^(j+1)) >> 23` and this filter's is counter `p >> 2`, so the bit is set
    /// exactly when the counter is non-zero.
    ///
    /// The export has as many 512-bit blocks as this filter has lines, so it is as large as
    /// the counting filter (4 bits per counter), not smaller: what it gains is core's SIMD
    /// probes and plain-filter API. For a compact export (1 bit per counter) use the
    /// standard layout and [`to_standard_bloom`](Self::to_standard_bloom).
    ///
    /// Its `contains` and `expected_false_pos` are exact, but its `estimated_len` (and the
    /// item count its `to_bytes` header records) reads about 4x the true number of keys:
    /// each key sets 4 bits per probe where a native blocked filter sets one. Take the key
    /// count from this filter instead.
    ///
    /// # Errors
    /// [`CountingError::WrongLayout`] for a standard-layout filter.
    pub fn to_blocked_bloom(&self) -> Result<BlockedBloomFilter<S>, CountingError>
    where
        S: Clone,
    {
        if self.layout != CounterLayout::Blocked {
            return Err(CountingError::WrongLayout {
                operation: "to_blocked_bloom",
                needed: CounterLayout::Blocked,
                actual: self.layout,
            });
        }
        let blocks: Vec<Block512> = self.lines.iter().map(line_to_block).collect();
        Ok(BlockedBloomFilter::from_blocks(
            blocks,
            self.k,
            self.hasher.clone(),
        )?)
    }

    /// Exports a read-only [`StandardBloomFilter`] of `m` = [`num_counters`](Self::num_counters)
    /// bits (a quarter of this filter's memory) with bit `i` set exactly when counter `i` is
    /// non-zero. Positions are derived identically, so it answers `contains` exactly as
    /// this filter does, for every key.
    ///
    /// # Errors
    /// [`CountingError::WrongLayout`] for a blocked-layout filter.
    pub fn to_standard_bloom(&self) -> Result<StandardBloomFilter<S>, CountingError>
    where
        S: Clone,
    {
        if self.layout != CounterLayout::Standard {
            return Err(CountingError::WrongLayout {
                operation: "to_standard_bloom",
                needed: CounterLayout::Standard,
                actual: self.layout,
            });
        }
        let mut words = vec![0u64; self.num_counters.div_ceil(64) as usize];
        // Line `l` holds counters 128 l.. : its low nibbles are bit word 2 l, its high
        // nibbles bit word 2 l + 1.
        for (l, line) in self.lines.iter().enumerate() {
            for (half, shift) in [(0, 0), (1, 4)] {
                let bits = line
                    .words
                    .iter()
                    .enumerate()
                    .map(|(i, &w)| gather_bytes(nonzero((w >> shift) & NIBBLE_LOW)) << (8 * i))
                    .fold(0, |a, b| a | b);
                if let Some(out) = words.get_mut(2 * l + half) {
                    *out = bits;
                }
            }
        }
        Ok(StandardBloomFilter::from_words(
            words,
            self.num_counters,
            self.k,
            self.hasher.clone(),
        )?)
    }

    /// The kernel backend of the blocked layout's operations (detected once per process:
    /// AVX-512BW, AVX2 or portable; `Scalar` and `Wide` both select the portable kernel).
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Switches the kernel backend (all give identical results; for benchmarks and tests).
    ///
    /// # Errors
    /// Core's `BackendUnavailable` if this CPU cannot run it (AVX-512 needs AVX-512F and
    /// AVX-512BW).
    pub fn set_backend(&mut self, backend: Backend) -> Result<(), CountingError> {
        if !backend_available(backend) {
            return Err(Error::BackendUnavailable(backend.name()).into());
        }
        self.backend = backend;
        Ok(())
    }
}

/// The low nibble of every byte.
const NIBBLE_LOW: u64 = 0x0F0F_0F0F_0F0F_0F0F;

/// The 512-bit block with bits `4c..4c + 4` set for every non-zero counter `c` of `line`.
fn line_to_block(line: &CounterLine) -> Block512 {
    let mut block = Block512::ZERO;
    for (i, &w) in line.words.iter().enumerate() {
        for half in 0..2 {
            // Counters 8i + 64 half .. +8, one per byte: 0xF per non-zero one, then packed
            // to consecutive nibbles.
            let x = nonzero((w >> (4 * half)) & NIBBLE_LOW) * 0xF;
            let x = (x | (x >> 4)) & 0x00FF_00FF_00FF_00FF;
            let x = (x | (x >> 8)) & 0x0000_FFFF_0000_FFFF;
            let x = (x | (x >> 16)) & 0xFFFF_FFFF;
            block.words[i / 2 + 4 * half] |= x << (32 * (i % 2));
        }
    }
    block
}

pub(crate) fn check_batch_len(keys: usize, out: usize) -> Result<(), CountingError> {
    if keys == out {
        Ok(())
    } else {
        Err(Error::LengthMismatch { keys, out }.into())
    }
}

/// Statistics over the counter words of a filter (plain or atomic), computed in one pass.
pub(crate) struct CounterStats {
    pub(crate) histogram: [u64; 16],
    /// Sum over lines of `(non-zero counters / 128)^k` (blocked FP numerator).
    pub(crate) line_fp_sum: f64,
}

pub(crate) fn counter_stats(
    lines: impl Iterator<Item = [u64; 8]>,
    num_lines: usize,
    num_counters: u64,
    k: u32,
) -> CounterStats {
    let mut histogram = [0u64; 16];
    let mut line_fp_sum = 0.0;
    for words in lines {
        let mut nz = 0u32;
        for w in words {
            nz += nonzero(w).count_ones();
            for c in 0..16 {
                histogram[get(w, c) as usize] += 1;
            }
        }
        line_fp_sum += (f64::from(nz) / f64::from(LINE_COUNTERS)).powi(k as i32);
    }
    // Padding counters past `num_counters` (standard layout) are always zero.
    let padding = num_lines as u64 * u64::from(LINE_COUNTERS) - num_counters;
    histogram[0] -= padding;
    CounterStats {
        histogram,
        line_fp_sum,
    }
}

/// Shared statistic methods of the plain and atomic filters, over `words()`.
macro_rules! counter_statistics {
    () => {
        /// Counter placement.
        #[inline]
        pub fn layout(&self) -> CounterLayout {
            self.layout
        }

        /// Number of counters `m`.
        #[inline]
        pub fn num_counters(&self) -> u64 {
            self.num_counters
        }

        /// Probes per key.
        #[inline]
        pub fn num_hashes(&self) -> u32 {
            self.k
        }

        /// Number of 64-byte lines of storage (for the blocked layout: the blocks keys
        /// hash to).
        #[inline]
        pub fn num_blocks(&self) -> usize {
            self.lines.len()
        }

        /// The hasher.
        pub fn hasher(&self) -> &S {
            &self.hasher
        }

        /// Bits of counter storage: `4 * num_counters` rounded up to whole 64-byte lines.
        pub fn memory_bits(&self) -> u64 {
            self.lines.len() as u64 * 512
        }

        fn stats(&self) -> $crate::plain::CounterStats {
            $crate::plain::counter_stats(
                self.line_words(),
                self.lines.len(),
                self.num_counters,
                self.k,
            )
        }

        /// `histogram[v]` = number of counters holding `v` (0..=15; 15 = saturated). One
        /// pass over the filter. Under ideal hashing a counter's value is about
        /// Poisson(`n d / m`), `d` the expected distinct probes per key.
        pub fn counter_histogram(&self) -> [u64; 16] {
            self.stats().histogram
        }

        /// Number of saturated counters (at 15: never decremented again).
        pub fn saturated_counters(&self) -> u64 {
            self.line_words()
                .flat_map(|ws| ws.into_iter())
                .map(|w| u64::from($crate::nibble::saturated(w).count_ones()))
                .sum()
        }

        /// Number of non-zero counters.
        pub fn nonzero_counters(&self) -> u64 {
            self.line_words()
                .flat_map(|ws| ws.into_iter())
                .map(|w| u64::from($crate::nibble::nonzero(w).count_ones()))
                .sum()
        }

        /// Fraction of counters that are non-zero.
        pub fn fill(&self) -> f64 {
            self.nonzero_counters() as f64 / self.num_counters as f64
        }

        /// Sum of all counters.
        pub fn counter_sum(&self) -> u64 {
            self.counter_histogram()
                .iter()
                .enumerate()
                .map(|(v, &n)| v as u64 * n)
                .sum()
        }

        /// The false-positive rate for the current contents, exact given the counters
        /// under ideal hashing: blocked, the mean over lines of
        /// `(non-zero counters in the line / 128)^k`; standard, `(non-zero / m)^k`.
        pub fn expected_false_pos(&self) -> f64 {
            match self.layout {
                CounterLayout::Blocked => self.stats().line_fp_sum / self.lines.len() as f64,
                CounterLayout::Standard => {
                    (self.nonzero_counters() as f64 / self.num_counters as f64).powi(self.k as i32)
                }
            }
        }

        /// Estimated number of keys present: the counter sum divided by the expected number
        /// of distinct counters a key increments (an underestimate once counters
        /// saturate).
        pub fn estimated_len(&self) -> f64 {
            let per_key = match self.layout {
                CounterLayout::Blocked => $crate::layout::expected_distinct(
                    f64::from($crate::layout::LINE_COUNTERS),
                    self.k,
                ),
                CounterLayout::Standard => {
                    $crate::layout::expected_distinct(self.num_counters as f64, self.k)
                }
            };
            self.counter_sum() as f64 / per_key
        }
    };
}
pub(crate) use counter_statistics;

impl<S> CountingBloomFilter<S> {
    fn line_words(&self) -> impl Iterator<Item = [u64; 8]> + '_ {
        self.lines.iter().map(|l| l.words)
    }

    counter_statistics!();

    /// The counter lines (see [`CounterLine`]; for the standard layout counter `p` is
    /// counter `p % 128` of line `p / 128`).
    pub fn as_lines(&self) -> &[CounterLine] {
        &self.lines
    }

    /// The number of keys present: inserts minus successful removes since the filter
    /// was made empty, plus the other filter's count after a [`union`](Self::union). A
    /// filter loaded from bytes starts from the count stored in the file; one rebuilt by
    /// [`from_lines`](Self::from_lines) or from an atomic filter (which keeps no count:
    /// one shared counter would serialise its threads) starts from
    /// [`estimated_len`](Self::estimated_len). Removing a false positive, which the type's
    /// docs warn against, makes it undercount.
    pub fn len(&self) -> u64 {
        self.items
    }

    /// Whether [`len`](Self::len) is 0 (the workspace's one meaning of `is_empty` for a
    /// filter that counts its keys, as d-left's). Counters a remove left at 15 (a
    /// saturated key, [`RemoveOutcome::Saturated`]) stay set after the last key is gone,
    /// so a filter can be empty and still answer `true` for such a key;
    /// `nonzero_counters() == 0` tells whether every counter is zero.
    pub fn is_empty(&self) -> bool {
        self.items == 0
    }

    /// Sets every counter to zero.
    pub fn clear(&mut self) {
        self.lines.fill(CounterLine::ZERO);
        self.items = 0;
    }
}

/// Sized for the collected keys at 1 % FP (blocked layout, default hasher), then filled
/// with [`insert_batch`](CountingBloomFilter::insert_batch).
impl<T: Hash> FromIterator<T> for CountingBloomFilter {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let keys: Vec<T> = iter.into_iter().collect();
        let mut filter = Self::with_false_pos(0.01)
            .expected_items(keys.len().max(1) as u64)
            .unwrap_or_else(|e| panic!("FromIterator: no filter for {} keys: {e}", keys.len()));
        filter.insert_batch(&keys);
        filter
    }
}

impl<S: Clone> Clone for CountingBloomFilter<S> {
    fn clone(&self) -> Self {
        Self {
            lines: self.lines.clone(),
            num_counters: self.num_counters,
            k: self.k,
            layout: self.layout,
            backend: self.backend,
            hasher: self.hasher.clone(),
            items: self.items,
        }
    }
}

impl<S: fmt::Debug> fmt::Debug for CountingBloomFilter<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CountingBloomFilter")
            .field("layout", &self.layout)
            .field("num_counters", &self.num_counters)
            .field("num_hashes", &self.k)
            .field("hasher", &self.hasher)
            .finish_non_exhaustive()
    }
}

/// Equal when the shapes (hasher fingerprints included) and all counters are equal.
impl<S: BuildHasher> PartialEq for CountingBloomFilter<S> {
    fn eq(&self, other: &Self) -> bool {
        self.shape() == other.shape() && self.lines == other.lines
    }
}

impl<S: BuildHasher> Eq for CountingBloomFilter<S> {}

/// Inserts the keys through the batch path,
/// [`EXTEND_CHUNK`](bloomforge_core::batch::EXTEND_CHUNK) at a time.
impl<T: Hash, S: BuildHasher> Extend<T> for CountingBloomFilter<S> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        bloomforge_core::batch::for_each_chunk(iter, |chunk| self.insert_batch(chunk));
    }
}

impl<T: Hash + ?Sized, S: BuildHasher> Filter<T> for CountingBloomFilter<S> {
    type InsertError = core::convert::Infallible;
    fn insert(&mut self, key: &T) -> Result<bool, Self::InsertError> {
        Ok(CountingBloomFilter::insert(self, key))
    }
    fn contains(&self, key: &T) -> bool {
        CountingBloomFilter::contains(self, key)
    }
    fn memory_bits(&self) -> u64 {
        CountingBloomFilter::memory_bits(self)
    }
    fn expected_false_pos(&self) -> f64 {
        CountingBloomFilter::expected_false_pos(self)
    }
}
