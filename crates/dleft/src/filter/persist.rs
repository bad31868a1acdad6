//! Serialization of [`DLeftCountingBloomFilter`] in core's versioned format
//! ([`bloomforge_core::format`], kind `DLeft`): the header records `d` as the probe count,
//! the table's bits, the key count and the hasher; the payload is a 48-byte parameter
//! block, then the packed table exactly as it is in memory (the layout is in
//! [`DLeftCountingBloomFilter::to_bytes`]'s docs). A reader rebuilds the permutations from the seed and checks every invariant of the
//! table before returning it (each cell empty or holding a counter, no fingerprint stored
//! twice, padding zero, the occupied count, and the key count where no counter
//! saturated), so hostile input yields an error, never a filter whose deletes misbehave.

use super::DLeftCountingBloomFilter;
use crate::error::{DLeftError, Result};
use crate::layout::Geometry;
use bloomforge_core::format::{self, u32_at, u64_at, FilterKind, PersistentHasher};
use bloomforge_core::hash::DefaultHasher;
use bloomforge_core::Error;

/// Bytes of the parameter block before the table.
const PARAMS: usize = 48;

fn corrupt(reason: &'static str) -> DLeftError {
    Error::Corrupt { reason }.into()
}

impl DLeftCountingBloomFilter<DefaultHasher> {
    /// Reads a filter written by [`to_bytes`](Self::to_bytes) with the default hasher
    /// (its seed is restored).
    ///
    /// ```
    /// use bloomforge_dleft::DLeftCountingBloomFilter;
    /// let mut f = DLeftCountingBloomFilter::with_false_pos(0.01).expected_items(1000)?;
    /// f.insert(&"a")?;
    /// f.insert(&"a")?;
    /// let mut g = DLeftCountingBloomFilter::from_bytes(&f.to_bytes())?;
    /// assert_eq!(g, f);
    /// g.remove(&"a")?;
    /// assert_eq!(g.count(&"a").get(), 1);
    /// # Ok::<(), bloomforge_dleft::DLeftError>(())
    /// ```
    ///
    /// # Errors
    /// Core's `Corrupt` (bad header or checksum, another kind, parameters out of range,
    /// sizes that disagree, or a table that breaks an invariant), `UnsupportedVersion`, or
    /// `HasherMismatch` (e.g. a keyed filter: use
    /// [`from_bytes_with_hasher`](Self::from_bytes_with_hasher)).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::decode(bytes, None)
    }

    /// Reads one serialized filter from `reader` (exactly the bytes it announces).
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), or core's `Io`.
    pub fn read_from<R: std::io::Read>(reader: R) -> Result<Self> {
        Self::from_bytes(&format::read_serialized(reader)?)
    }
}

impl<S: PersistentHasher> DLeftCountingBloomFilter<S> {
    /// Serializes the filter in core's versioned format ([`bloomforge_core::format`],
    /// kind `DLeft`; the header's probe count is `d`, its bit count the table's, its item
    /// count [`len`](Self::len)). The payload is a parameter block, then the packed table:
    ///
    /// | payload offset | size | field |
    /// |---|---|---|
    /// | 0 | 4 | subtables `d` |
    /// | 4 | 4 | cells per bucket `w` |
    /// | 8 | 4 | remainder bits `r` |
    /// | 12 | 4 | counter bits `c` |
    /// | 16 | 8 | buckets per subtable `B` |
    /// | 24 | 8 | permutation seed |
    /// | 32 | 8 | [`len`](DLeftCountingBloomFilter::len) |
    /// | 40 | 8 | occupied cells |
    /// | 48 | `d B ceil(w (r + c) / 8)` | the buckets, subtable by subtable |
    ///
    /// [`from_bytes`](DLeftCountingBloomFilter::from_bytes) rebuilds the permutations from
    /// the seed and checks every invariant of the table.
    pub fn to_bytes(&self) -> Vec<u8> {
        let table = self.geo.table_bytes();
        let mut out = Vec::with_capacity(format::HEADER_LEN + PARAMS + table);
        // Writing into a `Vec` cannot fail.
        let _ = self.write_to(&mut out);
        out
    }

    /// Writes the bytes of [`to_bytes`](Self::to_bytes) to `writer`, streamed through a
    /// 64 KiB buffer (no copy of the table is made).
    ///
    /// # Errors
    /// Core's `Io` if the writer fails.
    pub fn write_to<W: std::io::Write>(&self, writer: W) -> Result<()> {
        let g = &self.geo;
        let table = &self.table[..g.table_bytes()];
        let params = self.params();
        Ok(format::encode_to(
            writer,
            FilterKind::DLeft,
            &self.hasher,
            g.d as u32,
            table.len() as u64 * 8,
            self.len,
            (PARAMS + table.len()) as u64,
            |sink| {
                sink(&params);
                for piece in table.chunks(1 << 16) {
                    sink(piece);
                }
            },
        )?)
    }

    /// The payload's parameter block (the first [`PARAMS`] bytes).
    fn params(&self) -> [u8; PARAMS] {
        let g = &self.geo;
        let mut out = [0u8; PARAMS];
        for (i, x) in [g.d as u32, g.cells, g.rem_bits, g.counter_bits]
            .into_iter()
            .enumerate()
        {
            out[4 * i..4 * i + 4].copy_from_slice(&x.to_le_bytes());
        }
        for (i, x) in [g.buckets, self.seed, self.len, self.occupied]
            .into_iter()
            .enumerate()
        {
            out[16 + 8 * i..24 + 8 * i].copy_from_slice(&x.to_le_bytes());
        }
        out
    }

    /// Reads a filter with the caller's hasher (needed for keyed hashing, whose key is
    /// never stored; it must be the hasher the filter was built with).
    ///
    /// # Errors
    /// As [`from_bytes`](DLeftCountingBloomFilter::from_bytes).
    pub fn from_bytes_with_hasher(bytes: &[u8], hasher: S) -> Result<Self> {
        Self::decode(bytes, Some(hasher))
    }

    pub(crate) fn decode(bytes: &[u8], hasher: Option<S>) -> Result<Self> {
        let (header, payload, hasher) = format::decode(bytes, FilterKind::DLeft, hasher)?;
        if payload.len() < PARAMS {
            return Err(corrupt("payload shorter than the d-left parameter block"));
        }
        let (params, table) = payload.split_at(PARAMS);
        let (d, cells, rem_bits, counter_bits) = (
            u32_at(params, 0),
            u32_at(params, 4),
            u32_at(params, 8),
            u32_at(params, 12),
        );
        let (buckets, seed, len, occupied) = (
            u64_at(params, 16),
            u64_at(params, 24),
            u64_at(params, 32),
            u64_at(params, 40),
        );
        if header.num_hashes != d {
            return Err(corrupt(
                "the header's probe count is not the subtable count",
            ));
        }
        // Validates every parameter (ranges, and a table size that fits memory).
        let geo = Geometry::new(d, buckets, cells, rem_bits, counter_bits)
            .map_err(|_| corrupt("d-left parameters out of range"))?;
        if geo.table_bytes() != table.len() || header.num_bits != table.len() as u64 * 8 {
            return Err(corrupt("table length does not match the parameters"));
        }
        // The table length equals the input's, so this allocation is bounded by it.
        let mut f = Self::from_parts(d, buckets, cells, rem_bits, counter_bits, seed, hasher)?;
        f.table[..table.len()].copy_from_slice(table);
        f.len = len;
        f.occupied = occupied;
        f.validate()
            .map_err(|_| corrupt("the d-left table breaks an invariant"))?;
        Ok(f)
    }
}

// Serialize / Deserialize as the bytes of `to_bytes`, through `decode` (hashers
// restorable from the stored seed only: a keyed filter fails with `HasherMismatch`).
#[cfg(feature = "serde")]
bloomforge_core::serde_via_bytes!(DLeftCountingBloomFilter);
