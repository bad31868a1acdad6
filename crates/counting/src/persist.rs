//! Serialization of [`CountingBloomFilter`] in core's versioned format
//! ([`bloomforge_core::format`]): kind `CountingBlocked` or `CountingStandard`, "number of
//! bits" = 4 x counters, probes per key, the hasher's algorithm and seed (or key check),
//! then the counter lines as little-endian `u64` words (64 bytes per line of 128
//! counters). With the `serde` feature, the same bytes through `serde`.

use crate::error::{CountingError, CountingShape};
use crate::layout::{CounterLayout, CounterLine, LINE_COUNTERS};
use crate::plain::CountingBloomFilter;
use bloomforge_core::format::{self, FilterKind, Header, PersistentHasher};
use bloomforge_core::hash::DefaultHasher;
use bloomforge_core::Error;

fn kind_of(layout: CounterLayout) -> FilterKind {
    match layout {
        CounterLayout::Blocked => FilterKind::CountingBlocked,
        CounterLayout::Standard => FilterKind::CountingStandard,
    }
}

fn corrupt(reason: &'static str) -> CountingError {
    Error::Corrupt { reason }.into()
}

/// Streams a counting filter in core's format: shared by the plain and atomic filters,
/// which differ only in how a line's words are `read` (a copy, or relaxed loads).
pub(crate) fn write_lines<T, S: PersistentHasher>(
    writer: impl std::io::Write,
    hasher: &S,
    shape: CountingShape,
    items: f64,
    lines: &[T],
    read: impl Fn(&T) -> [u64; 8],
) -> Result<(), CountingError> {
    Ok(format::encode_to(
        writer,
        kind_of(shape.layout),
        hasher,
        shape.num_hashes,
        shape.num_counters.saturating_mul(4),
        items.round() as u64,
        lines.len() as u64 * 64,
        |sink| {
            format::stream_le(lines, sink, |line, buf| {
                for w in read(line) {
                    buf.extend_from_slice(&w.to_le_bytes());
                }
            })
        },
    )?)
}

impl CountingBloomFilter<DefaultHasher> {
    /// Reads a filter written by [`to_bytes`](Self::to_bytes) with the default hasher
    /// (its seed is restored).
    ///
    /// ```
    /// use bloomforge_counting::CountingBloomFilter;
    /// let mut f = CountingBloomFilter::with_false_pos(0.01).expected_items(1000)?;
    /// f.insert(&"a");
    /// f.insert(&"a");
    /// let g = CountingBloomFilter::from_bytes(&f.to_bytes())?;
    /// assert_eq!(g, f);
    /// assert_eq!(g.count(&"a").get(), 2);
    /// # Ok::<(), bloomforge_counting::CountingError>(())
    /// ```
    ///
    /// # Errors
    /// Core's `Corrupt` (bad header, checksum, kind, sizes, or non-zero counters past the
    /// filter's size), `UnsupportedVersion`, `HasherMismatch` (e.g. a keyed filter: use
    /// [`from_bytes_with_hasher`](Self::from_bytes_with_hasher)), or `InvalidHashCount`
    /// for a stored probe count outside `1..=64`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, CountingError> {
        Self::decode(bytes, None)
    }

    /// Reads one serialized filter from `reader` (exactly the bytes it announces).
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), or core's `Io`.
    pub fn read_from<R: std::io::Read>(reader: R) -> Result<Self, CountingError> {
        Self::from_bytes(&format::read_serialized(reader)?)
    }
}

impl<S: PersistentHasher> CountingBloomFilter<S> {
    /// Serializes the filter in core's versioned format ([`bloomforge_core::format`]):
    /// kind `CountingBlocked` or `CountingStandard`, "number of bits" = 4 x counters, then
    /// the counter lines as little-endian `u64` words (64 bytes per line of 128).  An
    /// [`AtomicCountingBloomFilter`](crate::AtomicCountingBloomFilter) writes the same bytes
    /// from its live counters with
    /// [`write_to`](crate::AtomicCountingBloomFilter::write_to).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(format::HEADER_LEN + self.lines.len() * 64);
        // Writing into a `Vec` cannot fail.
        let _ = self.write_to(&mut out);
        out
    }

    /// Writes the bytes of [`to_bytes`](Self::to_bytes) to `writer`, streamed through a
    /// 64 KiB buffer (no copy of the counters is made).
    ///
    /// # Errors
    /// Core's `Io` if the writer fails.
    pub fn write_to<W: std::io::Write>(&self, writer: W) -> Result<(), CountingError> {
        let (shape, items) = (self.shape(), self.len() as f64);
        write_lines(writer, &self.hasher, shape, items, &self.lines, |l| l.words)
    }

    /// Reads a filter with the caller's hasher (needed for keyed hashing, whose key is
    /// never stored; it must be the hasher the filter was built with).
    ///
    /// # Errors
    /// As [`from_bytes`](CountingBloomFilter::from_bytes).
    pub fn from_bytes_with_hasher(bytes: &[u8], hasher: S) -> Result<Self, CountingError> {
        Self::decode(bytes, Some(hasher))
    }

    pub(crate) fn decode(bytes: &[u8], hasher: Option<S>) -> Result<Self, CountingError> {
        let layout = match Header::parse(bytes)?.kind {
            FilterKind::CountingBlocked => CounterLayout::Blocked,
            FilterKind::CountingStandard => CounterLayout::Standard,
            _ => return Err(corrupt("the bytes hold a different filter kind")),
        };
        let (header, payload, hasher) = format::decode(bytes, kind_of(layout), hasher)?;
        if header.num_bits == 0 || !header.num_bits.is_multiple_of(4) {
            return Err(corrupt(
                "bit count is not a positive number of 4-bit counters",
            ));
        }
        let counters = header.num_bits / 4;
        if layout == CounterLayout::Blocked && !counters.is_multiple_of(u64::from(LINE_COUNTERS)) {
            return Err(corrupt(
                "a blocked counting filter has whole lines of 128 counters",
            ));
        }
        let lines = counters.div_ceil(u64::from(LINE_COUNTERS));
        if lines.checked_mul(64) != Some(payload.len() as u64) {
            return Err(corrupt("payload length does not match the counter count"));
        }
        // Sized by the input actually present (checked above), never by a header field;
        // allocated like a new table (huge pages, filled on every thread when large), then
        // the lines copied in by the pool's threads.
        let n = payload.len() / 64;
        let mut lines = bloomforge_core::memory::try_vec_filled(n, CounterLine::default())
            .map_err(|_| bloomforge_core::Error::AllocationFailed {
                bytes: payload.len(),
            })?;
        let read = |lines: &mut [CounterLine], bytes: &[u8]| {
            for (dst, line) in lines.iter_mut().zip(bytes.chunks_exact(64)) {
                dst.words = core::array::from_fn(|i| format::u64_at(line, 8 * i));
            }
        };
        if payload.len() >= bloomforge_core::memory::PARALLEL_FILL_MIN_BYTES {
            use rayon::prelude::*;
            const PER: usize = (2 << 20) / 64;
            lines
                .par_chunks_mut(PER)
                .zip(payload.par_chunks(PER * 64))
                .for_each(|(dst, bytes)| read(dst, bytes));
        } else {
            read(&mut lines, payload);
        }
        let mut f =
            Self::from_lines(layout, lines, counters, header.num_hashes, hasher).map_err(|e| {
                match e {
                    CountingError::InvalidLines { reason } => corrupt(reason),
                    other => other,
                }
            })?;
        f.items = header.items;
        Ok(f)
    }
}

// Serialize / Deserialize as the bytes of `to_bytes`, through `decode` (hashers
// restorable from the stored seed only: a keyed filter fails with `HasherMismatch`).
#[cfg(feature = "serde")]
bloomforge_core::serde_via_bytes!(CountingBloomFilter);
