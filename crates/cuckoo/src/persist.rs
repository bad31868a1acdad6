//! Serialization in the project's format (kind [`FilterKind::Cuckoo`]) and the zero-copy
//! [`CuckooFilterView`].
//!
//! Payload (little-endian): a 48-byte parameter block, then the table exactly as it lies
//! in memory (packed buckets and 16 zero bytes of padding):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | slots per bucket (2, 4, 8) |
//! | 4 | 4 | fingerprint bits (8, 12, 16) |
//! | 8 | 8 | number of buckets |
//! | 16 | 4 | max kicks |
//! | 20 | 4 | reserved (0) |
//! | 24 | 8 | stored fingerprints (`len`) |
//! | 32 | 4 | stashed fingerprint (0: none) |
//! | 36 | 4 | reserved (0) |
//! | 40 | 8 | bucket of the stashed fingerprint |
//!
//! The header's "probes" field holds the bucket size and "number of bits" the table's
//! bits. Every field is checked before the table is copied: the sizes must agree with the
//! input's length, the padding must be zero, the stash in range and `len` must equal the
//! occupied slots. The checksum (over header and payload) is verified by core's `decode`,
//! as are the hasher's algorithm and seed.

use crate::error::{CuckooError, Result};
use crate::filter::{CuckooFilter, Geometry, MAX_BUCKETS};
use crate::table::{self, Fingerprint, Fp12, Kernel, PAD};
use bloomforge_core::format::{self, u32_at, u64_at, FilterKind, PersistentHasher};
use bloomforge_core::{Backend, DefaultHasher};
use core::hash::{BuildHasher, Hash};
use core::marker::PhantomData;

const PARAMS: usize = 48;

fn corrupt(reason: &'static str) -> CuckooError {
    bloomforge_core::Error::Corrupt { reason }.into()
}

/// The checked parameters of a payload and its table bytes.
struct Parsed<'a> {
    geometry: Geometry,
    max_kicks: u32,
    len: u64,
    stash_fp: u32,
    stash_bucket: u64,
    table: &'a [u8],
}

fn parse<F: Fingerprint>(payload: &[u8], header_bucket_size: u32) -> Result<Parsed<'_>> {
    if payload.len() < PARAMS {
        return Err(corrupt("cuckoo payload shorter than its parameter block"));
    }
    let bucket_size = u32_at(payload, 0);
    let bits = u32_at(payload, 4);
    let num_buckets = u64_at(payload, 8);
    let max_kicks = u32_at(payload, 16);
    let len = u64_at(payload, 24);
    let stash_fp = u32_at(payload, 32);
    let stash_bucket = u64_at(payload, 40);
    if u32_at(payload, 20) != 0 || u32_at(payload, 36) != 0 {
        return Err(corrupt("cuckoo reserved fields are not zero"));
    }
    if ![2, 4, 8].contains(&bucket_size) || bucket_size != header_bucket_size {
        return Err(corrupt(
            "cuckoo bucket size is not 2, 4 or 8 (or differs from the header)",
        ));
    }
    if ![8, 12, 16].contains(&bits) {
        return Err(corrupt("cuckoo fingerprint size is not 8, 12 or 16 bits"));
    }
    if bits != F::BITS {
        return Err(CuckooError::FingerprintMismatch {
            stored: bits,
            requested: F::BITS,
        });
    }
    if num_buckets == 0 || num_buckets > MAX_BUCKETS {
        return Err(corrupt("cuckoo bucket count is 0 or too large"));
    }
    let bucket_bytes = (bucket_size * bits / 8) as usize;
    let table_len = usize::try_from(num_buckets)
        .ok()
        .and_then(|m| m.checked_mul(bucket_bytes))
        .and_then(|b| b.checked_add(PAD))
        .ok_or_else(|| corrupt("cuckoo table size overflows"))?;
    let table = &payload[PARAMS..];
    if table.len() != table_len {
        return Err(corrupt(
            "cuckoo table length does not match its bucket count",
        ));
    }
    if table[table_len - PAD..].iter().any(|&b| b != 0) {
        return Err(corrupt("cuckoo table padding is not zero"));
    }
    if stash_fp > F::MASK || (stash_fp != 0 && stash_bucket >= num_buckets) {
        return Err(corrupt("cuckoo stash out of range"));
    }
    let geometry = Geometry {
        num_buckets,
        bucket_size,
        bucket_bytes,
    };
    let mut occupied = u64::from(stash_fp != 0);
    for i in 0..num_buckets {
        for j in 0..bucket_size as usize {
            // SAFETY: `i < num_buckets` and the table length was checked above.
            occupied += u64::from(
                unsafe { table::slot_at::<F>(table.as_ptr(), geometry.start(i), j) } != 0,
            );
        }
    }
    if occupied != len {
        return Err(corrupt(
            "cuckoo item count does not match the occupied slots",
        ));
    }
    Ok(Parsed {
        geometry,
        max_kicks,
        len,
        stash_fp,
        stash_bucket,
        table,
    })
}

impl<F: Fingerprint, S: PersistentHasher> CuckooFilter<F, S> {
    fn payload_len(&self) -> u64 {
        (PARAMS + self.table.len()) as u64
    }

    fn params(&self) -> [u8; PARAMS] {
        let mut p = [0u8; PARAMS];
        p[0..4].copy_from_slice(&self.bucket_size.to_le_bytes());
        p[4..8].copy_from_slice(&F::BITS.to_le_bytes());
        p[8..16].copy_from_slice(&self.num_buckets.to_le_bytes());
        p[16..20].copy_from_slice(&self.max_kicks.to_le_bytes());
        p[24..32].copy_from_slice(&self.len.to_le_bytes());
        p[32..36].copy_from_slice(&self.stash_fp.to_le_bytes());
        p[40..48].copy_from_slice(&self.stash_bucket.to_le_bytes());
        p
    }

    /// Writes the filter in the project's format to `writer` (streamed, no copy).
    ///
    /// # Errors
    /// `Core(Io)` if the writer fails.
    pub fn write_to<W: std::io::Write>(&self, writer: W) -> Result<()> {
        let params = self.params();
        format::encode_to(
            writer,
            FilterKind::Cuckoo,
            &self.hasher,
            self.bucket_size,
            self.memory_bits(),
            self.len,
            self.payload_len(),
            |sink| {
                sink(&params);
                for piece in self.table.chunks(1 << 16) {
                    sink(piece);
                }
            },
        )?;
        Ok(())
    }

    /// The filter in the project's format.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(format::HEADER_LEN + self.payload_len() as usize);
        self.write_to(&mut out)
            .expect("writing to a Vec cannot fail");
        out
    }

    /// Reads a filter written by [`to_bytes`](Self::to_bytes) with the hasher given: it
    /// must be the one the filter was built with (checked against the stored seed / key
    /// check). For keyed hashers, whose key is not stored.
    ///
    /// # Errors
    /// `Core(Corrupt)` / `Core(UnsupportedVersion)` for bad bytes, `Core(HasherMismatch)`,
    /// [`CuckooError::FingerprintMismatch`].
    pub fn from_bytes_with_hasher(bytes: &[u8], hasher: S) -> Result<Self> {
        Self::decode(bytes, Some(hasher))
    }

    pub(crate) fn decode(bytes: &[u8], hasher: Option<S>) -> Result<Self> {
        let (header, payload, hasher) = format::decode::<S>(bytes, FilterKind::Cuckoo, hasher)?;
        let p = parse::<F>(payload, header.num_hashes)?;
        let mut table =
            bloomforge_core::memory::try_vec_filled(p.table.len(), 0u8).map_err(|_| {
                bloomforge_core::Error::AllocationFailed {
                    bytes: p.table.len(),
                }
            })?;
        table.copy_from_slice(p.table);
        let backend = Backend::detect();
        Ok(Self {
            table,
            num_buckets: p.geometry.num_buckets,
            bucket_size: p.geometry.bucket_size,
            bucket_bytes: p.geometry.bucket_bytes,
            len: p.len,
            max_kicks: p.max_kicks,
            stash_fp: p.stash_fp,
            stash_bucket: p.stash_bucket,
            rng: (0x853c_49e6_748f_ea9b ^ p.geometry.num_buckets ^ p.len) | 1,
            hasher,
            backend,
            kernel: Kernel::for_backend(backend),
            _fp: PhantomData,
        })
    }
}

impl<F: Fingerprint> CuckooFilter<F, DefaultHasher> {
    /// Reads a filter written by [`to_bytes`](Self::to_bytes), rebuilding the default
    /// hasher from the stored seed.
    ///
    /// ```
    /// use bloomforge_cuckoo::CuckooFilter;
    /// let mut f = CuckooFilter::new(1000, 0.01)?;
    /// f.insert(&42u64)?;
    /// let g: CuckooFilter = CuckooFilter::from_bytes(&f.to_bytes())?;
    /// assert!(g.contains(&42u64));
    /// # Ok::<(), bloomforge_cuckoo::CuckooError>(())
    /// ```
    ///
    /// # Errors
    /// As [`from_bytes_with_hasher`](Self::from_bytes_with_hasher).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::decode(bytes, None)
    }

    /// Reads one serialized filter from `reader` (growing the buffer only as data arrives).
    ///
    /// # Errors
    /// `Core(Io)` if the reader fails or ends early; otherwise as [`from_bytes`](Self::from_bytes).
    pub fn read_from<R: std::io::Read>(reader: R) -> Result<Self> {
        let bytes = format::read_serialized(reader)?;
        Self::from_bytes(&bytes)
    }
}

/// A read-only cuckoo filter borrowing serialized bytes (a memory-mapped file, say)
/// without copying the table: its payload is the in-memory layout, and the kernels use
/// unaligned loads, so any alignment works.
pub struct CuckooFilterView<'a, F: Fingerprint = Fp12, S = DefaultHasher> {
    table: &'a [u8],
    geometry: Geometry,
    len: u64,
    stash_fp: u32,
    stash_bucket: u64,
    hasher: S,
    kernel: Kernel,
    _fp: PhantomData<F>,
}

impl<F: Fingerprint, S> core::fmt::Debug for CuckooFilterView<'_, F, S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CuckooFilterView")
            .field("fingerprint_bits", &F::BITS)
            .field("geometry", &self.geometry)
            .field("len", &self.len)
            .finish()
    }
}

impl<'a, F: Fingerprint, S: PersistentHasher> CuckooFilterView<'a, F, S> {
    /// A view of serialized `bytes`, every field checked (the checksum included: one
    /// pass over the bytes, no copy).
    ///
    /// ```
    /// use bloomforge_cuckoo::{CuckooFilter, CuckooFilterView};
    /// let mut f = CuckooFilter::new(1000, 0.01)?;
    /// f.insert(&"a")?;
    /// let bytes = f.to_bytes();
    /// let view: CuckooFilterView = CuckooFilterView::from_bytes(&bytes)?;
    /// assert!(view.contains(&"a") && view.len() == 1);
    /// # Ok::<(), bloomforge_cuckoo::CuckooError>(())
    /// ```
    ///
    /// # Errors
    /// As [`CuckooFilter::from_bytes_with_hasher`].
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self> {
        Self::open(bytes, None)
    }

    /// A view read with the caller's hasher (keyed hashers).
    ///
    /// # Errors
    /// As [`CuckooFilter::from_bytes_with_hasher`].
    pub fn with_hasher(bytes: &'a [u8], hasher: S) -> Result<Self> {
        Self::open(bytes, Some(hasher))
    }

    fn open(bytes: &'a [u8], hasher: Option<S>) -> Result<Self> {
        let (header, payload, hasher) = format::decode::<S>(bytes, FilterKind::Cuckoo, hasher)?;
        let p = parse::<F>(payload, header.num_hashes)?;
        Ok(Self {
            table: p.table,
            geometry: p.geometry,
            len: p.len,
            stash_fp: p.stash_fp,
            stash_bucket: p.stash_bucket,
            hasher,
            kernel: Kernel::for_backend(Backend::detect()),
            _fp: PhantomData,
        })
    }
}

impl<F: Fingerprint, S: BuildHasher> CuckooFilterView<'_, F, S> {
    /// Fingerprints stored.
    pub fn len(&self) -> u64 {
        self.len
    }
    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Whether a key with this hash may be present.
    pub fn contains_hash(&self, hash: u64) -> bool {
        let g = &self.geometry;
        let p = g.probe::<F>(hash);
        // SAFETY: both buckets are below `num_buckets` and `parse` checked the table's
        // length (padding included); the kernel comes from a detected backend.
        let hit = unsafe {
            self.kernel.matches_one::<F>(
                self.table.as_ptr(),
                g.start(p.i1),
                g.start(p.i2),
                p.fp,
                g.bucket_size as usize,
            )
        };
        hit || (self.stash_fp == p.fp && (self.stash_bucket == p.i1 || self.stash_bucket == p.i2))
    }
    /// Whether `key` may be present.
    pub fn contains<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.contains_hash(self.hasher.hash_one(key))
    }
}
