//! [`BloomierFilter`]: a static function from keys to small values.

use std::hash::{BuildHasher, Hash};

use bloomforge_core::format::{self, u32_at, u64_at, FilterKind};
use bloomforge_core::hash::DefaultHasher;

use rayon::prelude::*;

use crate::peel::{self, CellStore, Layout, LAYOUT_BYTES};
use crate::RetrievalError;

/// Cells of `width` bits packed into `u64` words (one spare word so that a read of two
/// words never runs off the end).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Packed {
    width: u32,
    words: Vec<u64>,
}

impl Packed {
    fn new(width: u32, cells: usize) -> Result<Self, RetrievalError> {
        let words = (cells as u64 * u64::from(width)).div_ceil(64) as usize + 1;
        Ok(Packed {
            width,
            words: peel::alloc(words, 0u64)?,
        })
    }
    #[inline(always)]
    fn mask(&self) -> u64 {
        if self.width == 64 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        }
    }
}

/// Cell `c` of `width`-bit cells packed into words read by `word`.
#[inline(always)]
fn packed_get(width: u32, c: usize, word: impl Fn(usize) -> u64) -> u64 {
    let bit = c * width as usize;
    let (w, off) = (bit / 64, bit % 64);
    let lo = word(w) >> off;
    let hi = if off == 0 {
        0
    } else {
        word(w + 1) << (64 - off)
    };
    let mask = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    (lo | hi) & mask
}

/// What a key's three cells say: its value if the fingerprint bits match.
#[inline(always)]
fn answer(
    layout: &Layout,
    value_bits: u32,
    fingerprint_bits: u32,
    hash: u64,
    cell: impl Fn(usize) -> u64,
) -> Option<u32> {
    let [a, b, c] = layout.positions(hash);
    let x = cell(a) ^ cell(b) ^ cell(c);
    let fmask = if fingerprint_bits == 0 {
        0
    } else {
        (1u64 << fingerprint_bits) - 1
    };
    let want = peel::fingerprint_hash(hash) & fmask;
    (x >> value_bits == want).then(|| (x & ((1u64 << value_bits) - 1)) as u32)
}

/// The fields of a serialized Bloomier filter, validated; the cells' words as bytes.
struct Parsed<'a> {
    hasher: DefaultHasher,
    layout: Layout,
    items: u64,
    value_bits: u32,
    fingerprint_bits: u32,
    words: &'a [u8],
}

fn parse(bytes: &[u8]) -> Result<Parsed<'_>, RetrievalError> {
    let corrupt = |reason| RetrievalError::Core(bloomforge_core::Error::Corrupt { reason });
    let (header, payload, hasher) =
        format::decode::<DefaultHasher>(bytes, FilterKind::Bloomier, None)?;
    let layout = Layout::read(payload)?;
    if payload.len() < LAYOUT_BYTES + 8 {
        return Err(corrupt("payload too short"));
    }
    let value_bits = u32_at(payload, LAYOUT_BYTES);
    let fingerprint_bits = u32_at(payload, LAYOUT_BYTES + 4);
    if !(1..=32).contains(&value_bits) || fingerprint_bits > 32 {
        return Err(corrupt("value or fingerprint width out of range"));
    }
    let width = value_bits + fingerprint_bits;
    let body = &payload[LAYOUT_BYTES + 8..];
    let words = (layout.cells() as u64 * u64::from(width)).div_ceil(64) + 1;
    if header.num_hashes != 3
        || body.len() as u64 != words * 8
        || header.num_bits != layout.cells() as u64 * u64::from(width)
    {
        return Err(corrupt("cell count or width does not match the layout"));
    }
    Ok(Parsed {
        hasher,
        layout,
        items: header.items,
        value_bits,
        fingerprint_bits,
        words: body,
    })
}

impl CellStore for Packed {
    #[inline(always)]
    fn get(&self, c: usize) -> u64 {
        packed_get(self.width, c, |w| self.words[w])
    }
    #[inline(always)]
    fn set(&mut self, c: usize, v: u64) {
        let mask = self.mask();
        let v = v & mask;
        let bit = c * self.width as usize;
        let (w, off) = (bit / 64, bit % 64);
        self.words[w] = (self.words[w] & !(mask << off)) | (v << off);
        if off != 0 && off + self.width as usize > 64 {
            let sh = 64 - off;
            self.words[w + 1] = (self.words[w + 1] & !(mask >> sh)) | (v >> sh);
        }
    }
}

/// A Bloomier filter (Chazelle et al. 2004) on the binary fuse layout: a static function
/// from a key set to `value_bits`-bit values, with `fingerprint_bits` bits of fingerprint
/// per cell so that a key outside the set answers `None` except with probability
/// 2^-fingerprint_bits.
///
/// Each of the ~1.13 n cells (more below a million keys) holds `fingerprint_bits +
/// value_bits` bits; a key's answer is the xor of its three cells, solved by peeling
/// (Graf & Lemire 2022's segments). `get` of a key of the set returns its value exactly.
/// With `fingerprint_bits == 0` it is a pure retrieval structure: every key gets
/// `Some(_)`, arbitrary for keys outside the set.
///
/// ```
/// use bloomforge_retrieval::BloomierFilter;
/// let f = BloomierFilter::build(&[(1u64, 10u32), (2, 20), (3, 30)], 8, 16)?;
/// assert_eq!((f.get(&1u64), f.get(&3u64)), (Some(10), Some(30)));
/// # Ok::<(), bloomforge_retrieval::RetrievalError>(())
/// ```
#[derive(Clone, Debug)]
pub struct BloomierFilter {
    // Kept built (not as a seed) so `get` does not redo foldhash's seed mixing per key.
    hasher: DefaultHasher,
    layout: Layout,
    items: u64,
    value_bits: u32,
    fingerprint_bits: u32,
    cells: Packed,
}

fn check_bits(name: &'static str, v: u32, lo: u32) -> Result<(), RetrievalError> {
    if (lo..=32).contains(&v) {
        Ok(())
    } else {
        Err(RetrievalError::InvalidParameter {
            name,
            value: u64::from(v),
            expected: if lo == 0 { "0 to 32" } else { "1 to 32" },
        })
    }
}

impl BloomierFilter {
    /// Builds the function of `pairs` with hasher seed 0 (see
    /// [`build_with_seed`](Self::build_with_seed)).
    ///
    /// # Errors
    /// As [`build_with_seed`](Self::build_with_seed).
    pub fn build<K: Hash + Eq + Sync>(
        pairs: &[(K, u32)],
        value_bits: u32,
        fingerprint_bits: u32,
    ) -> Result<Self, RetrievalError> {
        Self::build_with_seed(pairs, value_bits, fingerprint_bits, 0)
    }

    /// Builds the function of `pairs` (`value_bits` in 1..=32, `fingerprint_bits` in
    /// 0..=32). A key given twice with the same value counts once.
    ///
    /// # Errors
    /// [`RetrievalError::InvalidParameter`] for widths out of range, a value that does not
    /// fit `value_bits`, or 2^32 keys or more; [`RetrievalError::DuplicateKey`] for a key
    /// given with two values; [`RetrievalError::ConstructionFailed`] if 100 derived seeds
    /// all fail to peel; [`RetrievalError::Core`] if the table cannot be allocated.
    pub fn build_with_seed<K: Hash + Eq + Sync>(
        pairs: &[(K, u32)],
        value_bits: u32,
        fingerprint_bits: u32,
        seed: u64,
    ) -> Result<Self, RetrievalError> {
        check_bits("value_bits", value_bits, 1)?;
        check_bits("fingerprint_bits", fingerprint_bits, 0)?;
        if pairs.len() >= u32::MAX as usize {
            return Err(RetrievalError::InvalidParameter {
                name: "pairs",
                value: pairs.len() as u64,
                expected: "fewer than 2^32 pairs",
            });
        }
        let vmask = (1u64 << value_bits) - 1;
        if let Some(&(_, v)) = pairs.iter().find(|(_, v)| u64::from(*v) > vmask) {
            return Err(RetrievalError::InvalidParameter {
                name: "value",
                value: u64::from(v),
                expected: "a value below 2^value_bits",
            });
        }
        'attempts: for attempt in 0..peel::MAX_ATTEMPTS {
            let s = peel::attempt_seed(seed, attempt);
            let hasher = DefaultHasher::with_seed(s);
            let hash = |(i, (k, _)): (usize, &(K, u32))| (hasher.hash_one(k), i as u32);
            let mut entries: Vec<(u64, u32)>;
            if pairs.len() < peel::PARALLEL_MIN {
                entries = pairs.iter().enumerate().map(hash).collect();
                entries.sort_unstable();
            } else {
                entries = pairs.par_iter().enumerate().map(hash).collect();
                entries.par_sort_unstable();
            }
            // Equal hashes: the same key (same value: keep one; other value: an error) or
            // two keys that collide on 64 bits (another seed).
            let mut hashes = Vec::with_capacity(entries.len());
            let mut values = Vec::with_capacity(entries.len());
            let mut run_start = 0;
            for j in 0..entries.len() {
                let (h, i) = entries[j];
                if j > 0 && entries[j - 1].0 == h {
                    let (key, value) = &pairs[i as usize];
                    for &(_, e) in &entries[run_start..j] {
                        let (other, ov) = &pairs[e as usize];
                        if other != key {
                            continue 'attempts;
                        }
                        if ov != value {
                            return Err(RetrievalError::DuplicateKey {
                                first: *ov,
                                second: *value,
                            });
                        }
                    }
                    continue;
                }
                run_start = j;
                hashes.push(h);
                values.push(pairs[i as usize].1);
            }
            let items = hashes.len();
            let layout = Layout::fuse(items);
            let Some(peeled) = peel::peel(&layout, hashes, values, 64) else {
                continue;
            };
            let mut cells = Packed::new(value_bits + fingerprint_bits, layout.cells())?;
            let fmask = if fingerprint_bits == 0 {
                0
            } else {
                (1u64 << fingerprint_bits) - 1
            };
            peel::assign(
                &layout,
                &peeled,
                |h, v| ((peel::fingerprint_hash(h) & fmask) << value_bits) | u64::from(v),
                &mut cells,
            );
            return Ok(BloomierFilter {
                hasher,
                layout,
                items: items as u64,
                value_bits,
                fingerprint_bits,
                cells,
            });
        }
        Err(RetrievalError::ConstructionFailed {
            attempts: peel::MAX_ATTEMPTS,
        })
    }

    /// The value of `key`: exact for keys of the set; `None` for other keys except with
    /// probability 2^-fingerprint_bits (then an arbitrary value).
    #[inline]
    pub fn get<Q: Hash + ?Sized>(&self, key: &Q) -> Option<u32> {
        self.get_hash(self.hasher.hash_one(key))
    }

    /// [`get`](Self::get) for a hash from [`hasher`](Self::hasher).
    #[inline]
    pub fn get_hash(&self, hash: u64) -> Option<u32> {
        let (v, f) = (self.value_bits, self.fingerprint_bits);
        answer(&self.layout, v, f, hash, |c| self.cells.get(c))
    }

    /// The hasher keys are hashed with (its seed is the one that peeled).
    pub fn hasher(&self) -> DefaultHasher {
        self.hasher
    }

    /// Distinct keys stored.
    pub fn len(&self) -> usize {
        self.items as usize
    }

    /// Whether no key is stored.
    pub fn is_empty(&self) -> bool {
        self.items == 0
    }

    /// Bits per value.
    pub fn value_bits(&self) -> u32 {
        self.value_bits
    }

    /// Bits of fingerprint per cell.
    pub fn fingerprint_bits(&self) -> u32 {
        self.fingerprint_bits
    }

    /// Number of cells.
    pub fn cells(&self) -> usize {
        self.layout.cells()
    }

    /// Bytes the table occupies.
    pub fn memory_bytes(&self) -> usize {
        self.cells.words.len() * 8
    }

    /// Probability that a key outside the set gets `Some(_)`: 2^-fingerprint_bits.
    pub fn expected_false_pos(&self) -> f64 {
        (-f64::from(self.fingerprint_bits)).exp2()
    }

    fn head(&self) -> Vec<u8> {
        let mut head = Vec::with_capacity(LAYOUT_BYTES + 8);
        self.layout.write(&mut head);
        head.extend_from_slice(&self.value_bits.to_le_bytes());
        head.extend_from_slice(&self.fingerprint_bits.to_le_bytes());
        head
    }

    /// Writes the filter in core's format ([`FilterKind::Bloomier`]).
    ///
    /// # Errors
    /// [`RetrievalError::Core`] with [`bloomforge_core::Error::Io`] if writing fails.
    pub fn write_to<W: std::io::Write>(&self, w: W) -> Result<(), RetrievalError> {
        let head = self.head();
        let len = head.len() as u64 + self.cells.words.len() as u64 * 8;
        format::encode_to(
            w,
            FilterKind::Bloomier,
            &self.hasher(),
            3,
            self.layout.cells() as u64 * u64::from(self.cells.width),
            self.items,
            len,
            |sink| {
                sink(&head);
                format::stream_le(&self.cells.words, sink, |x, buf| {
                    buf.extend_from_slice(&x.to_le_bytes())
                });
            },
        )?;
        Ok(())
    }

    /// The filter in core's format.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_to(&mut out)
            .expect("writing to a Vec cannot fail");
        out
    }

    /// Reads a filter written by [`to_bytes`](Self::to_bytes).
    ///
    /// # Errors
    /// [`RetrievalError::Core`] with [`bloomforge_core::Error::Corrupt`] for corrupt,
    /// truncated or foreign bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, RetrievalError> {
        let p = parse(bytes)?;
        let words = p
            .words
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        Ok(BloomierFilter {
            hasher: p.hasher,
            layout: p.layout,
            items: p.items,
            value_bits: p.value_bits,
            fingerprint_bits: p.fingerprint_bits,
            cells: Packed {
                width: p.value_bits + p.fingerprint_bits,
                words,
            },
        })
    }
}

/// A zero-copy, read-only [`BloomierFilter`] over its serialized bytes.
///
/// The payload's packed cells are read in place (little-endian words, any alignment):
/// opening costs one checksum pass and no allocation. Answers exactly as the owned filter
/// the bytes came from.
///
/// ```
/// use bloomforge_retrieval::{BloomierFilter, BloomierFilterView};
/// let pairs: Vec<(u64, u32)> = (0..1000).map(|i| (i, (i * 3) as u32)).collect();
/// let owned = BloomierFilter::build(&pairs, 12, 8)?;
/// let bytes = owned.to_bytes();
/// let view = BloomierFilterView::from_bytes(&bytes)?;
/// assert_eq!(view.get(&42u64), Some(126));
/// assert_eq!(view.get(&5000u64), owned.get(&5000u64));
/// # Ok::<(), bloomforge_retrieval::RetrievalError>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct BloomierFilterView<'a> {
    hasher: DefaultHasher,
    layout: Layout,
    items: u64,
    value_bits: u32,
    fingerprint_bits: u32,
    words: &'a [u8],
}

impl<'a> BloomierFilterView<'a> {
    /// Borrows bytes written by [`BloomierFilter::to_bytes`], checking every header field,
    /// the layout, the widths and the payload checksum.
    ///
    /// # Errors
    /// [`RetrievalError::Core`] with [`bloomforge_core::Error::Corrupt`] for corrupt,
    /// truncated or foreign bytes.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, RetrievalError> {
        let p = parse(bytes)?;
        Ok(Self {
            hasher: p.hasher,
            layout: p.layout,
            items: p.items,
            value_bits: p.value_bits,
            fingerprint_bits: p.fingerprint_bits,
            words: p.words,
        })
    }

    /// The value of `key`, as [`BloomierFilter::get`].
    #[inline]
    pub fn get<Q: Hash + ?Sized>(&self, key: &Q) -> Option<u32> {
        self.get_hash(self.hasher.hash_one(key))
    }

    /// [`get`](Self::get) for a hash from [`hasher`](Self::hasher).
    #[inline]
    pub fn get_hash(&self, hash: u64) -> Option<u32> {
        let (v, f) = (self.value_bits, self.fingerprint_bits);
        answer(&self.layout, v, f, hash, |c| {
            packed_get(v + f, c, |w| u64_at(self.words, 8 * w))
        })
    }

    /// The hasher keys are hashed with.
    pub fn hasher(&self) -> DefaultHasher {
        self.hasher
    }

    /// Distinct keys stored.
    pub fn len(&self) -> usize {
        self.items as usize
    }

    /// Whether no key is stored.
    pub fn is_empty(&self) -> bool {
        self.items == 0
    }

    /// Bits per value.
    pub fn value_bits(&self) -> u32 {
        self.value_bits
    }

    /// Bits of fingerprint per cell.
    pub fn fingerprint_bits(&self) -> u32 {
        self.fingerprint_bits
    }

    /// Probability that a key outside the set gets `Some(_)`: 2^-fingerprint_bits.
    pub fn expected_false_pos(&self) -> f64 {
        (-f64::from(self.fingerprint_bits)).exp2()
    }

    /// An owned copy of the filter.
    pub fn to_filter(&self) -> BloomierFilter {
        BloomierFilter {
            hasher: self.hasher,
            layout: self.layout,
            items: self.items,
            value_bits: self.value_bits,
            fingerprint_bits: self.fingerprint_bits,
            cells: Packed {
                width: self.value_bits + self.fingerprint_bits,
                words: (0..self.words.len() / 8)
                    .map(|w| u64_at(self.words, 8 * w))
                    .collect(),
            },
        }
    }
}
