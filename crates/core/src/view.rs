//! Zero-copy, read-only views of serialized block filters.
//!
//! A filter written with `to_bytes` / `write_to` is a 64-byte header followed by its blocks
//! in little-endian order, which on a little-endian machine is exactly their in-memory
//! layout. A view checks the header and borrows the payload as blocks in place: opening a
//! memory-mapped multi-gigabyte filter costs no copy and no allocation, and pages are read
//! only as queries touch them (the "not on disk" check of a storage engine).
//!
//! The buffer must start at a 64-byte boundary (blocked) or 32-byte boundary (split-block)
//! so the payload, 64 bytes in, is aligned for its blocks: memory-mapped files are
//! page-aligned. An unaligned buffer, or a big-endian target, is an
//! [`Error::ZeroCopy`]; `from_bytes` on the filter type copies instead.

use crate::arch::Backend;
use crate::block::{Block256, Block512};
use crate::format::{PersistentHasher, HEADER_LEN};
use crate::hash::DefaultHasher;
use crate::layout::{Blocked512, Layout, Split256};
use crate::raw::{check_batch_len, check_hashes, d_contains_batch, d_contains_one, Hashes, Keys};
use crate::{BlockedBloomFilter, Error, Result, SplitBlockBloomFilter};
use core::fmt;
use core::hash::{BuildHasher, Hash};

/// Validates `bytes` as a serialized filter of layout `L` and borrows its payload as blocks.
fn open_view<L: Layout, S: PersistentHasher>(
    bytes: &[u8],
    hasher: Option<S>,
    verify_checksum: bool,
) -> Result<(&[L::Block], u32, S)> {
    if cfg!(not(target_endian = "little")) {
        return Err(Error::ZeroCopy {
            reason: "the payload is little-endian and this target is big-endian",
        });
    }
    let (header, payload, hasher) =
        crate::format::open(bytes, L::FORMAT_KIND, hasher, verify_checksum)?;
    check_hashes::<L>(header.num_hashes)?;
    let bits = u64::from(L::BLOCK_BITS);
    if header.num_bits == 0 || !header.num_bits.is_multiple_of(bits) {
        return Err(Error::Corrupt {
            reason: "bit count is not a positive number of blocks",
        });
    }
    if header.num_bits / 8 != payload.len() as u64 {
        return Err(Error::Corrupt {
            reason: "payload length does not match the bit count",
        });
    }
    let num_blocks = header.num_bits / bits;
    if num_blocks > L::MAX_BLOCKS {
        return Err(Error::TooLarge {
            requested: num_blocks,
            max: L::MAX_BLOCKS,
        });
    }
    if !payload.as_ptr().cast::<L::Block>().is_aligned() {
        return Err(Error::ZeroCopy {
            reason: "the buffer does not start at a block-size boundary (64 bytes for blocked, 32 for split-block filters)",
        });
    }
    debug_assert_eq!(HEADER_LEN % core::mem::align_of::<L::Block>(), 0);
    // SAFETY: the payload is `num_blocks * size_of::<L::Block>()` bytes (`num_bits / 8`
    // checked above, and a block is `BLOCK_BITS / 8` bytes), in bounds of `bytes` and
    // borrowed for the returned lifetime; its start is aligned for `L::Block` (checked).
    // Blocks are plain arrays of integers (`ZeroInit`), so every bit pattern is a valid
    // block, and on this little-endian target the serialized little-endian words are
    // their in-memory representation. Nothing can write through the shared borrow.
    let blocks = unsafe {
        core::slice::from_raw_parts(payload.as_ptr().cast::<L::Block>(), num_blocks as usize)
    };
    Ok((blocks, header.num_hashes, hasher))
}

macro_rules! views {
    (
        $(#[$meta:meta])*
        view $View:ident of $Plain:ident, layout $L:ty, block $Block:ty
    ) => {
        $(#[$meta])*
        pub struct $View<'a, S = DefaultHasher> {
            blocks: &'a [$Block],
            k: u32,
            backend: Backend,
            hasher: S,
        }

        impl<'a> $View<'a> {
            /// Borrows a filter serialized with an unkeyed hasher (its seed is restored),
            /// checking every header field and the payload checksum (one pass over the
            /// payload).
            ///
            /// # Errors
            /// [`Error::ZeroCopy`] for a misaligned buffer (or a big-endian target);
            /// otherwise as the filter's `from_bytes`: [`Error::Corrupt`],
            /// [`Error::UnsupportedVersion`], [`Error::HasherMismatch`] (a keyed filter:
            /// use [`from_bytes_with_hasher`](Self::from_bytes_with_hasher)),
            /// [`Error::InvalidHashCount`].
            pub fn from_bytes(bytes: &'a [u8]) -> Result<Self> {
                Self::open(bytes, None, true)
            }

            /// [`from_bytes`](Self::from_bytes) without the checksum pass, so opening a
            /// memory-mapped file reads only its header. Corrupted payload bytes then give
            /// wrong answers (never undefined behaviour: every bit pattern is a valid
            /// block); use it for files whose integrity is checked elsewhere.
            ///
            /// # Errors
            /// As [`from_bytes`](Self::from_bytes), less the checksum check.
            pub fn from_bytes_unverified(bytes: &'a [u8]) -> Result<Self> {
                Self::open(bytes, None, false)
            }
        }

        impl<'a, S: PersistentHasher> $View<'a, S> {
            /// Borrows a filter with the caller's hasher (needed for keyed hashing, whose
            /// key is never stored).
            ///
            /// # Errors
            /// As [`from_bytes`](Self::from_bytes).
            pub fn from_bytes_with_hasher(bytes: &'a [u8], hasher: S) -> Result<Self> {
                Self::open(bytes, Some(hasher), true)
            }

            fn open(bytes: &'a [u8], hasher: Option<S>, verify: bool) -> Result<Self> {
                let (blocks, k, hasher) = open_view::<$L, S>(bytes, hasher, verify)?;
                Ok(Self { blocks, k, backend: Backend::detect(), hasher })
            }
        }

        impl<'a, S: BuildHasher> $View<'a, S> {
            /// Whether `key` may be in the filter (`false`: certainly not).
            #[inline]
            pub fn contains<T: Hash + ?Sized>(&self, key: &T) -> bool {
                self.contains_hash(self.hasher.hash_one(key))
            }

            /// Queries a key by its precomputed 64-bit hash.
            #[inline]
            pub fn contains_hash(&self, hash: u64) -> bool {
                d_contains_one::<$L>(self.backend, self.blocks, hash, self.k)
            }

            /// Queries every key of `keys` into `out[i]`, pipelined (hash ahead, prefetch
            /// blocks) like the filter's own `contains_batch`.
            ///
            /// # Errors
            /// [`Error::LengthMismatch`] (and `out` untouched) unless the lengths match.
            pub fn contains_batch<T: Hash>(&self, keys: &[T], out: &mut [bool]) -> Result<()> {
                check_batch_len(keys.len(), out.len())?;
                let src = Keys { keys, hasher: &self.hasher };
                d_contains_batch::<$L, _>(self.backend, self.blocks, self.k, &src, out);
                Ok(())
            }

            /// [`contains_batch`](Self::contains_batch) for precomputed hashes.
            ///
            /// # Errors
            /// [`Error::LengthMismatch`] unless the lengths match.
            pub fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
                check_batch_len(hashes.len(), out.len())?;
                d_contains_batch::<$L, _>(self.backend, self.blocks, self.k, &Hashes(hashes), out);
                Ok(())
            }
        }

        impl<'a, S> $View<'a, S> {
            /// Number of bits.
            pub fn num_bits(&self) -> u64 {
                self.blocks.len() as u64 * u64::from(<$L>::BLOCK_BITS)
            }

            /// Probes per key.
            pub fn num_hashes(&self) -> u32 {
                self.k
            }

            /// Number of blocks.
            pub fn num_blocks(&self) -> usize {
                self.blocks.len()
            }

            /// The borrowed blocks.
            pub fn blocks(&self) -> &'a [$Block] {
                self.blocks
            }

            /// The hasher.
            pub fn hasher(&self) -> &S {
                &self.hasher
            }

            /// The probe backend in use.
            pub fn backend(&self) -> Backend {
                self.backend
            }

            /// Chooses the probe backend (every backend gives identical answers).
            ///
            /// # Errors
            /// [`Error::BackendUnavailable`] if this CPU cannot run it.
            pub fn set_backend(&mut self, backend: Backend) -> Result<()> {
                crate::arch::check_backend(backend)?;
                self.backend = backend;
                Ok(())
            }

            /// Number of set bits (reads the whole payload).
            pub fn count_ones(&self) -> u64 {
                <$L>::blocks_count_ones(self.blocks)
            }

            /// The false-positive rate for the contents (reads the whole payload), as the
            /// filter's `expected_false_pos`.
            pub fn expected_false_pos(&self) -> f64 {
                <$L>::blocks_fp(self.blocks, self.k)
            }

            /// An owned, mutable copy of the viewed filter.
            pub fn to_filter(&self) -> $Plain<S>
            where
                S: Clone + BuildHasher,
            {
                $Plain::from_blocks(self.blocks.to_vec(), self.k, self.hasher.clone())
                    .expect("a view's blocks and probe count were validated when it was opened")
            }
        }

        impl<S: Clone> Clone for $View<'_, S> {
            fn clone(&self) -> Self {
                Self { blocks: self.blocks, k: self.k, backend: self.backend, hasher: self.hasher.clone() }
            }
        }

        impl<S: fmt::Debug> fmt::Debug for $View<'_, S> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($View))
                    .field("num_blocks", &self.blocks.len())
                    .field("num_hashes", &self.k)
                    .field("backend", &self.backend)
                    .field("hasher", &self.hasher)
                    .finish()
            }
        }
    };
}

views! {
    /// A read-only [`BlockedBloomFilter`] borrowed in place from its serialized bytes
    /// (see the [module docs](self)): same answers, no copy.
    ///
    /// ```
    /// use bloomforge_core::{BlockedBloomFilter, BlockedBloomFilterView};
    /// let mut f = BlockedBloomFilter::with_false_pos(0.01).expected_items(1000)?;
    /// f.insert(&"on disk");
    /// // A memory-mapped file is page-aligned; here a 64-byte-aligned copy stands in.
    /// let bytes = f.to_bytes();
    /// let mut buf = vec![0u8; bytes.len() + 64];
    /// let at = buf.as_ptr().align_offset(64);
    /// buf[at..at + bytes.len()].copy_from_slice(&bytes);
    /// let view = BlockedBloomFilterView::from_bytes(&buf[at..at + bytes.len()])?;
    /// assert!(view.contains(&"on disk"));
    /// assert_eq!(view.to_filter(), f);
    /// # Ok::<(), bloomforge_core::Error>(())
    /// ```
    view BlockedBloomFilterView of BlockedBloomFilter, layout Blocked512, block Block512
}

views! {
    /// A read-only [`SplitBlockBloomFilter`] borrowed in place from its serialized bytes
    /// (see the [module docs](self)); the buffer must be 32-byte aligned.
    view SplitBlockBloomFilterView of SplitBlockBloomFilter, layout Split256, block Block256
}
