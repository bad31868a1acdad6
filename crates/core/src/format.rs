//! The versioned binary format shared by every filter kind.
//!
//! Little-endian throughout. A 64-byte header, then the payload:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `b"BLMF"` |
//! | 4 | 2 | format version (3; 1 and 2 are still read) |
//! | 6 | 1 | filter kind ([`FilterKind`]) |
//! | 7 | 1 | hash algorithm ([`HashAlgorithm`]) |
//! | 8 | 4 | probes per key `k` |
//! | 12 | 4 | flags (0) |
//! | 16 | 8 | hasher seed (0 for keyed hashing: the key is never stored; for the Parquet hash, the column's physical type and type length) |
//! | 24 | 8 | number of bits |
//! | 32 | 8 | estimated distinct keys at write time |
//! | 40 | 8 | payload length in bytes |
//! | 48 | 8 | checksum: XXH64 (seed 0) of the header (this field zeroed) and the payload |
//! | 56 | 8 | key check, a HighwayHash of a fixed string under the key (0: unkeyed) |
//!
//! Versions 1 and 2 (read, no longer written) differ only in the checksum, which covers
//! the payload alone, and in bytes 56..64: reserved (zero) in version 1, the key check in
//! version 2 (written then for keyed filters only). Version 3 covers the header as well, so
//! a corrupted probe count, seed or size is detected rather than decoded into a filter
//! that answers wrongly.
//!
//! Payload: blocked filters as little-endian `u64` words (eight per block), split-block
//! filters as the Parquet bitset (little-endian `u32` words), standard filters as
//! little-endian `u64` words. The counting and d-left crates write their filters in the
//! same format through [`encode_to`] / [`decode`]: counting filters as their 64-byte counter
//! lines (little-endian `u64` words, "number of bits" = 4 x counters), d-left filters as a
//! parameter block followed by the packed table (see `bloomforge-dleft`). A reader given
//! a hasher checks it against the stored seed and key check, so a filter is never queried
//! with a hasher it was not built with (every key would read absent). It checks every
//! field before allocating, and allocates only as much as the input actually holds:
//! truncated, corrupted or hostile input yields a typed [`Error`], never a panic or an
//! outsized allocation.

use crate::hash::ParquetHasher;
pub use crate::hash::{HashAlgorithm, PersistentHasher};
use crate::{Error, Result};

/// The magic bytes that start every serialized filter.
pub const MAGIC: [u8; 4] = *b"BLMF";
/// The format version this crate writes (and the newest it reads). Version 3's checksum
/// covers the header as well as the payload; versions 1 and 2 (payload-only checksum) are
/// still read.
pub const FORMAT_VERSION: u16 = 3;
/// Size of the header in bytes.
pub const HEADER_LEN: usize = 64;

/// Which filter a serialized payload holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
#[non_exhaustive]
pub enum FilterKind {
    /// [`BlockedBloomFilter`](crate::BlockedBloomFilter).
    Blocked512 = 1,
    /// [`SplitBlockBloomFilter`](crate::SplitBlockBloomFilter).
    SplitBlock256 = 2,
    /// [`StandardBloomFilter`](crate::StandardBloomFilter).
    Standard = 3,
    /// `bloomforge_counting::CountingBloomFilter` with the blocked counter layout.
    CountingBlocked = 4,
    /// `bloomforge_counting::CountingBloomFilter` with the standard counter layout.
    CountingStandard = 5,
    /// `bloomforge_dleft::DLeftCountingBloomFilter`.
    DLeft = 6,
    /// `bloomforge_bitmap::Bitmap` (one bit per value of `0..n`).
    Bitmap = 7,
    /// `bloomforge_bitmap::TwoBitmap` (two bits per value: never / once / many).
    TwoBitmap = 8,
    /// `bloomforge_cuckoo::CuckooFilter`.
    Cuckoo = 9,
    /// `bloomforge_stream::ScalableBloomFilter` (a stack of slices).
    Scalable = 10,
    /// `bloomforge_stream::StableBloomFilter`.
    Stable = 11,
    /// `bloomforge_stream::AttenuatedBloomFilter`.
    Attenuated = 12,
    /// `bloomforge_retrieval::BloomierFilter`.
    Bloomier = 13,
    /// `bloomforge_retrieval::XorFilter`.
    Xor = 14,
    /// `bloomforge_retrieval::BinaryFuseFilter`.
    BinaryFuse = 15,
    /// `bloomforge_retrieval::CompactApproximator`.
    CompactApproximator = 16,
    /// `bloomforge_retrieval::Iblt` (invertible Bloom lookup table).
    Iblt = 17,
    /// `bloomforge_cuckoo::ConcurrentCuckooFilter` (its shards, each a [`Cuckoo`](Self::Cuckoo)
    /// filter).
    ConcurrentCuckoo = 18,
}

/// Reading a Parquet hasher back from a filter's header lives with the header (the hash
/// module knows nothing of the format).
impl ParquetHasher {
    /// The hasher a serialized filter was written with, from its header.
    ///
    /// # Errors
    /// [`Error::Corrupt`] for bytes without a valid header,
    /// [`Error::HasherMismatch`] for a filter hashed otherwise
    /// or a seed field that names no physical type.
    pub fn of_bytes(bytes: &[u8]) -> crate::Result<Self> {
        let header = Header::parse(bytes)?;
        if header.algorithm != HashAlgorithm::ParquetXxh64 {
            return Err(crate::Error::HasherMismatch);
        }
        Self::decode(header.seed).ok_or(crate::Error::HasherMismatch)
    }
}

/// The decoded header of a serialized filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Header {
    /// Format version ([`FORMAT_VERSION`] for everything this crate writes).
    pub version: u16,
    /// Filter kind.
    pub kind: FilterKind,
    /// Hash algorithm.
    pub algorithm: HashAlgorithm,
    /// Probes per key.
    pub num_hashes: u32,
    /// Hasher seed (0 for keyed hashing).
    pub seed: u64,
    /// Number of bits.
    pub num_bits: u64,
    /// Estimated distinct keys when written.
    pub items: u64,
    /// Payload length in bytes.
    pub payload_len: u64,
    /// XXH64 of the payload.
    pub checksum: u64,
    /// [`PersistentHasher::key_check`] of the writer's hasher (0: none recorded).
    pub key_check: u64,
}

fn corrupt(reason: &'static str) -> Error {
    Error::Corrupt { reason }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

/// The little-endian `u32` at `b[at..at + 4]` (for readers of payload fields; panics if
/// out of bounds, so check the length first).
pub fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut x = [0u8; 4];
    x.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(x)
}

/// The little-endian `u64` at `b[at..at + 8]` (for readers of payload fields; panics if
/// out of bounds, so check the length first).
pub fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

impl Header {
    /// Encodes the header (64 bytes).
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        out[0..4].copy_from_slice(&MAGIC);
        out[4..6].copy_from_slice(&self.version.to_le_bytes());
        out[6] = self.kind as u8;
        out[7] = self.algorithm as u8;
        out[8..12].copy_from_slice(&self.num_hashes.to_le_bytes());
        out[16..24].copy_from_slice(&self.seed.to_le_bytes());
        out[24..32].copy_from_slice(&self.num_bits.to_le_bytes());
        out[32..40].copy_from_slice(&self.items.to_le_bytes());
        out[40..48].copy_from_slice(&self.payload_len.to_le_bytes());
        out[48..56].copy_from_slice(&self.checksum.to_le_bytes());
        out[56..64].copy_from_slice(&self.key_check.to_le_bytes());
        out
    }

    /// Decodes and validates a header.
    ///
    /// # Errors
    /// [`Error::Corrupt`] for a short input, a wrong magic, an unknown kind or algorithm,
    /// non-zero flags; [`Error::UnsupportedVersion`] for another version.
    pub fn parse(bytes: &[u8]) -> Result<Header> {
        if bytes.len() < HEADER_LEN {
            return Err(corrupt("shorter than the 64-byte header"));
        }
        if bytes[0..4] != MAGIC {
            return Err(corrupt("bad magic: not a bloomforge filter"));
        }
        let version = u16_at(bytes, 4);
        if !(1..=FORMAT_VERSION).contains(&version) {
            return Err(Error::UnsupportedVersion(version));
        }
        let kind = match bytes[6] {
            1 => FilterKind::Blocked512,
            2 => FilterKind::SplitBlock256,
            3 => FilterKind::Standard,
            4 => FilterKind::CountingBlocked,
            5 => FilterKind::CountingStandard,
            6 => FilterKind::DLeft,
            7 => FilterKind::Bitmap,
            8 => FilterKind::TwoBitmap,
            9 => FilterKind::Cuckoo,
            10 => FilterKind::Scalable,
            11 => FilterKind::Stable,
            12 => FilterKind::Attenuated,
            13 => FilterKind::Bloomier,
            14 => FilterKind::Xor,
            15 => FilterKind::BinaryFuse,
            16 => FilterKind::CompactApproximator,
            17 => FilterKind::Iblt,
            18 => FilterKind::ConcurrentCuckoo,
            _ => return Err(corrupt("unknown filter kind")),
        };
        let algorithm = match bytes[7] {
            1 => HashAlgorithm::Foldhash,
            2 => HashAlgorithm::HighwayKeyed,
            3 => HashAlgorithm::ParquetXxh64,
            _ => return Err(corrupt("unknown hash algorithm")),
        };
        if u32_at(bytes, 12) != 0 {
            return Err(corrupt("reserved flags are not zero"));
        }
        if version == 1 && u64_at(bytes, 56) != 0 {
            return Err(corrupt("reserved field of a version-1 header is not zero"));
        }
        Ok(Header {
            version,
            kind,
            algorithm,
            num_hashes: u32_at(bytes, 8),
            seed: u64_at(bytes, 16),
            num_bits: u64_at(bytes, 24),
            items: u64_at(bytes, 32),
            payload_len: u64_at(bytes, 40),
            checksum: u64_at(bytes, 48),
            key_check: u64_at(bytes, 56),
        })
    }
}

/// Checks `bytes` against the expected kind and hasher and returns the header, the
/// validated payload and the hasher to use. `verify_checksum: false` skips the one pass
/// over the payload (zero-copy views of large files); every other field is still checked.
pub(crate) fn open<S: PersistentHasher>(
    bytes: &[u8],
    kind: FilterKind,
    hasher: Option<S>,
    verify_checksum: bool,
) -> Result<(Header, &[u8], S)> {
    let header = Header::parse(bytes)?;
    check_kind::<S>(&header, kind)?;
    let payload = &bytes[HEADER_LEN..];
    if header.payload_len != payload.len() as u64 {
        return Err(corrupt("payload length does not match the input length"));
    }
    if verify_checksum && checksum(header.version, bytes, payload) != header.checksum {
        return Err(corrupt(
            "checksum mismatch: the header or payload is corrupted",
        ));
    }
    let hasher = header_hasher(&header, hasher)?;
    Ok((header, payload, hasher))
}

/// The filter kind and hash algorithm `header` announces are `kind` and `S`'s.
fn check_kind<S: PersistentHasher>(header: &Header, kind: FilterKind) -> Result<()> {
    if header.kind != kind {
        return Err(corrupt("the bytes hold a different filter kind"));
    }
    if header.algorithm != S::ALGORITHM {
        return Err(Error::HasherMismatch);
    }
    Ok(())
}

/// The hasher to probe with: `hasher`, or the stored seed's; refused unless its seed and
/// key check are the header's.
fn header_hasher<S: PersistentHasher>(header: &Header, hasher: Option<S>) -> Result<S> {
    let hasher = match hasher {
        Some(h) => h,
        None => S::from_stored_seed(header.seed).ok_or(Error::HasherMismatch)?,
    };
    // A hasher with another seed or key would place every key elsewhere: refuse it rather
    // than answer "absent" for every inserted key. (A key check of 0 was not recorded.)
    if hasher.stored_seed() != header.seed
        || (header.key_check != 0 && hasher.key_check() != header.key_check)
    {
        return Err(Error::HasherMismatch);
    }
    Ok(hasher)
}

/// [`open`] for a stream: reads the header from `reader` and checks it as `open` does,
/// before any of the payload is read, so a caller can read the payload straight into its
/// own memory (one read, no copy of the bytes) and verify it with the returned
/// [`PayloadCheck`].
pub(crate) fn open_stream<S: PersistentHasher>(
    reader: &mut impl std::io::Read,
    kind: FilterKind,
    hasher: Option<S>,
) -> Result<(Header, S, PayloadCheck)> {
    let mut head = [0u8; HEADER_LEN];
    reader.read_exact(&mut head).map_err(Error::from)?;
    let header = Header::parse(&head)?;
    check_kind::<S>(&header, kind)?;
    let hasher = header_hasher(&header, hasher)?;
    let check = PayloadCheck {
        sum: header_sum(header.version, &head),
        left: header.payload_len,
        expected: header.checksum,
    };
    Ok((header, hasher, check))
}

/// The checksum of a payload read in pieces after [`open_stream`].
pub(crate) struct PayloadCheck {
    sum: xxhash_rust::xxh64::Xxh64,
    left: u64,
    expected: u64,
}

impl PayloadCheck {
    /// Reads exactly `buf.len()` payload bytes from `reader` into `buf` and adds them to
    /// the checksum.
    ///
    /// # Errors
    /// `Error::Corrupt` ("truncated payload") where the stream ends first, `Error::Io`
    /// for other read errors.
    pub(crate) fn read(&mut self, reader: &mut impl std::io::Read, buf: &mut [u8]) -> Result<()> {
        reader.read_exact(buf).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => corrupt("truncated payload"),
            _ => Error::from(e),
        })?;
        self.sum.update(buf);
        self.left = self.left.saturating_sub(buf.len() as u64);
        Ok(())
    }

    /// Checks that the whole payload was read and its checksum matches the header's.
    ///
    /// # Errors
    /// `Error::Corrupt` on a mismatch.
    pub(crate) fn finish(self) -> Result<()> {
        if self.left != 0 {
            return Err(corrupt("payload length does not match the input length"));
        }
        if self.sum.digest() != self.expected {
            return Err(corrupt(
                "checksum mismatch: the header or payload is corrupted",
            ));
        }
        Ok(())
    }
}

/// Serializes a filter of `kind` in this format: the header (with `hasher`'s algorithm,
/// seed and key check, the payload's length and checksum), then `payload`, from a payload
/// already in memory. The filters themselves stream theirs through [`encode_to`], which
/// writes the same bytes without the copy.
///
/// ```
/// use bloomforge_core::format::{decode, encode, FilterKind};
/// use bloomforge_core::hash::DefaultHasher;
/// let bytes = encode(FilterKind::Standard, &DefaultHasher::with_seed(7), 3, 64, 0, vec![0u8; 8]);
/// let (header, payload, hasher) = decode::<DefaultHasher>(&bytes, FilterKind::Standard, None)?;
/// assert_eq!((header.num_hashes, header.num_bits, payload.len()), (3, 64, 8));
/// assert_eq!(hasher.seed(), 7);
/// # Ok::<(), bloomforge_core::Error>(())
/// ```
pub fn encode<S: PersistentHasher>(
    kind: FilterKind,
    hasher: &S,
    num_hashes: u32,
    num_bits: u64,
    items: u64,
    payload: Vec<u8>,
) -> Vec<u8> {
    let header = new_header(kind, hasher, num_hashes, num_bits, items, 0);
    seal(header, payload)
}

/// The current version's header for these fields (checksum zero).
fn new_header<S: PersistentHasher>(
    kind: FilterKind,
    hasher: &S,
    num_hashes: u32,
    num_bits: u64,
    items: u64,
    payload_len: u64,
) -> Header {
    Header {
        version: FORMAT_VERSION,
        kind,
        algorithm: S::ALGORITHM,
        num_hashes,
        seed: hasher.stored_seed(),
        num_bits,
        items,
        payload_len,
        checksum: 0,
        key_check: hasher.key_check(),
    }
}

/// [`encode`] written straight to `writer`, without materialising the payload or the
/// serialized bytes (a multi-gigabyte filter is written with a 64 KiB buffer, not a copy of
/// itself). `payload` is called twice, first to checksum and then to write, and must hand
/// its sink the same `payload_len` bytes, in pieces of any size, both times; the output is
/// byte-for-byte what [`encode`] returns for those bytes.
///
/// ```
/// use bloomforge_core::format::{encode, encode_to, FilterKind};
/// use bloomforge_core::hash::DefaultHasher;
/// let hasher = DefaultHasher::with_seed(7);
/// let words = [1u64, 2, 3];
/// let mut out = Vec::new();
/// encode_to(&mut out, FilterKind::Standard, &hasher, 3, 192, 1, 24, |sink| {
///     for w in words {
///         sink(&w.to_le_bytes());
///     }
/// })?;
/// let payload: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
/// assert_eq!(out, encode(FilterKind::Standard, &hasher, 3, 192, 1, payload));
/// # Ok::<(), bloomforge_core::Error>(())
/// ```
///
/// # Errors
/// [`Error::Io`] if the writer fails; if `payload` hands over a different number of bytes
/// than `payload_len` (a bug in the caller; nothing is written then); or if the second pass
/// hands over different bytes than the first (the written checksum then does not match,
/// so readers refuse the output).
#[allow(clippy::too_many_arguments)]
pub fn encode_to<S: PersistentHasher, W: std::io::Write>(
    writer: W,
    kind: FilterKind,
    hasher: &S,
    num_hashes: u32,
    num_bits: u64,
    items: u64,
    payload_len: u64,
    payload: impl Fn(&mut dyn FnMut(&[u8])),
) -> Result<()> {
    use std::io::Write;
    let mut head = new_header(kind, hasher, num_hashes, num_bits, items, payload_len).to_bytes();
    // The version-3 checksum: the header with its checksum field zero, then the payload.
    let mut sum = xxhash_rust::xxh64::Xxh64::new(0);
    sum.update(&head);
    let mut counted = 0u64;
    payload(&mut |piece: &[u8]| {
        counted += piece.len() as u64;
        sum.update(piece);
    });
    if counted != payload_len {
        return Err(Error::Io(
            format!("payload of {counted} bytes where the header announces {payload_len}").into(),
        ));
    }
    // The write pass checksums what it writes too: a payload that changed in between (an
    // atomic filter with concurrent inserts) is an error, not a file that fails to read.
    let mut again = xxhash_rust::xxh64::Xxh64::new(0);
    again.update(&head);
    let digest = sum.digest();
    head[48..56].copy_from_slice(&digest.to_le_bytes());
    let io = Error::from;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, writer);
    out.write_all(&head).map_err(io)?;
    let mut failed = None;
    payload(&mut |piece: &[u8]| {
        again.update(piece);
        if failed.is_none() {
            failed = out.write_all(piece).err();
        }
    });
    if let Some(e) = failed {
        return Err(io(e));
    }
    out.flush().map_err(io)?;
    if again.digest() != digest {
        return Err(Error::Io(
            "the filter changed while it was written (concurrent inserts?): the output's \
             checksum does not match it"
                .into(),
        ));
    }
    Ok(())
}

/// [`encode_to`] for a payload already laid out as serialized and borrowed for the whole
/// call (a plain filter's blocks on a little-endian machine): one checksum pass over the
/// bytes, then the header and the payload are written straight from them, without the
/// 64 KiB copies and the second checksum pass that [`encode_to`] needs for a payload that
/// is produced piece by piece and could change between its passes. The bytes written are
/// the same as [`encode_to`]'s for the same payload.
pub(crate) fn encode_slice_to<S: PersistentHasher, W: std::io::Write>(
    mut writer: W,
    kind: FilterKind,
    hasher: &S,
    num_hashes: u32,
    num_bits: u64,
    items: u64,
    payload: &[u8],
) -> Result<()> {
    let mut head = new_header(
        kind,
        hasher,
        num_hashes,
        num_bits,
        items,
        payload.len() as u64,
    )
    .to_bytes();
    let mut sum = xxhash_rust::xxh64::Xxh64::new(0);
    sum.update(&head);
    sum.update(payload);
    head[48..56].copy_from_slice(&sum.digest().to_le_bytes());
    let io = Error::from;
    writer.write_all(&head).map_err(io)?;
    writer.write_all(payload).map_err(io)?;
    writer.flush().map_err(io)
}

/// Hands `items` to `sink` as little-endian bytes in pieces of up to 64 KiB (a helper for
/// the `payload` of [`encode_to`]): `to_le(item, buffer)` appends one item's bytes.
pub fn stream_le<T>(items: &[T], sink: &mut dyn FnMut(&[u8]), to_le: impl Fn(&T, &mut Vec<u8>)) {
    const PIECE: usize = 1 << 16;
    let mut buf = Vec::with_capacity(PIECE + 256);
    for item in items {
        to_le(item, &mut buf);
        if buf.len() >= PIECE {
            sink(&buf);
            buf.clear();
        }
    }
    if !buf.is_empty() {
        sink(&buf);
    }
}

/// Checks serialized `bytes` (header fields, kind, payload length and checksum, hash
/// algorithm) and returns the header, the payload and the hasher to rebuild the filter
/// with: `hasher` if given (it must match the stored seed or key check), else the one
/// restored from the stored seed. The caller still validates the kind's own fields.
///
/// # Errors
/// [`Error::Corrupt`] (including a different kind than `kind`),
/// [`Error::UnsupportedVersion`], or [`Error::HasherMismatch`] (another algorithm, seed or
/// key; or a keyed filter read without its hasher).
pub fn decode<S: PersistentHasher>(
    bytes: &[u8],
    kind: FilterKind,
    hasher: Option<S>,
) -> Result<(Header, &[u8], S)> {
    open(bytes, kind, hasher, true)
}

/// Reads exactly one serialized filter (header and the payload it announces) from
/// `reader` into a buffer for [`decode`], growing it only as data arrives.
///
/// # Errors
/// [`Error::Io`] if the reader fails or ends early, [`Error::Corrupt`] for a truncated
/// payload or a bad header.
pub fn read_serialized<R: std::io::Read>(reader: R) -> Result<Vec<u8>> {
    read_all(reader)
}

/// The checksum of a filter whose encoded header (at least 64 bytes; the checksum field is
/// ignored) is `header` and whose payload is `payload`: XXH64 (seed 0) of the header with
/// the checksum field zeroed, then the payload (version 3); of the payload alone for
/// versions 1 and 2.
fn checksum(version: u16, header: &[u8], payload: &[u8]) -> u64 {
    let mut h = header_sum(version, header);
    h.update(payload);
    h.digest()
}

/// The checksum state before the payload: from version 3 on it covers the header with
/// its checksum field zeroed; before, only the payload.
fn header_sum(version: u16, header: &[u8]) -> xxhash_rust::xxh64::Xxh64 {
    let mut h = xxhash_rust::xxh64::Xxh64::new(0);
    if version >= 3 {
        h.update(&header[..48]);
        h.update(&[0u8; 8]);
        h.update(&header[56..HEADER_LEN]);
    }
    h
}

/// Rewrites the checksum field of serialized `bytes` to match their header and payload,
/// by the rule of the version they announce (for tools and tests that edit a header or
/// payload on purpose; the payload-length field is left as it is). Does nothing to input
/// shorter than a header.
pub fn reseal(bytes: &mut [u8]) {
    if bytes.len() < HEADER_LEN {
        return;
    }
    let (header, payload) = bytes.split_at(HEADER_LEN);
    let sum = checksum(u16_at(header, 4), header, payload);
    bytes[48..56].copy_from_slice(&sum.to_le_bytes());
}

/// Header + payload into one buffer, with the payload length and checksum filled in.
pub(crate) fn seal(mut header: Header, payload: Vec<u8>) -> Vec<u8> {
    header.version = FORMAT_VERSION;
    header.payload_len = payload.len() as u64;
    header.checksum = 0;
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(&header.to_bytes());
    out.extend_from_slice(&payload);
    reseal(&mut out);
    out
}

/// Reads one serialized filter from `reader`: the header, then exactly the payload it
/// announces, growing the buffer only as data arrives (a hostile length cannot force a
/// large allocation).
pub(crate) fn read_all<R: std::io::Read>(mut reader: R) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut head = [0u8; HEADER_LEN];
    reader.read_exact(&mut head).map_err(Error::from)?;
    let header = Header::parse(&head)?;
    let mut out = head.to_vec();
    let got = (&mut reader)
        .take(header.payload_len)
        .read_to_end(&mut out)
        .map_err(Error::from)?;
    if got as u64 != header.payload_len {
        return Err(corrupt("truncated payload"));
    }
    Ok(out)
}
