//! The public block filters: [`BlockedBloomFilter`], [`SplitBlockBloomFilter`] and their
//! atomic twins, generated from one definition over the crate-private `Layout` so the four
//! cannot drift apart.

use crate::arch::{check_backend, Backend};
use crate::block::{Block256, Block512};
use crate::builder::BuildFilter;
use crate::error::FilterShape;
use crate::format::PersistentHasher;
use crate::hash::{hash_one, hasher_fingerprint, DefaultHasher};
use crate::layout::{Blocked512, Layout, Split256};
use crate::ranges::{RangeSplit, RangeSplitter};
use crate::raw::{
    par_insert_atomic, par_insert_hashes_ranged, par_insert_partitioned, par_insert_split, Hashes,
    Keys, RawAtomicBlocks, RawBlocks,
};
use crate::{Error, Filter, Result};
use core::fmt;
use core::hash::{BuildHasher, Hash};

/// Streams a block filter in the format of [`crate::format`]: shared by the plain and
/// atomic filters, which differ only in how a block is `read` (a copy, or relaxed loads).
fn write_blocks<L: Layout, B, S: PersistentHasher>(
    writer: impl std::io::Write,
    hasher: &S,
    k: u32,
    items: f64,
    blocks: &[B],
    read: impl Fn(&B) -> L::Block,
) -> Result<()> {
    crate::format::encode_to(
        writer,
        L::FORMAT_KIND,
        hasher,
        k,
        blocks.len() as u64 * u64::from(L::BLOCK_BITS),
        items.round() as u64,
        (blocks.len() * L::BLOCK_BYTES) as u64,
        |sink| crate::format::stream_le(blocks, sink, |b, buf| L::write_block_le(&read(b), buf)),
    )
}

/// [`write_blocks`] for a plain filter: on a little-endian machine its blocks are the
/// payload's bytes, written straight from memory after one checksum pass
/// ([`crate::format::encode_slice_to`]); 100M keys' 124 MB filter took 0.15-0.17 s to
/// write on a 16-core Xeon through the per-block copies, `dd` 0.03 s for the same bytes.
fn write_plain_blocks<L: Layout, S: PersistentHasher>(
    writer: impl std::io::Write,
    hasher: &S,
    k: u32,
    items: f64,
    blocks: &[L::Block],
) -> Result<()> {
    match L::blocks_le_bytes(blocks) {
        Some(bytes) => crate::format::encode_slice_to(
            writer,
            L::FORMAT_KIND,
            hasher,
            k,
            blocks.len() as u64 * u64::from(L::BLOCK_BITS),
            items.round() as u64,
            bytes,
        ),
        None => write_blocks::<L, _, _>(writer, hasher, k, items, blocks, |b| *b),
    }
}

/// The checks a block filter's header must pass before its payload is decoded: a positive
/// whole number of blocks, a payload of exactly those bits, a probe count the layout
/// takes (`open` / `open_stream` checked kind, hasher and payload length).
fn check_block_header<L: Layout>(header: &crate::format::Header) -> Result<()> {
    let bits = u64::from(L::BLOCK_BITS);
    if header.num_bits == 0 || !header.num_bits.is_multiple_of(bits) {
        return Err(Error::Corrupt {
            reason: "bit count is not a positive number of blocks",
        });
    }
    if header.num_bits / 8 != header.payload_len {
        return Err(Error::Corrupt {
            reason: "payload length does not match the bit count",
        });
    }
    crate::raw::check_hashes::<L>(header.num_hashes)
}

macro_rules! block_filters {
    (
        $(#[$pmeta:meta])* plain $Plain:ident,
        $(#[$ameta:meta])* atomic $Atomic:ident,
        layout $L:ty, block $Block:ty
    ) => {
        $(#[$pmeta])*
        pub struct $Plain<S = DefaultHasher> {
            raw: RawBlocks<$L>,
            hasher: S,
        }

        $crate::builder_constructors! {
            $Plain,
            new: "",
            false_pos: "The layout's own FP formula picks bits and probes.",
            with_num_bits: "`bits` bits (rounded up to whole blocks)",
        }

        impl<S> BuildFilter for $Plain<S> {
            type Filter<S2: BuildHasher> = $Plain<S2>;
            type Error = Error;

            fn for_false_pos<S2: BuildHasher>(fp: f64, items: u64, hasher: S2) -> Result<$Plain<S2>> {
                let (bits_per_key, k) = <$L>::size_for(fp);
                let best = <$L>::theory_fp(bits_per_key, k);
                // The solver caps bits per key; a target below that cap's FP is refused
                // rather than silently missed (1e-9 relative slack for the bisection).
                if best > fp * (1.0 + 1e-9) {
                    return Err(Error::UnreachableFalsePositiveRate { requested: fp, best });
                }
                let blocks = (items as f64 * bits_per_key / f64::from(<$L>::BLOCK_BITS)).ceil();
                if blocks.is_nan() || blocks >= <$L>::MAX_BLOCKS as f64 {
                    return Err(Error::TooLarge { requested: blocks as u64, max: <$L>::MAX_BLOCKS });
                }
                Ok($Plain { raw: RawBlocks::new((blocks as u64).max(1), k)?, hasher })
            }

            fn for_bits_and_hashes<S2: BuildHasher>(bits: u64, k: u32, hasher: S2) -> Result<$Plain<S2>> {
                let blocks = bits.div_ceil(u64::from(<$L>::BLOCK_BITS));
                Ok($Plain { raw: RawBlocks::new(blocks, k)?, hasher })
            }
        }

        impl<S: BuildHasher> $Plain<S> {
            /// Rebuilds a filter from its blocks, probe count and hasher (e.g. exported by
            /// another structure with the same hashing, or deserialized).
            ///
            /// # Errors
            /// [`Error::ZeroBits`] for no blocks, [`Error::TooLarge`] above the layout's
            /// block limit, [`Error::InvalidHashCount`] for a `k` the layout cannot use.
            pub fn from_blocks(blocks: Vec<$Block>, num_hashes: u32, hasher: S) -> Result<Self> {
                crate::raw::check_hashes::<$L>(num_hashes)?;
                if blocks.is_empty() {
                    return Err(Error::ZeroBits);
                }
                if blocks.len() as u64 > <$L>::MAX_BLOCKS {
                    return Err(Error::TooLarge { requested: blocks.len() as u64, max: <$L>::MAX_BLOCKS });
                }
                let raw = RawBlocks { blocks: blocks.into_boxed_slice(), k: num_hashes, backend: Backend::detect() };
                Ok(Self { raw, hasher })
            }

            /// Inserts `key`. Returns `true` if all its bits were already set (the key may
            /// have been present), `false` if it was certainly new.
            #[inline]
            pub fn insert<T: Hash + ?Sized>(&mut self, key: &T) -> bool {
                self.raw.insert_hash(hash_one(&self.hasher, key))
            }

            /// Whether `key` may be in the filter (`false`: certainly not).
            #[inline]
            pub fn contains<T: Hash + ?Sized>(&self, key: &T) -> bool {
                self.raw.contains_hash(hash_one(&self.hasher, key))
            }

            /// Inserts a key by its precomputed 64-bit hash (it must be well mixed).
            #[inline]
            pub fn insert_hash(&mut self, hash: u64) -> bool {
                self.raw.insert_hash(hash)
            }

            /// Queries a key by its precomputed 64-bit hash.
            #[inline]
            pub fn contains_hash(&self, hash: u64) -> bool {
                self.raw.contains_hash(hash)
            }

            /// Inserts every key of `keys`, hashing ahead and prefetching blocks so cache
            /// misses overlap (the fast path for filters larger than the cache).
            pub fn insert_batch<T: Hash>(&mut self, keys: &[T]) {
                self.raw.insert_batch(&Keys { keys, hasher: &self.hasher });
            }

            /// Queries every key of `keys` into `out[i]`, pipelined like
            /// [`insert_batch`](Self::insert_batch).
            ///
            /// # Errors
            /// [`Error::LengthMismatch`] (and `out` untouched) unless
            /// `keys.len() == out.len()`.
            pub fn contains_batch<T: Hash>(&self, keys: &[T], out: &mut [bool]) -> Result<()> {
                self.raw.contains_batch(&Keys { keys, hasher: &self.hasher }, out)
            }

            /// [`insert_batch`](Self::insert_batch) for precomputed hashes.
            pub fn insert_hash_batch(&mut self, hashes: &[u64]) {
                self.raw.insert_batch(&Hashes(hashes));
            }

            /// [`contains_batch`](Self::contains_batch) for precomputed hashes.
            ///
            /// # Errors
            /// [`Error::LengthMismatch`] unless `hashes.len() == out.len()`.
            pub fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
                self.raw.contains_batch(&Hashes(hashes), out)
            }

            /// Inserts precomputed hashes from all threads of the current rayon pool,
            /// without atomics and with bounded extra memory: for streaming callers that
            /// insert batches (say 2^18 hashes) into a filter much larger than a batch.
            /// The filter is cut into one range of blocks per thread; the hashes are grouped
            /// by range in parallel (a copy: 8 bytes per hash in all; see
            /// [`par_insert_split`](Self::par_insert_split)) and each thread inserts those
            /// of its range with the pipelined [`insert_hash_batch`](Self::insert_hash_batch)
            /// into its own range. Bit-identical to a sequential build. Batches under 8192 hashes and
            /// one-thread pools insert on the calling thread. For one huge batch of keys,
            /// [`par_insert_batch`](Self::par_insert_batch) is faster (it inserts from
            /// cache) but buffers up to ~1.25x the filter.
            pub fn par_insert_hash_batch(&mut self, hashes: &[u64]) {
                let (backend, k) = (self.raw.backend, self.raw.k);
                par_insert_hashes_ranged::<$L>(backend, &mut self.raw.blocks, k, hashes);
            }

            /// Cuts this filter's blocks into `ranges` contiguous ranges (for instance one
            /// per thread), for [`par_insert_split`](Self::par_insert_split): the splitter
            /// groups hashes by range wherever they are computed. See [`crate::ranges`].
            /// The count is clamped to `1..=max(1, blocks - 1)` and to
            /// [`MAX_RANGES`](crate::ranges::MAX_RANGES) ([`RangeSplitter::ranges`] gives
            /// the one used).
            pub fn range_splitter(&self, ranges: usize) -> RangeSplitter {
                RangeSplitter::new(<$L>::ID, self.raw.blocks.len(), ranges)
            }

            /// Inserts hashes grouped by range with `splitter` (this filter's
            /// [`range_splitter`](Self::range_splitter)): range `r` of every part is
            /// inserted by one task of the current rayon pool into range `r` of the blocks,
            /// with plain stores and the pipelined batch loop. No hash is read twice,
            /// whatever the number of threads. Bit-identical to a sequential insert.
            ///
            /// # Errors
            /// [`Error::RangeMismatch`] if `splitter` does not cut this filter (another
            /// layout or number of blocks) or a part was split by another splitter;
            /// nothing is inserted then.
            pub fn par_insert_split(&mut self, splitter: &RangeSplitter, parts: &[RangeSplit]) -> Result<()> {
                let blocks = self.raw.blocks.len();
                if splitter.layout() != <$L>::ID || splitter.num_blocks() != blocks {
                    return Err(Error::RangeMismatch(format!(
                        "the splitter cuts a {} filter of {} blocks, this is a {} filter of {blocks}",
                        splitter.layout().name(), splitter.num_blocks(), <$L>::ID.name()
                    )));
                }
                if let Some(i) = parts.iter().position(|p| !splitter.is_splitter_of(p)) {
                    return Err(Error::RangeMismatch(format!(
                        "part {i} was split by another splitter than the one given ({} ranges)",
                        splitter.ranges()
                    )));
                }
                let (backend, k) = (self.raw.backend, self.raw.k);
                par_insert_split::<$L>(backend, &mut self.raw.blocks, k, splitter, parts);
                Ok(())
            }

            /// Inserts `keys` from all threads of the current rayon pool with a partitioned
            /// build: the filter is cut into ~256 KiB ranges of blocks; threads hash keys
            /// into per-range buffers, then each thread inserts whole ranges with plain
            /// stores while the range sits in its cache (no atomic read-modify-writes,
            /// which cost ~20 cycles each, and no random DRAM access per key). The result is
            /// bit-identical to a sequential build. The buffers hold one round of hashes,
            /// ~10 bytes per key of a round (one key per 8 bytes of filter, at least 2^22,
            /// at most the batch): up to ~1.25x the filter's size or ~40 MiB, whichever is
            /// larger, allocated per call.
            ///
            /// A filter under 8 MiB fits in cache, so partitioning would only add work:
            /// with at least 2^17 keys, the threads claim chunks of 2^15 keys, the calling
            /// thread inserts its chunks into the filter itself and every other thread into
            /// a private zeroed copy, and the copies are then OR-ed in, in parallel. That
            /// costs one filter's size per extra thread, at most 64 MiB in all (fewer
            /// threads if needed); a thread whose copy cannot be allocated leaves its
            /// chunks to the others.
            /// Other batches under 2^20 keys and one-thread pools take the pipelined
            /// [`insert_batch`](Self::insert_batch) on the calling thread.
            ///
            /// # Panics
            /// If the partition buffers cannot be allocated (out of memory), like a `Vec`
            /// that cannot grow; the filter then holds a subset of `keys`.
            pub fn par_insert_batch<T: Hash + Sync>(&mut self, keys: &[T])
            where
                S: Sync,
            {
                let (backend, k) = (self.raw.backend, self.raw.k);
                par_insert_partitioned::<$L, T, S>(backend, &mut self.raw.blocks, k, keys, &self.hasher);
            }

            /// Number of bits (a whole number of blocks).
            #[inline]
            pub fn num_bits(&self) -> u64 {
                self.raw.blocks.len() as u64 * u64::from(<$L>::BLOCK_BITS)
            }

            /// Number of blocks.
            #[inline]
            pub fn num_blocks(&self) -> usize {
                self.raw.blocks.len()
            }

            /// Probes per key.
            #[inline]
            pub fn num_hashes(&self) -> u32 {
                self.raw.k
            }

            /// The hasher.
            pub fn hasher(&self) -> &S {
                &self.hasher
            }

            /// The SIMD backend the probes use.
            pub fn backend(&self) -> Backend {
                self.raw.backend
            }

            /// Switches the SIMD backend (all give identical results; for benchmarks and
            /// tests).
            ///
            /// # Errors
            /// [`Error::BackendUnavailable`] if this CPU cannot run it.
            pub fn set_backend(&mut self, backend: Backend) -> Result<()> {
                check_backend(backend)?;
                self.raw.backend = backend;
                Ok(())
            }

            /// The blocks.
            pub fn blocks(&self) -> &[$Block] {
                &self.raw.blocks
            }

            /// Number of set bits.
            pub fn count_ones(&self) -> u64 {
                self.raw.count_ones()
            }

            /// The false-positive rate for the keys inserted so far: the probability that
            /// a random non-member is reported present, computed exactly from the blocks'
            /// fill (mean over blocks). Costs one pass over the filter.
            pub fn expected_false_pos(&self) -> f64 {
                <$L>::blocks_fp(&self.raw.blocks, self.raw.k)
            }

            /// Estimated number of distinct keys inserted, from each block's fill. Costs
            /// one pass over the filter.
            ///
            /// There is no `len()`: a plain Bloom filter cannot know its item count. A
            /// repeated key and a false positive look alike to `insert`, and a union or an
            /// intersection combines bits, not keys; so the count is estimated from the
            /// bits, under this different name (the workspace convention).
            pub fn estimated_len(&self) -> f64 {
                let k = self.raw.k;
                crate::layout::sum_over_blocks(&self.raw.blocks, |b| <$L>::block_keys(b, k))
            }

            /// Whether no bit is set.
            pub fn is_empty(&self) -> bool {
                self.count_ones() == 0
            }

            /// Unsets every bit.
            pub fn clear(&mut self) {
                self.raw.clear();
            }

            /// Size, probes and hasher fingerprint: what must match to combine filters.
            pub fn shape(&self) -> FilterShape {
                FilterShape {
                    num_bits: self.num_bits(),
                    num_hashes: self.raw.k,
                    hasher_fingerprint: hasher_fingerprint(&self.hasher),
                }
            }

            fn check_compatible(&self, other: &Self) -> Result<()> {
                let (left, right) = (self.shape(), other.shape());
                if left == right {
                    Ok(())
                } else {
                    Err(Error::IncompatibleFilters { left, right })
                }
            }

            /// Adds every key of `other` (bitwise OR).
            ///
            /// # Errors
            /// [`Error::IncompatibleFilters`] (and `self` unchanged) if the sizes, probe
            /// counts or hashers differ.
            pub fn union(&mut self, other: &Self) -> Result<()> {
                self.check_compatible(other)?;
                self.raw.zip_words(&other.raw, |a, b| a | b);
                Ok(())
            }

            /// Keeps only bits set in both (bitwise AND): contains every key present in
            /// both, with a false-positive rate at most that of either.
            ///
            /// # Errors
            /// As [`union`](Self::union).
            pub fn intersect(&mut self, other: &Self) -> Result<()> {
                self.check_compatible(other)?;
                self.raw.zip_words(&other.raw, |a, b| a & b);
                Ok(())
            }
        }

        impl $Plain {
    /// Reads a filter serialized with an unkeyed hasher (its seed is restored).
            ///
            /// # Errors
            /// [`Error::Corrupt`], [`Error::UnsupportedVersion`] or [`Error::HasherMismatch`]
            /// (e.g. a keyed filter: use [`from_bytes_with_hasher`](Self::from_bytes_with_hasher));
            /// [`Error::InvalidHashCount`] for a stored probe count the layout cannot use.
            pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
                Self::decode(bytes, None)
            }

    /// Reads one serialized filter from `reader`.
            ///
            /// # Errors
            /// As [`from_bytes`](Self::from_bytes), or [`Error::Io`].
            pub fn read_from<R: std::io::Read>(reader: R) -> Result<Self> {
                Self::from_bytes(&crate::format::read_all(reader)?)
            }

            /// Reads the filter file at `path` in one pass: the header, checked against the
            /// file's length before anything is allocated, then the payload straight into
            /// the filter's blocks (on little-endian targets), checksummed as it arrives. A
            /// filter read this way takes its own size in memory, where `from_bytes` of the
            /// file's bytes holds twice it until the bytes are dropped.
            ///
            /// # Errors
            /// As [`from_bytes`](Self::from_bytes) (bytes after the filter included), or
            /// [`Error::Io`].
            pub fn read_from_file(path: impl AsRef<std::path::Path>) -> Result<Self> {
                let mut file = std::fs::File::open(path).map_err(Error::from)?;
                let len = file.metadata().map_err(Error::from)?.len();
                let (header, hasher, mut check) = crate::format::open_stream::<DefaultHasher>(
                    &mut file,
                    <$L>::FORMAT_KIND,
                    None,
                )?;
                if header.payload_len.checked_add(crate::format::HEADER_LEN as u64) != Some(len) {
                    return Err(Error::Corrupt { reason: "payload length does not match the input length" });
                }
                check_block_header::<$L>(&header)?;
                let size = <$L>::BLOCK_BYTES;
                let mut blocks =
                    crate::raw::alloc_blocks::<$Block>(header.payload_len / size as u64, <$L>::MAX_BLOCKS)?;
                match crate::layout::le_bytes_mut(&mut blocks) {
                    Some(bytes) => {
                        for piece in bytes.chunks_mut(1 << 20) {
                            check.read(&mut file, piece)?;
                        }
                    }
                    None => {
                        let mut buf = vec![0u8; size];
                        for block in blocks.iter_mut() {
                            check.read(&mut file, &mut buf)?;
                            *block = <$L>::read_block_le(&buf);
                        }
                    }
                }
                check.finish()?;
                let raw = RawBlocks { blocks, k: header.num_hashes, backend: Backend::detect() };
                Ok(Self { raw, hasher })
            }
        }

        impl<S: PersistentHasher> $Plain<S> {
            /// Serializes the filter in the versioned format of [`crate::format`] (the
            /// bytes [`write_to`](Self::write_to) streams, collected in one buffer).
            pub fn to_bytes(&self) -> Vec<u8> {
                let payload = self.raw.blocks.len() * <$L>::BLOCK_BYTES;
                let mut out = Vec::with_capacity(crate::format::HEADER_LEN + payload);
                // Writing into a `Vec` cannot fail.
                let _ = self.write_to(&mut out);
                out
            }

            /// Writes the bytes of [`to_bytes`](Self::to_bytes) to `writer`: on a
            /// little-endian machine the blocks straight from memory, elsewhere through a
            /// 64 KiB buffer (no copy of the filter is made either way).
            ///
            /// # Errors
            /// [`Error::Io`] if the writer fails.
            pub fn write_to<W: std::io::Write>(&self, writer: W) -> Result<()> {
                let items = self.estimated_len();
                write_plain_blocks::<$L, _>(writer, &self.hasher, self.raw.k, items, &self.raw.blocks)
            }


            /// ORs the filter serialized in `bytes` into this one: what
            /// [`union`](Self::union) with `from_bytes(bytes)` does, without building that
            /// filter (one checksum pass and one OR pass over the bytes, no allocation;
            /// for merging serialized partial filters, as a DataFusion aggregate's final
            /// step does).
            ///
            /// # Errors
            /// As [`from_bytes_with_hasher`](Self::from_bytes_with_hasher) with this
            /// filter's hasher ([`Error::HasherMismatch`] for another seed or key), and
            /// [`Error::IncompatibleFilters`] for another size or probe count. `self` is
            /// unchanged on error.
            pub fn union_bytes(&mut self, bytes: &[u8]) -> Result<()>
            where
                S: Clone,
            {
                let (header, payload, _) = crate::format::open(
                    bytes,
                    <$L>::FORMAT_KIND,
                    Some(self.hasher.clone()),
                    true,
                )?;
                if header.num_bits / 8 != payload.len() as u64 {
                    return Err(Error::Corrupt { reason: "payload length does not match the bit count" });
                }
                if header.num_bits != self.num_bits() || header.num_hashes != self.raw.k {
                    return Err(Error::IncompatibleFilters {
                        left: self.shape(),
                        right: FilterShape {
                            num_bits: header.num_bits,
                            num_hashes: header.num_hashes,
                            hasher_fingerprint: hasher_fingerprint(&self.hasher),
                        },
                    });
                }
                for (block, chunk) in self.raw.blocks.iter_mut().zip(payload.chunks_exact(<$L>::BLOCK_BYTES)) {
                    let other = <$L>::read_block_le(chunk);
                    for (a, b) in <$L>::u64_words_mut(block).iter_mut().zip(<$L>::u64_words(&other)) {
                        *a |= *b;
                    }
                }
                Ok(())
            }

            /// Reads a filter with the caller's hasher (needed for keyed hashing, whose key
            /// is never stored).
            ///
            /// # Errors
            /// As [`from_bytes`](Self::from_bytes).
            pub fn from_bytes_with_hasher(bytes: &[u8], hasher: S) -> Result<Self> {
                Self::decode(bytes, Some(hasher))
            }


            pub(crate) fn decode(bytes: &[u8], hasher: Option<S>) -> Result<Self> {
                let (header, payload, hasher) = crate::format::open(bytes, <$L>::FORMAT_KIND, hasher, true)?;
                check_block_header::<$L>(&header)?;
                let size = <$L>::BLOCK_BYTES;
                let blocks = crate::raw::alloc_blocks_with::<$Block>(
                    payload.len() as u64 / size as u64,
                    <$L>::MAX_BLOCKS,
                    |first, chunk| {
                        let bytes = &payload[first * size..(first + chunk.len()) * size];
                        for (block, b) in chunk.iter_mut().zip(bytes.chunks_exact(size)) {
                            *block = <$L>::read_block_le(b);
                        }
                    },
                )?;
                let raw = RawBlocks { blocks, k: header.num_hashes, backend: Backend::detect() };
                Ok(Self { raw, hasher })
            }
        }

        impl<S: Clone> Clone for $Plain<S> {
            fn clone(&self) -> Self {
                Self { raw: self.raw.clone(), hasher: self.hasher.clone() }
            }
        }

        impl<S: fmt::Debug> fmt::Debug for $Plain<S> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($Plain))
                    .field("num_blocks", &self.raw.blocks.len())
                    .field("num_hashes", &self.raw.k)
                    .field("backend", &self.raw.backend)
                    .field("hasher", &self.hasher)
                    .finish_non_exhaustive()
            }
        }

        /// Equal when the bits, probe counts and hasher fingerprints are equal (the SIMD
        /// backend is not part of a filter's value).
        impl<S: BuildHasher> PartialEq for $Plain<S> {
            fn eq(&self, other: &Self) -> bool {
                self.shape() == other.shape() && self.raw.blocks == other.raw.blocks
            }
        }

        impl<S: BuildHasher> Eq for $Plain<S> {}

        /// Inserts the keys through the batch path, [`EXTEND_CHUNK`](crate::batch::EXTEND_CHUNK)
        /// at a time.
        impl<T: Hash, S: BuildHasher> Extend<T> for $Plain<S> {
            fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
                crate::batch::for_each_chunk(iter, |chunk| self.insert_batch(chunk));
            }
        }

        /// Collects keys into a filter sized for their number at a 1 % false-positive
        /// rate (the keys are buffered to count them).
        ///
        /// # Panics
        /// Where the builder would refuse: a filter for that many keys exceeds the
        /// addressable size or cannot be allocated (never with a smaller, wrong filter).
        impl<T: Hash> FromIterator<T> for $Plain {
            fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
                let keys: Vec<T> = iter.into_iter().collect();
                let mut filter = Self::with_false_pos(0.01)
                    .expected_items(keys.len().max(1) as u64)
                    .unwrap_or_else(|e| {
                        panic!("FromIterator: no filter for {} keys: {e}", keys.len())
                    });
                filter.insert_batch(&keys);
                filter
            }
        }

        impl<T: Hash + ?Sized, S: BuildHasher> Filter<T> for $Plain<S> {
            type InsertError = core::convert::Infallible;
            fn insert(&mut self, key: &T) -> core::result::Result<bool, Self::InsertError> {
                Ok($Plain::insert(self, key))
            }
            fn contains(&self, key: &T) -> bool {
                $Plain::contains(self, key)
            }
            fn memory_bits(&self) -> u64 {
                self.num_bits()
            }
            fn expected_false_pos(&self) -> f64 {
                $Plain::expected_false_pos(self)
            }
        }

        $(#[$ameta])*
        pub struct $Atomic<S = DefaultHasher> {
            raw: RawAtomicBlocks<$L>,
            hasher: S,
        }

        $crate::builder_constructors! {
            $Atomic,
            new: "",
            false_pos: "The same sizing as the plain filter's.",
            with_num_bits: "`bits` bits (rounded up to whole blocks)",
        }

        impl<S> BuildFilter for $Atomic<S> {
            type Filter<S2: BuildHasher> = $Atomic<S2>;
            type Error = Error;

            fn for_false_pos<S2: BuildHasher>(fp: f64, items: u64, hasher: S2) -> Result<$Atomic<S2>> {
                <$Plain<S2>>::for_false_pos(fp, items, hasher).map($Atomic::from)
            }

            fn for_bits_and_hashes<S2: BuildHasher>(bits: u64, k: u32, hasher: S2) -> Result<$Atomic<S2>> {
                <$Plain<S2>>::for_bits_and_hashes(bits, k, hasher).map($Atomic::from)
            }
        }

        impl<S> From<$Plain<S>> for $Atomic<S> {
            /// Free: the blocks are reinterpreted in place.
            fn from(plain: $Plain<S>) -> Self {
                Self { raw: RawAtomicBlocks::from_plain(plain.raw), hasher: plain.hasher }
            }
        }

        impl<S> From<$Atomic<S>> for $Plain<S> {
            fn from(atomic: $Atomic<S>) -> Self {
                atomic.into_inner()
            }
        }

        impl<S> $Atomic<S> {
            /// The plain filter with the same bits. Free: the blocks are reinterpreted in
            /// place.
            pub fn into_inner(self) -> $Plain<S> {
                $Plain { raw: self.raw.into_plain(), hasher: self.hasher }
            }
        }

        impl<S: PersistentHasher> $Atomic<S> {
            /// Writes the bytes the plain filter's `to_bytes` gives for the current bits,
            /// streamed from the words in place with relaxed loads (no copy of the filter:
            /// for a shared filter that cannot be moved out with `into_inner`).
            ///
            /// # Errors
            /// [`Error::Io`] if the writer fails, or if inserts ran concurrently and changed
            /// the bits between the checksum pass and the write pass (the output then fails
            /// its checksum: write once inserts have stopped).
            pub fn write_to<W: std::io::Write>(&self, writer: W) -> Result<()> {
                let items = self.estimated_len();
                write_blocks::<$L, _, _>(writer, &self.hasher, self.raw.k, items, &self.raw.blocks, <$L>::load_block)
            }

            /// The plain filter's `to_bytes` of the current bits: one snapshot of the
            /// words (a copy of the filter), so the bytes always pass their checksum, even
            /// while inserts run (they hold the bits of the moment each word was read).
            pub fn to_bytes(&self) -> Vec<u8>
            where
                S: Clone,
            {
                self.snapshot().to_bytes()
            }
        }

        impl $Atomic {
            /// Reads the bytes of the plain filter's `to_bytes` (either type's), converted
            /// for free.
            ///
            /// # Errors
            /// As the plain filter's `from_bytes`.
            pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
                $Plain::from_bytes(bytes).map(Self::from)
            }

            /// Reads one serialized filter from `reader`, as the plain filter's
            /// `read_from`.
            ///
            /// # Errors
            /// As the plain filter's `read_from`.
            pub fn read_from<R: std::io::Read>(reader: R) -> Result<Self> {
                $Plain::read_from(reader).map(Self::from)
            }
        }

        impl<S: BuildHasher> $Atomic<S> {
            /// Inserts `key` through a shared reference; safe from any number of threads.
            /// Returns `true` if all its bits were already set (two racing inserts of the
            /// same new key may both return `false`).
            #[inline]
            pub fn insert<T: Hash + ?Sized>(&self, key: &T) -> bool {
                self.raw.insert_hash(hash_one(&self.hasher, key))
            }

            /// Whether `key` may be in the filter. Sees every insert that happened-before
            /// this call (same thread, or ordered by a join, barrier, lock or channel).
            #[inline]
            pub fn contains<T: Hash + ?Sized>(&self, key: &T) -> bool {
                self.raw.contains_hash(hash_one(&self.hasher, key))
            }

            /// Inserts a key by its precomputed hash.
            #[inline]
            pub fn insert_hash(&self, hash: u64) -> bool {
                self.raw.insert_hash(hash)
            }

            /// Queries a key by its precomputed hash.
            #[inline]
            pub fn contains_hash(&self, hash: u64) -> bool {
                self.raw.contains_hash(hash)
            }

            /// Pipelined batch insert from this thread.
            pub fn insert_batch<T: Hash>(&self, keys: &[T]) {
                self.raw.insert_batch(&Keys { keys, hasher: &self.hasher });
            }

            /// Pipelined batch query.
            ///
            /// # Errors
            /// [`Error::LengthMismatch`] unless `keys.len() == out.len()`.
            pub fn contains_batch<T: Hash>(&self, keys: &[T], out: &mut [bool]) -> Result<()> {
                self.raw.contains_batch(&Keys { keys, hasher: &self.hasher }, out)
            }

            /// Batch insert of precomputed hashes.
            pub fn insert_hash_batch(&self, hashes: &[u64]) {
                self.raw.insert_batch(&Hashes(hashes));
            }

            /// Batch query of precomputed hashes.
            ///
            /// # Errors
            /// [`Error::LengthMismatch`] unless `hashes.len() == out.len()`.
            pub fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
                self.raw.contains_batch(&Hashes(hashes), out)
            }

            /// Inserts `keys` from all threads of the current rayon pool (run it inside
            /// `pool.install(..)` to choose the pool, e.g. one with pinned threads).
            pub fn par_insert_batch<T: Hash + Sync>(&self, keys: &[T])
            where
                S: Sync,
            {
                par_insert_atomic::<$L, T, S>(self.raw.backend, &self.raw.blocks, self.raw.k, keys, &self.hasher);
            }

            /// Number of set bits (relaxed loads, in place).
            pub fn count_ones(&self) -> u64 {
                self.raw
                    .blocks
                    .iter()
                    .flat_map(|b| <$L>::atomic_words(b))
                    .map(|w| u64::from(w.load(core::sync::atomic::Ordering::Relaxed).count_ones()))
                    .sum()
            }

            /// The false-positive rate for the current contents (see the plain filter's
            /// `expected_false_pos`); reads the words in place with relaxed loads.
            pub fn expected_false_pos(&self) -> f64 {
                let k = self.raw.k;
                let sum = crate::layout::sum_over_blocks(&self.raw.blocks, |b| <$L>::block_fp(&<$L>::load_block(b), k));
                sum / self.raw.blocks.len() as f64
            }

            /// Estimated number of distinct keys inserted, from each block's fill (relaxed
            /// loads). As for the plain filter, there is no `len()`: bits cannot tell a
            /// repeated key or a false positive from a new key.
            pub fn estimated_len(&self) -> f64 {
                let k = self.raw.k;
                crate::layout::sum_over_blocks(&self.raw.blocks, |b| <$L>::block_keys(&<$L>::load_block(b), k))
            }

            /// Whether no bit is set (every query answers `false`; `estimated_len() == 0`).
            /// Relaxed loads: a snapshot while inserts run.
            pub fn is_empty(&self) -> bool {
                self.raw
                    .blocks
                    .iter()
                    .flat_map(|b| <$L>::atomic_words(b))
                    .all(|w| w.load(core::sync::atomic::Ordering::Relaxed) == 0)
            }

            /// A copy of the current bits as a plain filter (relaxed loads: a consistent
            /// snapshot only when no insert runs concurrently).
            pub fn snapshot(&self) -> $Plain<S>
            where
                S: Clone,
            {
                $Plain { raw: self.raw.snapshot(), hasher: self.hasher.clone() }
            }

            /// Number of bits.
            pub fn num_bits(&self) -> u64 {
                self.raw.blocks.len() as u64 * u64::from(<$L>::BLOCK_BITS)
            }

            /// Number of blocks.
            pub fn num_blocks(&self) -> usize {
                self.raw.blocks.len()
            }

            /// Probes per key.
            pub fn num_hashes(&self) -> u32 {
                self.raw.k
            }

            /// The hasher.
            pub fn hasher(&self) -> &S {
                &self.hasher
            }

            /// The SIMD backend.
            pub fn backend(&self) -> Backend {
                self.raw.backend
            }

            /// Switches the SIMD backend.
            ///
            /// # Errors
            /// [`Error::BackendUnavailable`] if this CPU cannot run it.
            pub fn set_backend(&mut self, backend: Backend) -> Result<()> {
                check_backend(backend)?;
                self.raw.backend = backend;
                Ok(())
            }
        }

        impl<S: fmt::Debug> fmt::Debug for $Atomic<S> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($Atomic))
                    .field("num_blocks", &self.raw.blocks.len())
                    .field("num_hashes", &self.raw.k)
                    .field("backend", &self.raw.backend)
                    .field("hasher", &self.hasher)
                    .finish_non_exhaustive()
            }
        }

        /// A copy of the current bits (relaxed loads: consistent when no insert runs
        /// concurrently, as [`snapshot`]($Atomic::snapshot)).
        impl<S: BuildHasher + Clone> Clone for $Atomic<S> {
            fn clone(&self) -> Self {
                Self::from(self.snapshot())
            }
        }

        /// Inserts every key (the `&self` insert; `&mut self` only because `Extend` asks
        /// for it: extend through a shared reference, `(&filter).extend(keys)`, from any
        /// number of threads).
        impl<T: Hash, S: BuildHasher> Extend<T> for $Atomic<S> {
            fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
                (&*self).extend(iter);
            }
        }

        /// Inserts every key through the shared reference, so threads holding
        /// `&filter` can each extend it.
        impl<T: Hash, S: BuildHasher> Extend<T> for &$Atomic<S> {
            fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
                crate::batch::for_each_chunk(iter, |chunk| self.insert_batch(chunk));
            }
        }

        /// Collects keys as the plain filter's `FromIterator` does (sized for their
        /// number at a 1 % false-positive rate, default hasher), then converts for free.
        impl<T: Hash> FromIterator<T> for $Atomic {
            fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
                Self::from(iter.into_iter().collect::<$Plain>())
            }
        }

        impl<T: Hash + ?Sized, S: BuildHasher> Filter<T> for $Atomic<S> {
            type InsertError = core::convert::Infallible;
            fn insert(&mut self, key: &T) -> core::result::Result<bool, Self::InsertError> {
                Ok($Atomic::insert(self, key))
            }
            fn contains(&self, key: &T) -> bool {
                $Atomic::contains(self, key)
            }
            fn memory_bits(&self) -> u64 {
                self.num_bits()
            }
            fn expected_false_pos(&self) -> f64 {
                $Atomic::expected_false_pos(self)
            }
        }
    };
}

block_filters! {
    /// A blocked Bloom filter (Putze, Sanders, Singler 2007): each key sets `k` bits inside
    /// one 512-bit, 64-byte-aligned block, so an insert or query touches one cache line.
    ///
    /// The block comes from a 64-bit fast range of the key's hash (sound at any size); the
    /// `k` positions from its low 32 bits, re-multiplied per probe (RocksDB's scheme).
    /// Sized with the exact blocked occupancy model, so the realised false-positive rate
    /// meets the target (a blocked filter needs ~10 % more bits than the standard formula).
    ///
    /// ```
    /// use bloomforge_core::BlockedBloomFilter;
    /// let mut f = BlockedBloomFilter::with_false_pos(0.01).expected_items(10_000)?;
    /// assert!(!f.insert(&"apple"));
    /// assert!(f.contains(&"apple"));
    /// assert!(f.expected_false_pos() < 1e-3);
    /// # Ok::<(), bloomforge_core::Error>(())
    /// ```
    plain BlockedBloomFilter,
    /// A [`BlockedBloomFilter`] whose inserts take `&self`: `AtomicU64` words, one cache
    /// line per key, `fetch_or` only where bits are missing. `Sync`; converts to and from
    /// the plain filter for free.
    ///
    /// ```
    /// use bloomforge_core::{AtomicBlockedBloomFilter, BlockedBloomFilter};
    /// let f = AtomicBlockedBloomFilter::with_false_pos(0.01).expected_items(1000)?;
    /// std::thread::scope(|s| {
    ///     s.spawn(|| f.insert(&1u64));
    ///     s.spawn(|| f.insert(&2u64));
    /// });
    /// let plain: BlockedBloomFilter = f.into_inner();
    /// assert!(plain.contains(&1u64) && plain.contains(&2u64));
    /// # Ok::<(), bloomforge_core::Error>(())
    /// ```
    atomic AtomicBlockedBloomFilter,
    layout Blocked512, block Block512
}

block_filters! {
    /// The Parquet split-block Bloom filter (SBBF): 256-bit blocks of eight `u32` words,
    /// one bit per word chosen with the specification's eight salts, block index from the
    /// hash's upper 32 bits. Fed XXH64-seed-0 hashes ([`parquet_hash`](crate::parquet_hash))
    /// it is byte-for-byte the filter Parquet writes.
    ///
    /// ```
    /// use bloomforge_core::{parquet_hash, SplitBlockBloomFilter};
    /// let mut f = SplitBlockBloomFilter::with_num_blocks(32)?;
    /// f.insert_hash(parquet_hash(&42i64.to_le_bytes()));
    /// assert!(f.contains_hash(parquet_hash(&42i64.to_le_bytes())));
    /// let bytes = f.as_bytes().to_vec();
    /// let g = SplitBlockBloomFilter::from_parquet_bitset(&bytes)?;
    /// assert_eq!(f, g);
    /// # Ok::<(), bloomforge_core::Error>(())
    /// ```
    plain SplitBlockBloomFilter,
    /// A [`SplitBlockBloomFilter`] whose inserts take `&self` (`AtomicU64` words). `Sync`;
    /// converts to and from the plain filter for free.
    atomic AtomicSplitBlockBloomFilter,
    layout Split256, block Block256
}

impl SplitBlockBloomFilter {
    /// A split-block filter of exactly `num_blocks` 32-byte blocks (Parquet sizes are powers
    /// of two; any positive count works here).
    ///
    /// # Errors
    /// [`Error::ZeroBits`] for 0, [`Error::TooLarge`] above 2^32 blocks.
    pub fn with_num_blocks(num_blocks: u64) -> Result<Self> {
        Ok(Self {
            raw: RawBlocks::new(num_blocks, 8)?,
            hasher: DefaultHasher::default(),
        })
    }

    /// Reads a Parquet SBBF bitset (the bytes after the bloom filter header).
    ///
    /// Parquet hashes values with XXH64 of their plain encoding, so query the result with
    /// [`contains_hash`](Self::contains_hash)`(`[`parquet_hash`](crate::parquet_hash)`(..))`;
    /// `contains(&key)` would hash with the default hasher and give meaningless answers.
    ///
    /// # Errors
    /// [`Error::InvalidBitset`] for an empty bitset or a length that is not a multiple of
    /// 32 bytes.
    pub fn from_parquet_bitset(bytes: &[u8]) -> Result<Self> {
        if bytes.is_empty() || !bytes.len().is_multiple_of(32) {
            return Err(Error::InvalidBitset {
                len: bytes.len(),
                reason: "a split-block bitset is a positive multiple of 32 bytes",
            });
        }
        let mut filter = Self::with_num_blocks((bytes.len() / 32) as u64)?;
        for (block, chunk) in filter.raw.blocks.iter_mut().zip(bytes.chunks_exact(32)) {
            for (word, b) in block.words.iter_mut().zip(chunk.chunks_exact(4)) {
                *word = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
        }
        Ok(filter)
    }
}

impl AtomicSplitBlockBloomFilter {
    /// An atomic split-block filter of exactly `num_blocks` 32-byte blocks.
    ///
    /// # Errors
    /// As [`SplitBlockBloomFilter::with_num_blocks`].
    pub fn with_num_blocks(num_blocks: u64) -> Result<Self> {
        SplitBlockBloomFilter::with_num_blocks(num_blocks).map(Self::from)
    }
}

impl<S: BuildHasher> SplitBlockBloomFilter<S> {
    /// The bitset in the Parquet layout (little-endian `u32` words, block after block).
    #[cfg(target_endian = "little")]
    pub fn as_bytes(&self) -> &[u8] {
        let blocks: &[Block256] = &self.raw.blocks;
        // SAFETY: Block256 is 32 plain bytes with no padding; on a little-endian target its
        // memory is exactly the Parquet byte layout; the slice borrows `self`.
        unsafe { core::slice::from_raw_parts(blocks.as_ptr().cast::<u8>(), blocks.len() * 32) }
    }

    /// The bitset in the Parquet layout, on any endianness.
    pub fn to_parquet_bytes(&self) -> Vec<u8> {
        self.raw
            .blocks
            .iter()
            .flat_map(|b| b.words)
            .flat_map(u32::to_le_bytes)
            .collect()
    }
}
