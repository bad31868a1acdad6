//! Membership filters over the 3-wise layouts: [`BinaryFuseFilter`] and [`XorFilter`].

use std::hash::{BuildHasher, Hash};
use std::marker::PhantomData;

use bloomforge_core::format::{self, FilterKind};
use bloomforge_core::hash::DefaultHasher;

use crate::peel::{self, Layout, LAYOUT_BYTES};
use crate::RetrievalError;

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
}

/// A fingerprint type of a membership filter: `u8` (FP about 2^-8) or `u16` (2^-16).
pub trait Fingerprint: sealed::Sealed + Copy + Default + Eq + Send + Sync + 'static {
    /// Width in bits.
    const BITS: u32;
    /// The low `BITS` bits of `x`.
    fn from_u64(x: u64) -> Self;
    /// Widened to `u64`.
    fn to_u64(self) -> u64;
    /// Cell `i` of a little-endian array of `Self` in `bytes` (a zero-copy view's read;
    /// panics past the end, which validated views never reach).
    fn read_le(bytes: &[u8], i: usize) -> u64;
}

impl Fingerprint for u8 {
    const BITS: u32 = 8;
    #[inline(always)]
    fn read_le(bytes: &[u8], i: usize) -> u64 {
        u64::from(bytes[i])
    }
    #[inline(always)]
    fn from_u64(x: u64) -> Self {
        x as u8
    }
    #[inline(always)]
    fn to_u64(self) -> u64 {
        u64::from(self)
    }
}

impl Fingerprint for u16 {
    const BITS: u32 = 16;
    #[inline(always)]
    fn read_le(bytes: &[u8], i: usize) -> u64 {
        u64::from(u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]))
    }
    #[inline(always)]
    fn from_u64(x: u64) -> Self {
        x as u16
    }
    #[inline(always)]
    fn to_u64(self) -> u64 {
        u64::from(self)
    }
}

impl<F: Fingerprint> peel::CellStore for Vec<F> {
    #[inline(always)]
    fn get(&self, c: usize) -> u64 {
        self[c].to_u64()
    }
    #[inline(always)]
    fn set(&mut self, c: usize, v: u64) {
        self[c] = F::from_u64(v);
    }
}

/// The static membership filter shared by [`BinaryFuseFilter`] and [`XorFilter`].
#[derive(Clone, Debug)]
struct Xor3<F> {
    // Kept built (not as a seed) so `contains` does not redo foldhash's seed mixing per key.
    hasher: DefaultHasher,
    layout: Layout,
    items: u64,
    cells: Vec<F>,
}

impl<F: Fingerprint> Xor3<F> {
    fn build<K: Hash + Sync + ?Sized>(
        keys: &[&K],
        seed: u64,
        layout_for: fn(usize) -> Layout,
    ) -> Result<Self, RetrievalError> {
        if keys.len() >= u32::MAX as usize {
            return Err(RetrievalError::InvalidParameter {
                name: "keys",
                value: keys.len() as u64,
                expected: "fewer than 2^32 keys",
            });
        }
        for attempt in 0..peel::MAX_ATTEMPTS {
            let s = peel::attempt_seed(seed, attempt);
            let hasher = DefaultHasher::with_seed(s);
            // Hash order, repeats kept: peeling fails on a repeat, then the hashes
            // (rehashed: peeling writes over them) are deduplicated and peeled again with
            // the same seed.
            let (hashes, bits) = peel::hash_partitioned(keys, &hasher)?;
            let n = hashes.len();
            let mut items = n;
            let mut layout = layout_for(n);
            let mut peeled = peel::peel(&layout, hashes, vec![(); n], bits);
            if peeled.is_none() {
                let hashes = peel::dedup_hashes(peel::hash_partitioned(keys, &hasher)?.0);
                if hashes.len() < n {
                    items = hashes.len();
                    layout = layout_for(items);
                    peeled = peel::peel(&layout, hashes, vec![(); items], 64);
                }
            }
            let Some(peeled) = peeled else {
                continue;
            };
            let mut cells = peel::alloc(layout.cells(), F::default())?;
            peel::assign(
                &layout,
                &peeled,
                |h, ()| peel::fingerprint_hash(h),
                &mut cells,
            );
            return Ok(Xor3 {
                hasher,
                layout,
                items: items as u64,
                cells,
            });
        }
        Err(RetrievalError::ConstructionFailed {
            attempts: peel::MAX_ATTEMPTS,
        })
    }

    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        contains_in::<F>(&self.layout, hash, |i| self.cells[i].to_u64())
    }

    fn payload_len(&self) -> u64 {
        (LAYOUT_BYTES + self.cells.len() * (F::BITS as usize / 8)) as u64
    }

    fn write_to<W: std::io::Write>(&self, w: W, kind: FilterKind) -> Result<(), RetrievalError> {
        let hasher = self.hasher;
        let mut head = Vec::with_capacity(LAYOUT_BYTES);
        self.layout.write(&mut head);
        format::encode_to(
            w,
            kind,
            &hasher,
            3,
            self.cells.len() as u64 * u64::from(F::BITS),
            self.items,
            self.payload_len(),
            |sink| {
                sink(&head);
                format::stream_le(&self.cells, sink, |f, buf| {
                    let x = f.to_u64().to_le_bytes();
                    buf.extend_from_slice(&x[..F::BITS as usize / 8]);
                });
            },
        )?;
        Ok(())
    }

    fn from_bytes(bytes: &[u8], kind: FilterKind) -> Result<Self, RetrievalError> {
        let (hasher, layout, items, body) = parse::<F>(bytes, kind)?;
        let width = F::BITS as usize / 8;
        let cells = body
            .chunks_exact(width)
            .map(|c| {
                let mut x = [0u8; 8];
                x[..width].copy_from_slice(c);
                F::from_u64(u64::from_le_bytes(x))
            })
            .collect();
        Ok(Xor3 {
            hasher,
            layout,
            items,
            cells,
        })
    }
}

/// Whether the xor of `hash`'s three cells (read by `cell`) is its fingerprint.
#[inline(always)]
fn contains_in<F: Fingerprint>(layout: &Layout, hash: u64, cell: impl Fn(usize) -> u64) -> bool {
    let [a, b, c] = layout.positions(hash);
    let x = cell(a) ^ cell(b) ^ cell(c);
    F::from_u64(peel::fingerprint_hash(hash)) == F::from_u64(x)
}

/// Validates serialized bytes of `kind` with `F`-wide cells: the hasher, layout, item
/// count and the cells' little-endian bytes (exactly `layout.cells()` of them).
fn parse<F: Fingerprint>(
    bytes: &[u8],
    kind: FilterKind,
) -> Result<(DefaultHasher, Layout, u64, &[u8]), RetrievalError> {
    let corrupt = |reason| RetrievalError::Core(bloomforge_core::Error::Corrupt { reason });
    let (header, payload, hasher) = format::decode::<DefaultHasher>(bytes, kind, None)?;
    let layout = Layout::read(payload)?;
    let width = F::BITS as usize / 8;
    let body = &payload[LAYOUT_BYTES..];
    if header.num_hashes != 3
        || body.len() % width != 0
        || body.len() / width != layout.cells()
        || header.num_bits != layout.cells() as u64 * u64::from(F::BITS)
    {
        return Err(corrupt("cell count or width does not match the layout"));
    }
    Ok((hasher, layout, header.items, body))
}

macro_rules! membership_filter {
    ($name:ident, $kind:expr, $layout:expr, $doc:literal, $overhead:literal) => {
        #[doc = $doc]
        ///
        /// Built once from a key set ([`build`](Self::build)); no insert afterwards. Keys
        /// of the set always answer `true`; another key answers `true` with probability
        #[doc = concat!("2^-bits of `F` (`u8`: 1/256, `u16`: 1/65536), at about ", $overhead)]
        /// bits per key times the fingerprint width. Keys are hashed with core's
        /// [`DefaultHasher`], seeded; a construction that cannot peel retries with derived
        /// seeds (at most 100) and then returns [`RetrievalError::ConstructionFailed`].
        /// Construction follows Graf & Lemire: hashes grouped by their top bits so that
        /// consecutive keys' cells lie close together, peeled right behind the counting
        /// pass; from 2^16 keys hashing runs on rayon's pool, and from 2^23 keys the table
        /// is cut into regions counted and peeled in parallel. The result depends only on
        /// the keys and the seed, not on the number of threads.
        #[derive(Clone, Debug)]
        pub struct $name<F: Fingerprint = u8> {
            inner: Xor3<F>,
            _f: PhantomData<F>,
        }

        impl<F: Fingerprint> $name<F> {
            /// Builds the filter of `keys` (repeats allowed) with hasher seed `seed`.
            ///
            /// # Errors
            /// [`RetrievalError::ConstructionFailed`] if no seed peels (practically only
            /// for 2^32 keys or more, refused as [`RetrievalError::InvalidParameter`]);
            /// [`RetrievalError::Core`] if the table cannot be allocated.
            pub fn build<K: Hash + Sync + ?Sized>(
                keys: &[&K],
                seed: u64,
            ) -> Result<Self, RetrievalError> {
                Ok(Self {
                    inner: Xor3::build(keys, seed, $layout)?,
                    _f: PhantomData,
                })
            }

            /// Builds from owned keys (see [`build`](Self::build)).
            ///
            /// # Errors
            /// As [`build`](Self::build).
            pub fn build_from<K: Hash + Sync>(
                keys: &[K],
                seed: u64,
            ) -> Result<Self, RetrievalError> {
                let refs: Vec<&K> = keys.iter().collect();
                Self::build(&refs, seed)
            }

            /// Whether `key` may be in the set (always `true` for keys of the set).
            #[inline]
            pub fn contains<K: Hash + ?Sized>(&self, key: &K) -> bool {
                self.contains_hash(self.inner.hasher.hash_one(key))
            }

            /// [`contains`](Self::contains) for a hash from [`hasher`](Self::hasher).
            #[inline]
            pub fn contains_hash(&self, hash: u64) -> bool {
                self.inner.contains_hash(hash)
            }

            /// The hasher keys are hashed with (its seed is the one that peeled).
            pub fn hasher(&self) -> DefaultHasher {
                self.inner.hasher
            }

            /// Distinct key hashes stored.
            pub fn len(&self) -> usize {
                self.inner.items as usize
            }

            /// Whether no key is stored.
            pub fn is_empty(&self) -> bool {
                self.inner.items == 0
            }

            /// Number of cells of the table.
            pub fn cells(&self) -> usize {
                self.inner.cells.len()
            }

            /// Bytes the table occupies.
            pub fn memory_bytes(&self) -> usize {
                self.inner.cells.len() * (F::BITS as usize / 8)
            }

            /// The false-positive probability for a key outside the set: 2^-bits.
            pub fn expected_false_pos(&self) -> f64 {
                (-f64::from(F::BITS)).exp2()
            }

            /// Writes the filter in core's format.
            ///
            /// # Errors
            /// [`RetrievalError::Core`] with [`bloomforge_core::Error::Io`] if writing fails.
            pub fn write_to<W: std::io::Write>(&self, w: W) -> Result<(), RetrievalError> {
                self.inner.write_to(w, $kind)
            }

            /// The filter in core's format.
            pub fn to_bytes(&self) -> Vec<u8> {
                let mut out = Vec::new();
                self.write_to(&mut out)
                    .expect("writing to a Vec cannot fail");
                out
            }

            /// Reads a filter written by [`to_bytes`](Self::to_bytes) with the same `F`.
            ///
            /// # Errors
            /// [`RetrievalError::Core`] with [`bloomforge_core::Error::Corrupt`] for
            /// corrupt, truncated or foreign bytes (another kind or fingerprint width).
            pub fn from_bytes(bytes: &[u8]) -> Result<Self, RetrievalError> {
                Ok(Self {
                    inner: Xor3::from_bytes(bytes, $kind)?,
                    _f: PhantomData,
                })
            }
        }
    };
}

macro_rules! membership_view {
    ($view:ident, $name:ident, $kind:expr) => {
        #[doc = concat!("A zero-copy, read-only [`", stringify!($name), "`] over its serialized bytes.")]
        ///
        /// The payload is the filter's cells in little-endian order, read in place: opening
        /// costs one checksum pass and no allocation (a memory-mapped file is read only where
        /// queries touch it), and any alignment is accepted. Answers exactly as the owned
        /// filter the bytes came from.
        ///
        /// ```
        #[doc = concat!("use bloomforge_retrieval::{", stringify!($name), ", ", stringify!($view), "};")]
        /// let keys: Vec<u64> = (0..1000).collect();
        #[doc = concat!("let owned = ", stringify!($name), "::<u16>::build_from(&keys, 7)?;")]
        /// let bytes = owned.to_bytes();
        #[doc = concat!("let view = ", stringify!($view), "::<u16>::from_bytes(&bytes)?;")]
        /// assert!(keys.iter().all(|k| view.contains(k)));
        /// assert_eq!(view.contains(&5000u64), owned.contains(&5000u64));
        /// # Ok::<(), bloomforge_retrieval::RetrievalError>(())
        /// ```
        #[derive(Clone, Copy, Debug)]
        pub struct $view<'a, F: Fingerprint = u8> {
            hasher: DefaultHasher,
            layout: Layout,
            items: u64,
            cells: &'a [u8],
            _f: PhantomData<F>,
        }

        impl<'a, F: Fingerprint> $view<'a, F> {
            #[doc = concat!("Borrows bytes written by [`", stringify!($name), "::to_bytes`] with the same `F`, checking")]
            /// every header field, the layout and the payload checksum.
            ///
            /// # Errors
            /// [`RetrievalError::Core`] with [`bloomforge_core::Error::Corrupt`] for
            /// corrupt, truncated or foreign bytes (another kind or fingerprint width).
            pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, RetrievalError> {
                let (hasher, layout, items, cells) = parse::<F>(bytes, $kind)?;
                Ok(Self {
                    hasher,
                    layout,
                    items,
                    cells,
                    _f: PhantomData,
                })
            }

            /// Whether `key` may be in the set (always `true` for keys of the set).
            #[inline]
            pub fn contains<K: Hash + ?Sized>(&self, key: &K) -> bool {
                self.contains_hash(self.hasher.hash_one(key))
            }

            /// [`contains`](Self::contains) for a hash from [`hasher`](Self::hasher).
            #[inline]
            pub fn contains_hash(&self, hash: u64) -> bool {
                contains_in::<F>(&self.layout, hash, |i| F::read_le(self.cells, i))
            }

            /// The hasher keys are hashed with.
            pub fn hasher(&self) -> DefaultHasher {
                self.hasher
            }

            /// Distinct key hashes stored.
            pub fn len(&self) -> usize {
                self.items as usize
            }

            /// Whether no key is stored.
            pub fn is_empty(&self) -> bool {
                self.items == 0
            }

            /// Number of cells of the table.
            pub fn cells(&self) -> usize {
                self.layout.cells()
            }

            /// The false-positive probability for a key outside the set: 2^-bits.
            pub fn expected_false_pos(&self) -> f64 {
                (-f64::from(F::BITS)).exp2()
            }

            /// An owned copy of the filter.
            pub fn to_filter(&self) -> $name<F> {
                let width = F::BITS as usize / 8;
                $name {
                    inner: Xor3 {
                        hasher: self.hasher,
                        layout: self.layout,
                        items: self.items,
                        cells: (0..self.cells.len() / width)
                            .map(|i| F::from_u64(F::read_le(self.cells, i)))
                            .collect(),
                    },
                    _f: PhantomData,
                }
            }
        }
    };
}

membership_view!(
    BinaryFuseFilterView,
    BinaryFuseFilter,
    FilterKind::BinaryFuse
);
membership_view!(XorFilterView, XorFilter, FilterKind::Xor);

membership_filter!(
    BinaryFuseFilter,
    FilterKind::BinaryFuse,
    Layout::fuse,
    "A binary fuse filter (Graf & Lemire 2022, arity 3): three cells in consecutive segments.",
    "1.13 (above 1M keys; more for small sets)"
);

membership_filter!(
    XorFilter,
    FilterKind::Xor,
    Layout::xor,
    "A xor filter (Graf & Lemire 2020): three cells in three blocks.",
    "1.23"
);

#[cfg(test)]
mod tests {
    use super::*;

    /// A table too small to peel fails every seed and returns the typed error (no hang).
    #[test]
    fn unpeelable_tables_give_construction_failed() {
        let keys: Vec<u64> = (0..1000).collect();
        let refs: Vec<&u64> = keys.iter().collect();
        let tiny = |n: usize| Layout::Xor {
            block_length: n as u64 / 4 + 1,
        };
        let err = Xor3::<u8>::build(&refs, 0, tiny).unwrap_err();
        assert_eq!(err, RetrievalError::ConstructionFailed { attempts: 100 });
    }
}
