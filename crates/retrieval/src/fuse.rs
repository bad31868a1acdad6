//! Membership filters over the 3-wise layouts: [`BinaryFuseFilter`] and [`XorFilter`].

use std::hash::{BuildHasher, Hash};
use std::marker::PhantomData;

use bloomforge_core::format::{self, FilterKind, PersistentHasher};
use bloomforge_core::hash::DefaultHasher;

use crate::peel::{self, Derivation, Layout, DERIVATION, LAYOUT_BYTES};
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
struct Xor3<F, S> {
    // The hasher given (kept built, so `contains` does not redo a seed's mixing per key).
    hasher: S,
    // The retry whose remix of the hasher's hashes peeled (`peel::retry_hash`).
    attempt: u32,
    layout: Layout,
    // How the fingerprints derive from the hashes (`DERIVATION` for new filters).
    derivation: Derivation,
    items: u64,
    cells: Vec<F>,
}

impl<F: Fingerprint, S: BuildHasher> Xor3<F, S> {
    fn build<K: Hash + Sync>(
        keys: &[K],
        hasher: S,
        layout_for: fn(usize) -> Layout,
    ) -> Result<Self, RetrievalError>
    where
        S: Sync,
    {
        if keys.len() >= u32::MAX as usize {
            return Err(RetrievalError::InvalidParameter {
                name: "keys",
                value: keys.len() as u64,
                expected: "fewer than 2^32 keys",
            });
        }
        for attempt in 0..peel::MAX_ATTEMPTS {
            let hash = |k: &K| peel::retry_hash(hasher.hash_one(k), attempt);
            // Hash order, repeats kept: peeling fails on a repeat, then the hashes
            // (rehashed: peeling writes over them) are deduplicated and peeled again with
            // the same attempt.
            let (hashes, bits) = peel::hash_partitioned(keys, hash)?;
            let n = hashes.len();
            let mut items = n;
            let mut layout = layout_for(n);
            let mut peeled = peel::peel(&layout, hashes, vec![(); n], bits);
            if peeled.is_none() {
                let hashes = peel::dedup_hashes(peel::hash_partitioned(keys, hash)?.0);
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
                |h, ()| DERIVATION.fingerprint(h),
                &mut cells,
            );
            return Ok(Xor3 {
                hasher,
                attempt,
                layout,
                derivation: DERIVATION,
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
        let hash = peel::retry_hash(hash, self.attempt);
        contains_in::<F>(&self.layout, self.derivation, hash, |i| {
            self.cells[i].to_u64()
        })
    }
}

impl<F: Fingerprint, S: PersistentHasher> Xor3<F, S> {
    fn payload_len(&self) -> u64 {
        (LAYOUT_BYTES + self.cells.len() * (F::BITS as usize / 8)) as u64
    }

    fn write_to<W: std::io::Write>(&self, w: W, kind: FilterKind) -> Result<(), RetrievalError> {
        let mut head = Vec::with_capacity(LAYOUT_BYTES);
        self.layout
            .write_coded(self.attempt, self.derivation as u32, &mut head);
        format::encode_to(
            w,
            kind,
            &self.hasher,
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

    fn decode(bytes: &[u8], kind: FilterKind, hasher: Option<S>) -> Result<Self, RetrievalError> {
        let p = parse::<F, S>(bytes, kind, hasher)?;
        let width = F::BITS as usize / 8;
        let cells = p
            .cells
            .chunks_exact(width)
            .map(|c| {
                let mut x = [0u8; 8];
                x[..width].copy_from_slice(c);
                F::from_u64(u64::from_le_bytes(x))
            })
            .collect();
        Ok(Xor3 {
            hasher: p.hasher,
            attempt: p.attempt,
            layout: p.layout,
            derivation: p.derivation,
            items: p.items,
            cells,
        })
    }
}

/// Whether the xor of `hash`'s three cells (read by `cell`) is its fingerprint.
#[inline(always)]
fn contains_in<F: Fingerprint>(
    layout: &Layout,
    derivation: Derivation,
    hash: u64,
    cell: impl Fn(usize) -> u64,
) -> bool {
    let [a, b, c] = layout.positions(hash);
    let x = cell(a) ^ cell(b) ^ cell(c);
    F::from_u64(derivation.fingerprint(hash)) == F::from_u64(x)
}

/// The batch lookup of the owned filters and views: `cell` reads a cell, `addr` gives its
/// address for the prefetch.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn contains_batch_in<F: Fingerprint, K>(
    layout: &Layout,
    attempt: u32,
    derivation: Derivation,
    keys: &[K],
    out: &mut [bool],
    hash: impl Fn(&K) -> u64,
    cell: impl Fn(usize) -> u64,
    addr: impl Fn(usize) -> *const u8,
) -> Result<(), RetrievalError> {
    peel::check_batch(keys.len(), out.len())?;
    peel::lookup_batch(
        keys,
        out,
        |k| peel::retry_hash(hash(k), attempt),
        |h| peel::fetch_cells(layout, h, &addr),
        |h| contains_in::<F>(layout, derivation, h, &cell),
        peel::lookup_ahead(layout.cells() * size_of::<F>()),
    );
    Ok(())
}

/// The validated fields of a serialized membership filter; the cells' bytes.
struct Parsed<'a, S> {
    hasher: S,
    derivation: Derivation,
    attempt: u32,
    layout: Layout,
    items: u64,
    cells: &'a [u8],
}

/// Validates serialized bytes of `kind` with `F`-wide cells: the hasher (`hasher` if
/// given, which must match the stored seed or key check; else the stored seed's), the
/// layout and retry index, the item count and the cells' little-endian bytes (exactly
/// `layout.cells()` of them).
fn parse<F: Fingerprint, S: PersistentHasher>(
    bytes: &[u8],
    kind: FilterKind,
    hasher: Option<S>,
) -> Result<Parsed<'_, S>, RetrievalError> {
    let corrupt = |reason| RetrievalError::Core(bloomforge_core::Error::Corrupt { reason });
    let (header, payload, hasher) = format::decode::<S>(bytes, kind, hasher)?;
    // The fingerprint derivation in bits 8.. of the layout's tag word (0 before it was
    // recorded).
    let (layout, attempt, code) = Layout::read_coded(payload)?;
    let derivation =
        Derivation::from_code(code).ok_or(corrupt("unknown fingerprint derivation"))?;
    let width = F::BITS as usize / 8;
    let body = &payload[LAYOUT_BYTES..];
    if header.num_hashes != 3
        || body.len() % width != 0
        || body.len() / width != layout.cells()
        || header.num_bits != layout.cells() as u64 * u64::from(F::BITS)
    {
        return Err(corrupt("cell count or width does not match the layout"));
    }
    Ok(Parsed {
        hasher,
        derivation,
        attempt,
        layout,
        items: header.items,
        cells: body,
    })
}

macro_rules! membership_filter {
    ($name:ident, $builder:ident, $view:ident, $kind:expr, $layout:expr, $doc:literal, $overhead:literal) => {
        #[doc = $doc]
        ///
        /// Static: built once from the whole key set, no insert afterwards, so it has no
        /// `new(expected_items, false_pos)` (see `docs/conventions.md`, "Static
        /// filters"): [`build`](Self::build)`(&keys, seed)`, the
        /// [builder](Self::builder) (`.seed(s)` or `.hasher(h)`, `.threads(t)`, then
        /// `.build(&keys)`), or `collect()`. Keys of the set always answer `true`;
        /// another key answers `true` with probability
        #[doc = concat!("2^-bits of `F` (`u8`: 1/256, `u16`: 1/65536), at about ", $overhead)]
        /// bits per key times the fingerprint width.
        ///
        /// Keys are hashed with `S` (core's [`DefaultHasher`], seeded, by default; a
        /// [`KeyedHasher`](bloomforge_core::KeyedHasher) for keys from untrusted parties).
        /// A construction that cannot peel retries up to 100 times with the hashes
        /// remixed by the retry's index (stored with the filter; the hasher stays the one
        /// given), then returns [`RetrievalError::ConstructionFailed`]. Construction
        /// follows Graf & Lemire: hashes grouped by their top bits so that consecutive
        /// keys' cells lie close together, peeled right behind the counting pass; from
        /// 2^16 keys hashing runs on rayon's pool (or the builder's `threads(t)`), and
        /// from 2^23 keys the table is cut into regions counted and peeled in parallel.
        /// The result depends only on the keys and the hasher, not on the number of
        /// threads.
        ///
        /// ```
        #[doc = concat!("use bloomforge_retrieval::", stringify!($name), ";")]
        /// use bloomforge_core::KeyedHasher;
        /// let keys: Vec<u64> = (0..1000).collect();
        #[doc = concat!("let a = ", stringify!($name), "::<u8>::build_from(&keys, 7)?;")]
        #[doc = concat!("let b = ", stringify!($name), "::<u8>::builder().seed(7).threads(2).build(&keys)?;")]
        /// assert_eq!(a.to_bytes(), b.to_bytes());
        /// let key = KeyedHasher::with_key([1, 2, 3, 4]);
        #[doc = concat!("let keyed = ", stringify!($name), "::<u16>::builder().hasher(key.clone()).build(&keys)?;")]
        /// assert!(keys.iter().all(|k| keyed.contains(k)));
        #[doc = concat!("let back = ", stringify!($name), "::<u16, KeyedHasher>::from_bytes_with_hasher(&keyed.to_bytes(), key)?;")]
        /// assert!(back.contains(&999u64));
        #[doc = concat!("let c: ", stringify!($name), " = keys.iter().collect();")]
        /// assert!(c.contains(&5u64));
        /// # Ok::<(), bloomforge_retrieval::RetrievalError>(())
        /// ```
        #[derive(Clone, Debug)]
        pub struct $name<F: Fingerprint = u8, S = DefaultHasher> {
            inner: Xor3<F, S>,
        }

        impl<F: Fingerprint> $name<F> {
            /// Builds the filter of `keys` (repeats allowed) with the default hasher seeded
            /// `seed`: the same as `Self::builder().seed(seed).build(keys)`.
            ///
            /// # Errors
            /// [`RetrievalError::ConstructionFailed`] if no retry peels (practically only
            /// for 2^32 keys or more, refused as [`RetrievalError::InvalidParameter`]);
            /// [`RetrievalError::Core`] if the table cannot be allocated.
            pub fn build<K: Hash + Sync + ?Sized>(
                keys: &[&K],
                seed: u64,
            ) -> Result<Self, RetrievalError> {
                Self::builder().seed(seed).build(keys)
            }

            /// Builds from owned keys (see [`build`](Self::build)).
            ///
            /// # Errors
            /// As [`build`](Self::build).
            pub fn build_from<K: Hash + Sync>(
                keys: &[K],
                seed: u64,
            ) -> Result<Self, RetrievalError> {
                Self::builder().seed(seed).build(keys)
            }

            /// The builder: `.seed(s)` or `.hasher(h)`, `.threads(t)`, then
            /// `.build(&keys)`. Defaults: [`DefaultHasher`] with seed 0, rayon's global
            /// pool.
            pub fn builder() -> $builder<F> {
                $builder {
                    hasher: DefaultHasher::with_seed(0),
                    threads: None,
                    _f: PhantomData,
                }
            }

            /// Reads a filter written by [`to_bytes`](Self::to_bytes) with the same `F` and
            /// an unkeyed hasher (its seed is restored).
            ///
            /// # Errors
            /// [`RetrievalError::Core`] with [`bloomforge_core::Error::Corrupt`] for
            /// corrupt, truncated or foreign bytes (another kind or fingerprint width),
            /// [`bloomforge_core::Error::HasherMismatch`] for a keyed filter (read it with
            /// [`from_bytes_with_hasher`](Self::from_bytes_with_hasher)).
            pub fn from_bytes(bytes: &[u8]) -> Result<Self, RetrievalError> {
                Ok(Self {
                    inner: Xor3::decode(bytes, $kind, None)?,
                })
            }

            /// Reads one serialized filter from `reader` (see [`from_bytes`](Self::from_bytes)).
            ///
            /// # Errors
            /// As [`from_bytes`](Self::from_bytes), or [`bloomforge_core::Error::Io`].
            pub fn read_from<R: std::io::Read>(reader: R) -> Result<Self, RetrievalError> {
                Self::from_bytes(&format::read_serialized(reader)?)
            }
        }

        impl<F: Fingerprint, S: BuildHasher> $name<F, S> {
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

            /// [`contains`](Self::contains) of every key into `out`, pipelined: keys
            /// hashed a block at a time, the cells of keys a few places ahead prefetched,
            /// so their cache misses overlap (the single lookups wait on their own).
            ///
            /// # Errors
            /// [`bloomforge_core::Error::LengthMismatch`] (as [`RetrievalError::Core`])
            /// unless `out` is as long as `keys`; `out` is then untouched.
            pub fn contains_batch<K: Hash>(&self, keys: &[K], out: &mut [bool]) -> Result<(), RetrievalError> {
                self.batch(keys, out, |k| self.inner.hasher.hash_one(k))
            }

            /// [`contains_batch`](Self::contains_batch) for hashes from [`hasher`](Self::hasher).
            ///
            /// # Errors
            /// As [`contains_batch`](Self::contains_batch).
            pub fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) -> Result<(), RetrievalError> {
                self.batch(hashes, out, |&h| h)
            }

            #[inline(always)]
            fn batch<K>(&self, keys: &[K], out: &mut [bool], hash: impl Fn(&K) -> u64) -> Result<(), RetrievalError> {
                let t = &self.inner;
                contains_batch_in::<F, K>(&t.layout, t.attempt, t.derivation, keys, out, hash, |c| t.cells[c].to_u64(), |c| t.cells.as_ptr().wrapping_add(c).cast())
            }

            /// The hasher keys are hashed with (the one the filter was built with).
            pub fn hasher(&self) -> &S {
                &self.inner.hasher
            }

            /// Distinct key hashes stored.
            pub fn len(&self) -> u64 {
                self.inner.items
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
            pub fn memory_bytes(&self) -> u64 {
                (self.inner.cells.len() * (F::BITS as usize / 8)) as u64
            }

            /// The false-positive probability for a key outside the set: 2^-bits.
            pub fn expected_false_pos(&self) -> f64 {
                (-f64::from(F::BITS)).exp2()
            }
        }

        impl<F: Fingerprint, S: PersistentHasher> $name<F, S> {
            /// Writes the filter in core's format (the hasher's seed, or for a keyed
            /// hasher only a check of its key, in the header).
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

            /// Reads a filter with the caller's hasher (needed for keyed hashing, whose
            /// key is never stored).
            ///
            /// # Errors
            /// As [`from_bytes`](Self::from_bytes);
            /// [`bloomforge_core::Error::HasherMismatch`] when `hasher` is not the one the
            /// filter was written with (another algorithm, seed or key).
            pub fn from_bytes_with_hasher(bytes: &[u8], hasher: S) -> Result<Self, RetrievalError> {
                Ok(Self {
                    inner: Xor3::decode(bytes, $kind, Some(hasher))?,
                })
            }
        }

        #[doc = concat!("Builder of [`", stringify!($name), "`]: the hasher (`.seed(s)` for the default one, or")]
        /// `.hasher(h)`) and the thread count; the keys go to [`build`](Self::build).
        /// Sizes and the false-positive rate follow from the key count and `F`.
        #[must_use = "a builder does nothing until finished with .build(&keys)"]
        #[derive(Clone, Debug)]
        pub struct $builder<F: Fingerprint = u8, S = DefaultHasher> {
            hasher: S,
            threads: Option<usize>,
            _f: PhantomData<fn() -> F>,
        }

        impl<F: Fingerprint> $builder<F> {
            /// Seeds the default hasher (default 0).
            pub fn seed(self, seed: u64) -> Self {
                Self {
                    hasher: DefaultHasher::with_seed(seed),
                    ..self
                }
            }
        }

        impl<F: Fingerprint, S> $builder<F, S> {
            /// Uses `hasher` instead of the default (e.g.
            /// [`KeyedHasher`](bloomforge_core::KeyedHasher) for untrusted keys).
            pub fn hasher<S2: BuildHasher>(self, hasher: S2) -> $builder<F, S2> {
                $builder {
                    hasher,
                    threads: self.threads,
                    _f: PhantomData,
                }
            }

            /// Builds on a pool of `threads` threads instead of rayon's global pool (the
            /// result is the same; at least 1, checked in [`build`](Self::build)).
            pub fn threads(self, threads: usize) -> Self {
                Self {
                    threads: Some(threads),
                    ..self
                }
            }

            /// Builds the filter of `keys` (repeats allowed).
            ///
            /// # Errors
            /// [`RetrievalError::InvalidParameter`] for `threads(0)` or 2^32 keys or
            /// more; [`RetrievalError::ThreadPool`] if the pool cannot be started;
            /// [`RetrievalError::ConstructionFailed`] if no retry peels;
            /// [`RetrievalError::Core`] if the table cannot be allocated.
            pub fn build<K: Hash + Sync>(self, keys: &[K]) -> Result<$name<F, S>, RetrievalError>
            where
                S: BuildHasher + Send + Sync,
            {
                let hasher = self.hasher;
                let inner = peel::on_threads(self.threads, move || {
                    Xor3::build(keys, hasher, $layout)
                })?;
                Ok($name { inner })
            }
        }

        #[doc = concat!("Collects keys and builds `", stringify!($name), "::builder().build(&keys)` (default hasher,")]
        /// seed 0): the keys are gathered first (a static filter needs them all).
        ///
        /// # Panics
        /// If construction fails: the table cannot be allocated, or 2^32 keys or more.
        /// Use the builder to get these as errors.
        impl<K: Hash + Sync, F: Fingerprint> FromIterator<K> for $name<F> {
            fn from_iter<I: IntoIterator<Item = K>>(iter: I) -> Self {
                let keys: Vec<K> = iter.into_iter().collect();
                Self::builder()
                    .build(&keys)
                    .unwrap_or_else(|e| panic!("cannot build from the collected keys: {e}"))
            }
        }

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
        pub struct $view<'a, F: Fingerprint = u8, S = DefaultHasher> {
            hasher: S,
            attempt: u32,
            layout: Layout,
            derivation: Derivation,
            items: u64,
            cells: &'a [u8],
            _f: PhantomData<F>,
        }

        impl<'a, F: Fingerprint> $view<'a, F> {
            #[doc = concat!("Borrows bytes written by [`", stringify!($name), "::to_bytes`] with the same `F` and an")]
            /// unkeyed hasher, checking every header field, the layout and the payload
            /// checksum.
            ///
            /// # Errors
            /// [`RetrievalError::Core`] with [`bloomforge_core::Error::Corrupt`] for
            /// corrupt, truncated or foreign bytes (another kind or fingerprint width),
            /// [`bloomforge_core::Error::HasherMismatch`] for a keyed filter.
            pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, RetrievalError> {
                Self::open(bytes, None)
            }
        }

        impl<'a, F: Fingerprint, S: PersistentHasher> $view<'a, F, S> {
            /// Borrows serialized bytes with the caller's hasher (a keyed filter's key).
            ///
            /// # Errors
            #[doc = concat!("As [`", stringify!($name), "::from_bytes_with_hasher`].")]
            pub fn from_bytes_with_hasher(bytes: &'a [u8], hasher: S) -> Result<Self, RetrievalError> {
                Self::open(bytes, Some(hasher))
            }

            fn open(bytes: &'a [u8], hasher: Option<S>) -> Result<Self, RetrievalError> {
                let p = parse::<F, S>(bytes, $kind, hasher)?;
                Ok(Self {
                    hasher: p.hasher,
                    attempt: p.attempt,
                    layout: p.layout,
                    derivation: p.derivation,
                    items: p.items,
                    cells: p.cells,
                    _f: PhantomData,
                })
            }
        }

        impl<'a, F: Fingerprint, S: BuildHasher> $view<'a, F, S> {
            /// Whether `key` may be in the set (always `true` for keys of the set).
            #[inline]
            pub fn contains<K: Hash + ?Sized>(&self, key: &K) -> bool {
                self.contains_hash(self.hasher.hash_one(key))
            }

            /// [`contains`](Self::contains) for a hash from [`hasher`](Self::hasher).
            #[inline]
            pub fn contains_hash(&self, hash: u64) -> bool {
                let hash = peel::retry_hash(hash, self.attempt);
                contains_in::<F>(&self.layout, self.derivation, hash, |i| F::read_le(self.cells, i))
            }

            #[doc = concat!("[`contains`](Self::contains) of every key into `out`, pipelined as [`", stringify!($name), "::contains_batch`].")]
            ///
            /// # Errors
            /// [`bloomforge_core::Error::LengthMismatch`] (as [`RetrievalError::Core`])
            /// unless `out` is as long as `keys`; `out` is then untouched.
            pub fn contains_batch<K: Hash>(&self, keys: &[K], out: &mut [bool]) -> Result<(), RetrievalError> {
                self.batch(keys, out, |k| self.hasher.hash_one(k))
            }

            /// [`contains_batch`](Self::contains_batch) for hashes from [`hasher`](Self::hasher).
            ///
            /// # Errors
            /// As [`contains_batch`](Self::contains_batch).
            pub fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) -> Result<(), RetrievalError> {
                self.batch(hashes, out, |&h| h)
            }

            #[inline(always)]
            fn batch<K>(&self, keys: &[K], out: &mut [bool], hash: impl Fn(&K) -> u64) -> Result<(), RetrievalError> {
                let width = (F::BITS / 8) as usize;
                contains_batch_in::<F, K>(&self.layout, self.attempt, self.derivation, keys, out, hash, |c| F::read_le(self.cells, c), |c| self.cells.as_ptr().wrapping_add(c * width))
            }

            /// The hasher keys are hashed with.
            pub fn hasher(&self) -> &S {
                &self.hasher
            }

            /// Distinct key hashes stored.
            pub fn len(&self) -> u64 {
                self.items
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
            pub fn to_filter(&self) -> $name<F, S>
            where
                S: Clone,
            {
                let width = F::BITS as usize / 8;
                $name {
                    inner: Xor3 {
                        hasher: self.hasher.clone(),
                        attempt: self.attempt,
                        layout: self.layout,
                        derivation: self.derivation,
                        items: self.items,
                        cells: (0..self.cells.len() / width)
                            .map(|i| F::from_u64(F::read_le(self.cells, i)))
                            .collect(),
                    },
                }
            }
        }
    };
}

membership_filter!(
    BinaryFuseFilter,
    BinaryFuseFilterBuilder,
    BinaryFuseFilterView,
    FilterKind::BinaryFuse,
    Layout::fuse,
    "A binary fuse filter (Graf & Lemire 2022, arity 3): three cells in consecutive segments.",
    "1.13 (above 1M keys; more for small sets)"
);

membership_filter!(
    XorFilter,
    XorFilterBuilder,
    XorFilterView,
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
        let tiny = |n: usize| Layout::Xor {
            block_length: n as u64 / 4 + 1,
        };
        let err = Xor3::<u8, _>::build(&keys, DefaultHasher::with_seed(0), tiny).unwrap_err();
        assert_eq!(err, RetrievalError::ConstructionFailed { attempts: 100 });
    }
}
