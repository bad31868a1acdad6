//! [`BloomierFilter`]: a static function from keys to small values.

use std::hash::{BuildHasher, Hash};

use bloomforge_core::builder::DEFAULT_FALSE_POS;
use bloomforge_core::format::{self, u32_at, u64_at, FilterKind, PersistentHasher};
use bloomforge_core::hash::DefaultHasher;

use rayon::prelude::*;

use crate::peel::{self, CellStore, Derivation, Layout, DERIVATION, LAYOUT_BYTES};
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
    /// The words' bytes, little-endian (the words' own memory on a little-endian
    /// machine).
    #[cfg(target_endian = "little")]
    #[inline(always)]
    fn bytes(&self) -> &[u8] {
        // SAFETY: the slice covers exactly the memory of `self.words` (len * 8 bytes,
        // initialised, no padding in u64), u8 needs no alignment, and it borrows `self`,
        // so the words are neither freed nor written while it lives.
        unsafe {
            std::slice::from_raw_parts(self.words.as_ptr().cast::<u8>(), self.words.len() * 8)
        }
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

/// Widest cell [`packed_get_le`] reads: its offset in the first byte (up to 7 bits) and the
/// cell fit in one 8-byte read.
const LE_READ_MAX_WIDTH: u32 = 56;

/// Cell `c` of `width`-bit cells (`width <= LE_READ_MAX_WIDTH`) from the little-endian
/// bytes of the packed words, reading only the cache line(s) the cell occupies.
///
/// # Safety
/// `bytes.len() >= (c + 1) * width / 8 + 8` (see [`read8`]): every read below ends inside
/// `bytes` then. No alignment is needed (all reads are unaligned).
///
/// Cells of 8, 16 or 32 bits lie at multiples of their size: one read of that size (never
/// across a line in an owned filter, whose words are aligned; a view's bytes may sit
/// anywhere, so every read is an unaligned one). Other widths: one unaligned 8-byte read at the cell's first byte and
/// a shift, with no branch on where the cell starts. (`packed_get` always reads the word
/// after the cell's first one when the cell does not start a word, touching the next
/// cache line for cells near a line's end; a `get` of 8-bit values with 8-bit
/// fingerprints cost 1.4-1.9x our `BinaryFuseFilter<u16>`'s `contains` over the same
/// bytes.) The reads stay inside the words: the cell's first byte is below
/// `cells * width / 8`, and the packing keeps one spare word after the last cell.
#[inline(always)]
unsafe fn packed_get_le(width: u32, c: usize, bytes: &[u8]) -> u64 {
    // SAFETY: the caller's promise is each reader's.
    unsafe {
        match width {
            8 => read8(c, bytes),
            16 => read16(c, bytes),
            32 => read32(c, bytes),
            _ => read_unaligned(width, c, bytes),
        }
    }
}

// The cell readers of a lookup read without bounds checks: three checks a lookup cost
// about 0.5-1 ns of a 6-7 ns `get` (1M keys; their compares and branches keep fewer
// lookups' cache misses in flight). Their callers pass the cells of a layout's
// positions, which are below `Layout::cells()`, over bytes that hold that many packed
// cells and a spare word (`Packed::new` for a build; a decoded filter, a view and a
// view's owned copy hold the words `parse` checked); that makes every read below end
// inside `bytes`. Debug builds check it.

/// Cell `c` of 8-bit cells.
///
/// # Safety
/// `bytes.len() >= (c + 1) * width / 8 + 8` for the cells' `width` (8 here): the same
/// promise for every reader, which a cell below `Layout::cells()` meets over bytes that
/// hold the layout's packed cells and a spare word. This reader reads one byte at `c`
/// without a bounds check, so it needs `c < bytes.len()`.
#[inline(always)]
unsafe fn read8(c: usize, bytes: &[u8]) -> u64 {
    debug_assert!(c < bytes.len());
    // SAFETY: in bounds by the caller's promise.
    u64::from(unsafe { *bytes.get_unchecked(c) })
}

/// Cell `c` of 16-bit cells.
///
/// # Safety
/// As [`read8`], with `width` 16: this reader makes one unaligned 2-byte read at byte
/// `2 c`, so it needs `2 c + 2 <= bytes.len()`.
#[inline(always)]
unsafe fn read16(c: usize, bytes: &[u8]) -> u64 {
    debug_assert!(2 * c + 2 <= bytes.len());
    // SAFETY: in bounds by the caller's promise; an unaligned read of plain bytes.
    u64::from(u16::from_le(unsafe {
        bytes.as_ptr().add(2 * c).cast::<u16>().read_unaligned()
    }))
}

/// Cell `c` of 32-bit cells.
///
/// # Safety
/// As [`read8`], with `width` 32: this reader makes one unaligned 4-byte read at byte
/// `4 c`, so it needs `4 c + 4 <= bytes.len()`.
#[inline(always)]
unsafe fn read32(c: usize, bytes: &[u8]) -> u64 {
    debug_assert!(4 * c + 4 <= bytes.len());
    // SAFETY: as `read16`.
    u64::from(u32::from_le(unsafe {
        bytes.as_ptr().add(4 * c).cast::<u32>().read_unaligned()
    }))
}

/// Cell `c` of `width`-bit cells (`width <= LE_READ_MAX_WIDTH`) by one 8-byte read at its
/// first byte.
///
/// # Safety
/// As [`read8`], with the cells' `width`: this reader makes one unaligned 8-byte read at
/// byte `c * width / 8`, so it needs `c * width / 8 + 8 <= bytes.len()`. (`width` above
/// [`LE_READ_MAX_WIDTH`] gives a wrong value, not an out-of-bounds read.)
#[inline(always)]
unsafe fn read_unaligned(width: u32, c: usize, bytes: &[u8]) -> u64 {
    let bit = c * width as usize;
    let at = bit / 8;
    debug_assert!(at + 8 <= bytes.len());
    // SAFETY: as `read16`.
    let w = u64::from_le(unsafe { bytes.as_ptr().add(at).cast::<u64>().read_unaligned() });
    (w >> (bit % 8)) & ((1u64 << width) - 1)
}

/// [`answer`] over the little-endian bytes of packed cells of `value_bits +
/// fingerprint_bits <= LE_READ_MAX_WIDTH` bits, the cell width dispatched once a lookup
/// (not once a cell), so each width's three reads inline into a short straight line: a
/// lookup's few instructions let the processor keep more lookups' cache misses in flight.
///
/// `cell.width()` is at most [`LE_READ_MAX_WIDTH`] (wider cells need `packed_get`).
///
/// # Safety
/// `bytes` holds `layout.cells()` packed cells of `cell.width()` bits followed by a spare
/// 8-byte word (see [`read8`]): the cells read are `layout`'s positions of `hash`, all
/// below `layout.cells()`, and are read without bounds checks.
#[inline(always)]
unsafe fn answer_le(layout: &Layout, cell: CellBits, hash: u64, bytes: &[u8]) -> Option<u32> {
    // Each read: `answer` reads only `layout`'s positions of `hash`, cells of `layout`,
    // which `bytes` holds by the caller's promise.
    match cell.width() {
        // SAFETY: each read as said above.
        8 => answer(layout, cell, hash, |c| unsafe { read8(c, bytes) }),
        // SAFETY: as above.
        16 => answer(layout, cell, hash, |c| unsafe { read16(c, bytes) }),
        // SAFETY: as above.
        32 => answer(layout, cell, hash, |c| unsafe { read32(c, bytes) }),
        // SAFETY: as above.
        w => answer(layout, cell, hash, |c| unsafe {
            read_unaligned(w, c, bytes)
        }),
    }
}

/// What a cell holds: a value of `value_bits` under a fingerprint of `fingerprint_bits`
/// bits, and how the fingerprint is derived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct CellBits {
    value_bits: u32,
    fingerprint_bits: u32,
    derivation: Derivation,
}

impl CellBits {
    #[inline(always)]
    fn width(self) -> u32 {
        self.value_bits + self.fingerprint_bits
    }
}

/// What a key's three cells say: its value if the fingerprint bits match.
#[inline(always)]
fn answer(layout: &Layout, bits: CellBits, hash: u64, cell: impl Fn(usize) -> u64) -> Option<u32> {
    let [a, b, c] = layout.positions(hash);
    let x = cell(a) ^ cell(b) ^ cell(c);
    // fingerprint_bits <= 32 (0 gives an empty mask), value_bits in 1..=32.
    let fmask = (1u64 << bits.fingerprint_bits) - 1;
    let want = bits.derivation.fingerprint(hash) & fmask;
    (x >> bits.value_bits == want).then(|| (x & ((1u64 << bits.value_bits) - 1)) as u32)
}

/// `get_batch` (documented by the caller's doc comment) and `get_hash_batch` of the owned
/// filter and the view, over each one's private `batch`.
macro_rules! batch_lookups {
    ($(#[$doc:meta])*) => {
        $(#[$doc])*
        pub fn get_batch<Q: Hash>(
            &self,
            keys: &[Q],
            out: &mut [Option<u32>],
        ) -> Result<(), RetrievalError> {
            self.batch(keys, out, |k| self.hasher.hash_one(k))
        }

        /// [`get_batch`](Self::get_batch) for hashes from [`hasher`](Self::hasher).
        ///
        /// # Errors
        /// As [`get_batch`](Self::get_batch).
        pub fn get_hash_batch(
            &self,
            hashes: &[u64],
            out: &mut [Option<u32>],
        ) -> Result<(), RetrievalError> {
            self.batch(hashes, out, |&h| h)
        }
    };
}

/// The batch lookup of the owned filter and the view: the cell width dispatched once for
/// the whole batch (8, 16 and 32-bit cells by one read of their size, other
/// widths up to 56 bits by one unaligned read, wider ones through `packed`), then
/// [`peel::lookup_batch`]. `base` is the cells' first byte (for the prefetches) and
/// `bytes` their little-endian bytes.
///
/// # Safety
/// On a little-endian target, `bytes` holds `layout.cells()` packed cells of
/// `bits.width()` bits followed by a spare 8-byte word (see [`read8`]): the cells read
/// are `layout`'s positions, read without bounds checks. `base` is only prefetched (any
/// address is allowed), and `packed` is a safe reader. On a big-endian target `bytes` is
/// not read and there is no precondition.
#[allow(clippy::too_many_arguments)]
unsafe fn get_batch_in<K>(
    layout: &Layout,
    attempt: u32,
    bits: CellBits,
    keys: &[K],
    out: &mut [Option<u32>],
    hash: impl Fn(&K) -> u64,
    base: *const u8,
    #[cfg_attr(not(target_endian = "little"), allow(unused_variables))] bytes: &[u8],
    packed: impl Fn(usize) -> u64,
) -> Result<(), RetrievalError> {
    peel::check_batch(keys.len(), out.len())?;
    // One monomorphic loop per cell reader.
    macro_rules! go {
        ($cell:expr) => {
            lookup_cells(layout, attempt, bits, keys, out, &hash, base, $cell)
        };
    }
    // Each read: `lookup_cells` reads only cells of `layout`'s positions, which `bytes`
    // holds by the caller's promise.
    #[cfg(target_endian = "little")]
    match bits.width() {
        // SAFETY: each read as said above.
        8 => go!(|c| unsafe { read8(c, bytes) }),
        // SAFETY: as above.
        16 => go!(|c| unsafe { read16(c, bytes) }),
        // SAFETY: as above.
        32 => go!(|c| unsafe { read32(c, bytes) }),
        // SAFETY: as above.
        w if w <= LE_READ_MAX_WIDTH => go!(|c| unsafe { read_unaligned(w, c, bytes) }),
        _ => go!(packed),
    }
    #[cfg(not(target_endian = "little"))]
    go!(packed);
    Ok(())
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn lookup_cells<K>(
    layout: &Layout,
    attempt: u32,
    bits: CellBits,
    keys: &[K],
    out: &mut [Option<u32>],
    hash: &impl Fn(&K) -> u64,
    base: *const u8,
    cell: impl Fn(usize) -> u64,
) {
    let width = bits.width() as usize;
    peel::lookup_batch(
        keys,
        out,
        |k| peel::retry_hash(hash(k), attempt),
        |h| peel::fetch_cells(layout, h, |c| base.wrapping_add(c * width / 8)),
        |h| answer(layout, bits, h, &cell),
        peel::lookup_ahead(layout.cells() * width / 8),
    );
}

/// The fields of a serialized Bloomier filter, validated; the cells' words as bytes.
struct Parsed<'a, S> {
    hasher: S,
    attempt: u32,
    layout: Layout,
    items: u64,
    bits: CellBits,
    words: &'a [u8],
}

fn parse<S: PersistentHasher>(
    bytes: &[u8],
    hasher: Option<S>,
) -> Result<Parsed<'_, S>, RetrievalError> {
    let corrupt = |reason| RetrievalError::Core(bloomforge_core::Error::Corrupt { reason });
    let (header, payload, hasher) = format::decode::<S>(bytes, FilterKind::Bloomier, hasher)?;
    let (layout, attempt) = Layout::read(payload)?;
    if payload.len() < LAYOUT_BYTES + 8 {
        return Err(corrupt("payload too short"));
    }
    let value_bits = u32_at(payload, LAYOUT_BYTES);
    // The fingerprint's width in bits 0..8, its derivation in bits 8..16 (bits 16..32
    // must be 0: any other value is an unknown derivation).
    let fingerprint_word = u32_at(payload, LAYOUT_BYTES + 4);
    let fingerprint_bits = fingerprint_word & 0xff;
    if !(1..=32).contains(&value_bits) || fingerprint_bits > 32 {
        return Err(corrupt("value or fingerprint width out of range"));
    }
    let derivation = Derivation::from_code(fingerprint_word >> 8)
        .ok_or(corrupt("unknown fingerprint derivation"))?;
    let bits = CellBits {
        value_bits,
        fingerprint_bits,
        derivation,
    };
    let width = bits.width();
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
        attempt,
        layout,
        items: header.items,
        bits,
        words: body,
    })
}

impl CellStore for Packed {
    #[inline(always)]
    fn get(&self, c: usize) -> u64 {
        #[cfg(target_endian = "little")]
        let fits = c
            .checked_add(1)
            .and_then(|n| n.checked_mul(self.width as usize))
            .is_some_and(|bits| bits / 8 + 8 <= self.words.len() * 8);
        if self.width <= LE_READ_MAX_WIDTH && fits {
            // SAFETY: the bytes' length was just checked.
            return unsafe { packed_get_le(self.width, c, self.bytes()) };
        }
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
/// Static: built once from all its pairs, so it has no `new(expected_items, false_pos)`
/// (see `docs/conventions.md`, "Static filters"): [`build`](Self::build), the
/// [builder](Self::builder) (`.value_bits(v)`, `.fingerprint_bits(f)` or
/// `.false_pos(p)`, `.seed(s)` or `.hasher(h)`, `.threads(t)`, then `.build(&pairs)`),
/// or `collect()`. Keys are hashed with `S` (core's [`DefaultHasher`] by default, a
/// [`KeyedHasher`](bloomforge_core::KeyedHasher) for untrusted keys); a construction
/// that does not peel retries with the hashes remixed by the retry's index, stored with
/// the filter.
///
/// ```
/// use bloomforge_retrieval::BloomierFilter;
/// let pairs = [(1u64, 10u32), (2, 20), (3, 30)];
/// let f = BloomierFilter::build(&pairs, 8, 16)?;
/// assert_eq!((f.get(&1u64), f.get(&3u64)), (Some(10), Some(30)));
/// let g = BloomierFilter::builder().value_bits(8).fingerprint_bits(16).build(&pairs)?;
/// assert_eq!(f.to_bytes(), g.to_bytes());
/// let h: BloomierFilter = pairs.into_iter().collect();
/// assert_eq!(h.get(&2u64), Some(20));
/// # Ok::<(), bloomforge_retrieval::RetrievalError>(())
/// ```
#[derive(Clone, Debug)]
pub struct BloomierFilter<S = DefaultHasher> {
    // The hasher given (kept built, so `get` does not redo a seed's mixing per key).
    hasher: S,
    // The retry whose remix of the hasher's hashes peeled (`peel::retry_hash`).
    attempt: u32,
    layout: Layout,
    items: u64,
    bits: CellBits,
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

/// A hasher's constructor from a seed, and the seed given: what lets a construction
/// retry a 64-bit collision of two keys with a derived seed (the default hasher only).
type Reseed<S> = (fn(u64) -> S, u64);

/// Why a pass over the hashed pairs stopped.
enum Stop {
    /// Distinct keys with one hash and different values: another hasher seed is needed.
    Collision(u32, u32),
    /// An error to return.
    Error(RetrievalError),
}

/// The distinct hashes of `pairs` under `hash`, sorted, and their values. A key given
/// twice with the same value counts once; with two values it is an error. Distinct keys
/// with equal hashes and equal values are kept once (both get their value); with
/// different values they stop the pass.
fn hashed_pairs<K: Hash + Eq + Sync>(
    pairs: &[(K, u32)],
    hash: impl Fn(&K) -> u64 + Sync + Send,
) -> Result<(Vec<u64>, Vec<u32>), Stop> {
    let hash_pair = |(i, (k, _)): (usize, &(K, u32))| (hash(k), i as u32);
    let mut entries: Vec<(u64, u32)>;
    if pairs.len() < peel::PARALLEL_MIN {
        entries = pairs.iter().enumerate().map(hash_pair).collect();
        entries.sort_unstable();
    } else {
        entries = pairs.par_iter().enumerate().map(hash_pair).collect();
        entries.par_sort_unstable();
    }
    let mut hashes = Vec::with_capacity(entries.len());
    let mut values = Vec::with_capacity(entries.len());
    let mut run_start = 0;
    for j in 0..entries.len() {
        let (h, i) = entries[j];
        if j > 0 && entries[j - 1].0 == h {
            let (key, value) = &pairs[i as usize];
            for &(_, e) in &entries[run_start..j] {
                let (other, ov) = &pairs[e as usize];
                if ov == value {
                    continue;
                }
                if other == key {
                    return Err(Stop::Error(RetrievalError::DuplicateKey {
                        first: *ov,
                        second: *value,
                    }));
                }
                return Err(Stop::Collision(*ov, *value));
            }
            continue;
        }
        run_start = j;
        hashes.push(h);
        values.push(pairs[i as usize].1);
    }
    Ok((hashes, values))
}

impl<S: BuildHasher + Sync> BloomierFilter<S> {
    /// The construction: `reseed` (the default hasher's seed) lets a 64-bit collision of
    /// two keys retry with a derived seed; without it (a hasher given) that is an error.
    fn construct<K: Hash + Eq + Sync>(
        pairs: &[(K, u32)],
        value_bits: u32,
        fingerprint_bits: u32,
        mut hasher: S,
        reseed: Option<Reseed<S>>,
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
        let (mut attempt, mut reseeds) = (0u32, 0u32);
        for _ in 0..peel::MAX_ATTEMPTS {
            let hash = |k: &K| peel::retry_hash(hasher.hash_one(k), attempt);
            let (hashes, values) = match hashed_pairs(pairs, hash) {
                Ok(hv) => hv,
                Err(Stop::Error(e)) => return Err(e),
                Err(Stop::Collision(first, second)) => match reseed {
                    Some((with_seed, seed)) => {
                        reseeds += 1;
                        hasher = with_seed(peel::attempt_seed(seed, reseeds));
                        attempt = 0;
                        continue;
                    }
                    None => return Err(RetrievalError::HashCollision { first, second }),
                },
            };
            let items = hashes.len();
            let layout = Layout::fuse(items);
            let Some(peeled) = peel::peel(&layout, hashes, values, 64) else {
                attempt += 1;
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
                |h, v| ((DERIVATION.fingerprint(h) & fmask) << value_bits) | u64::from(v),
                &mut cells,
            );
            return Ok(BloomierFilter {
                hasher,
                attempt,
                layout,
                items: items as u64,
                bits: CellBits {
                    value_bits,
                    fingerprint_bits,
                    derivation: DERIVATION,
                },
                cells,
            });
        }
        Err(RetrievalError::ConstructionFailed {
            attempts: peel::MAX_ATTEMPTS,
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
    /// 0..=32) with the default hasher seeded `seed`: the same as
    /// `Self::builder().value_bits(v).fingerprint_bits(f).seed(seed).build(pairs)`. A key
    /// given twice with the same value counts once. Two distinct keys whose 64-bit hashes
    /// collide (with different values) make it retry with a derived seed, which the
    /// filter then keeps.
    ///
    /// # Errors
    /// [`RetrievalError::InvalidParameter`] for widths out of range, a value that does not
    /// fit `value_bits`, or 2^32 keys or more; [`RetrievalError::DuplicateKey`] for a key
    /// given with two values; [`RetrievalError::ConstructionFailed`] if 100 retries
    /// all fail to peel; [`RetrievalError::Core`] if the table cannot be allocated.
    pub fn build_with_seed<K: Hash + Eq + Sync>(
        pairs: &[(K, u32)],
        value_bits: u32,
        fingerprint_bits: u32,
        seed: u64,
    ) -> Result<Self, RetrievalError> {
        Self::builder()
            .value_bits(value_bits)
            .fingerprint_bits(fingerprint_bits)
            .seed(seed)
            .build(pairs)
    }

    /// The builder: `.value_bits(v)`, `.fingerprint_bits(f)` or `.false_pos(p)`,
    /// `.seed(s)` or `.hasher(h)`, `.threads(t)`, then `.build(&pairs)`. Defaults: the
    /// width of the largest value, the fingerprint bits of [`DEFAULT_FALSE_POS`],
    /// [`DefaultHasher`] with seed 0, rayon's global pool.
    pub fn builder() -> BloomierFilterBuilder {
        BloomierFilterBuilder {
            value_bits: None,
            fingerprint_bits: None,
            false_pos: DEFAULT_FALSE_POS,
            hasher: DefaultHasher::with_seed(0),
            reseed: Some((DefaultHasher::with_seed, 0)),
            threads: None,
        }
    }

    /// Reads a filter written by [`to_bytes`](Self::to_bytes) with an unkeyed hasher.
    ///
    /// # Errors
    /// [`RetrievalError::Core`] with [`bloomforge_core::Error::Corrupt`] for corrupt,
    /// truncated or foreign bytes; [`bloomforge_core::Error::HasherMismatch`] for a keyed
    /// filter (read it with [`from_bytes_with_hasher`](Self::from_bytes_with_hasher)).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, RetrievalError> {
        Self::decode(bytes, None)
    }

    /// Reads one serialized filter from `reader` (see [`from_bytes`](Self::from_bytes)).
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), or [`bloomforge_core::Error::Io`].
    pub fn read_from<R: std::io::Read>(reader: R) -> Result<Self, RetrievalError> {
        Self::from_bytes(&format::read_serialized(reader)?)
    }
}

impl<S: BuildHasher> BloomierFilter<S> {
    /// The value of `key`: exact for keys of the set; `None` for other keys except with
    /// probability 2^-fingerprint_bits (then an arbitrary value).
    #[inline]
    pub fn get<Q: Hash + ?Sized>(&self, key: &Q) -> Option<u32> {
        self.get_hash(self.hasher.hash_one(key))
    }

    /// [`get`](Self::get) for a hash from [`hasher`](Self::hasher).
    #[inline(always)]
    pub fn get_hash(&self, hash: u64) -> Option<u32> {
        let hash = peel::retry_hash(hash, self.attempt);
        #[cfg(target_endian = "little")]
        if self.bits.width() <= LE_READ_MAX_WIDTH {
            // SAFETY: `cells` holds the packed cells of `layout` and a spare word
            // (`Packed::new`, or the words `parse` checked).
            return unsafe { answer_le(&self.layout, self.bits, hash, self.cells.bytes()) };
        }
        answer(&self.layout, self.bits, hash, |c| self.cells.get(c))
    }

    batch_lookups! {
    /// [`get`](Self::get) of every key into `out`, pipelined: keys hashed a block at a
    /// time, the cells of keys a few places ahead prefetched so their cache misses
    /// overlap, and the cell width dispatched once for the batch.
    ///
    /// ```
    /// use bloomforge_retrieval::BloomierFilter;
    /// let pairs: Vec<(u64, u32)> = (0..1000).map(|k| (k, (k % 7) as u32)).collect();
    /// let f = BloomierFilter::build(&pairs, 3, 8)?;
    /// let keys: Vec<u64> = (0..1000).collect();
    /// let mut out = vec![None; keys.len()];
    /// f.get_batch(&keys, &mut out)?;
    /// assert!(keys.iter().zip(&out).all(|(&k, &v)| v == Some((k % 7) as u32)));
    /// # Ok::<(), bloomforge_retrieval::RetrievalError>(())
    /// ```
    ///
    /// # Errors
    /// [`bloomforge_core::Error::LengthMismatch`] (as [`RetrievalError::Core`]) unless
    /// `out` is as long as `keys`; `out` is then untouched.
    }

    #[inline(always)]
    fn batch<K>(
        &self,
        keys: &[K],
        out: &mut [Option<u32>],
        hash: impl Fn(&K) -> u64,
    ) -> Result<(), RetrievalError> {
        #[cfg(target_endian = "little")]
        let bytes = self.cells.bytes();
        #[cfg(not(target_endian = "little"))]
        let bytes: &[u8] = &[];
        // SAFETY: as in `get_hash` (on a big-endian machine `bytes` is never read).
        unsafe {
            get_batch_in(
                &self.layout,
                self.attempt,
                self.bits,
                keys,
                out,
                hash,
                self.cells.words.as_ptr().cast(),
                bytes,
                |c| self.cells.get(c),
            )
        }
    }

    /// The hasher keys are hashed with (the one the filter was built with).
    pub fn hasher(&self) -> &S {
        &self.hasher
    }

    /// Distinct keys stored.
    pub fn len(&self) -> u64 {
        self.items
    }

    /// Whether no key is stored.
    pub fn is_empty(&self) -> bool {
        self.items == 0
    }

    /// Bits per value.
    pub fn value_bits(&self) -> u32 {
        self.bits.value_bits
    }

    /// Bits of fingerprint per cell.
    pub fn fingerprint_bits(&self) -> u32 {
        self.bits.fingerprint_bits
    }

    /// Number of cells.
    pub fn cells(&self) -> usize {
        self.layout.cells()
    }

    /// Bytes the table occupies.
    pub fn memory_bytes(&self) -> u64 {
        self.cells.words.len() as u64 * 8
    }

    /// Probability that a key outside the set gets `Some(_)`: 2^-fingerprint_bits.
    pub fn expected_false_pos(&self) -> f64 {
        (-f64::from(self.bits.fingerprint_bits)).exp2()
    }
}

impl<S: PersistentHasher> BloomierFilter<S> {
    fn head(&self) -> Vec<u8> {
        let mut head = Vec::with_capacity(LAYOUT_BYTES + 8);
        self.layout.write(self.attempt, &mut head);
        let b = self.bits;
        head.extend_from_slice(&b.value_bits.to_le_bytes());
        let fingerprint_word = b.fingerprint_bits | (b.derivation as u32) << 8;
        head.extend_from_slice(&fingerprint_word.to_le_bytes());
        head
    }

    /// Writes the filter in core's format ([`FilterKind::Bloomier`]; the hasher's seed,
    /// or for a keyed hasher only a check of its key, in the header).
    ///
    /// # Errors
    /// [`RetrievalError::Core`] with [`bloomforge_core::Error::Io`] if writing fails.
    pub fn write_to<W: std::io::Write>(&self, w: W) -> Result<(), RetrievalError> {
        let head = self.head();
        let len = head.len() as u64 + self.cells.words.len() as u64 * 8;
        format::encode_to(
            w,
            FilterKind::Bloomier,
            &self.hasher,
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

    /// Reads a filter with the caller's hasher (needed for keyed hashing, whose key is
    /// never stored).
    ///
    /// # Errors
    /// As [`from_bytes`](BloomierFilter::from_bytes);
    /// [`bloomforge_core::Error::HasherMismatch`] when `hasher` is not the one the filter
    /// was written with (another algorithm, seed or key).
    pub fn from_bytes_with_hasher(bytes: &[u8], hasher: S) -> Result<Self, RetrievalError> {
        Self::decode(bytes, Some(hasher))
    }

    fn decode(bytes: &[u8], hasher: Option<S>) -> Result<Self, RetrievalError> {
        let p = parse(bytes, hasher)?;
        let words = p
            .words
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        Ok(BloomierFilter {
            hasher: p.hasher,
            attempt: p.attempt,
            layout: p.layout,
            items: p.items,
            bits: p.bits,
            cells: Packed {
                width: p.bits.width(),
                words,
            },
        })
    }
}

/// Builder of [`BloomierFilter`]: the value and fingerprint widths, the hasher
/// (`.seed(s)` for the default one, or `.hasher(h)`) and the thread count; the pairs go
/// to [`build`](Self::build), which validates everything.
#[must_use = "a builder does nothing until finished with .build(&pairs)"]
#[derive(Clone, Debug)]
pub struct BloomierFilterBuilder<S = DefaultHasher> {
    value_bits: Option<u32>,
    fingerprint_bits: Option<u32>,
    false_pos: f64,
    hasher: S,
    // The default hasher's constructor and seed: lets a 64-bit collision retry.
    reseed: Option<Reseed<S>>,
    threads: Option<usize>,
}

impl BloomierFilterBuilder {
    /// Seeds the default hasher (default 0).
    pub fn seed(self, seed: u64) -> Self {
        Self {
            hasher: DefaultHasher::with_seed(seed),
            reseed: Some((DefaultHasher::with_seed, seed)),
            ..self
        }
    }
}

impl<S> BloomierFilterBuilder<S> {
    /// Bits per value, 1 to 32 (default: the width of the largest value given, at
    /// least 1).
    pub fn value_bits(self, bits: u32) -> Self {
        Self {
            value_bits: Some(bits),
            ..self
        }
    }

    /// Bits of fingerprint per cell, 0 to 32: a key outside the set gets `Some(_)` with
    /// probability 2^-bits. Overrides [`false_pos`](Self::false_pos).
    pub fn fingerprint_bits(self, bits: u32) -> Self {
        Self {
            fingerprint_bits: Some(bits),
            ..self
        }
    }

    /// The probability, in (0, 1), that a key outside the set gets `Some(_)` (default
    /// [`DEFAULT_FALSE_POS`]): the fingerprint gets the fewest bits that reach it,
    /// `ceil(log2(1 / p))` (7 for 0.01), at most 32.
    pub fn false_pos(self, p: f64) -> Self {
        Self {
            false_pos: p,
            ..self
        }
    }

    /// Uses `hasher` instead of the default (e.g.
    /// [`KeyedHasher`](bloomforge_core::KeyedHasher) for untrusted keys). Two keys whose
    /// hashes collide then cannot be resolved by another seed:
    /// [`RetrievalError::HashCollision`] (about `n^2 / 2^65` for `n` keys).
    pub fn hasher<S2: BuildHasher>(self, hasher: S2) -> BloomierFilterBuilder<S2> {
        BloomierFilterBuilder {
            value_bits: self.value_bits,
            fingerprint_bits: self.fingerprint_bits,
            false_pos: self.false_pos,
            hasher,
            reseed: None,
            threads: self.threads,
        }
    }

    /// Builds on a pool of `threads` threads instead of rayon's global pool (the result
    /// is the same; at least 1, checked in [`build`](Self::build)).
    pub fn threads(self, threads: usize) -> Self {
        Self {
            threads: Some(threads),
            ..self
        }
    }

    /// Builds the function of `pairs`. A key given twice with the same value counts
    /// once.
    ///
    /// # Errors
    /// [`RetrievalError::InvalidParameter`] for widths out of range, a value that does not
    /// fit `value_bits`, `threads(0)` or 2^32 pairs or more;
    /// [`bloomforge_core::Error::InvalidFalsePositiveRate`] for `false_pos` outside
    /// (0, 1) and [`bloomforge_core::Error::UnreachableFalsePositiveRate`] below 2^-32
    /// (as [`RetrievalError::Core`]); [`RetrievalError::DuplicateKey`] for a key given
    /// with two values; [`RetrievalError::HashCollision`] (a given hasher only);
    /// [`RetrievalError::ThreadPool`]; [`RetrievalError::ConstructionFailed`] if 100
    /// retries all fail to peel; [`RetrievalError::Core`] if the table cannot be
    /// allocated.
    pub fn build<K: Hash + Eq + Sync>(
        self,
        pairs: &[(K, u32)],
    ) -> Result<BloomierFilter<S>, RetrievalError>
    where
        S: BuildHasher + Send + Sync,
    {
        let value_bits = match self.value_bits {
            Some(v) => v,
            None => {
                let max = pairs.iter().map(|&(_, v)| v).max().unwrap_or(0);
                (32 - max.leading_zeros()).max(1)
            }
        };
        let fingerprint_bits = match self.fingerprint_bits {
            Some(f) => f,
            None => fingerprint_bits_for(self.false_pos)?,
        };
        let (hasher, reseed) = (self.hasher, self.reseed);
        peel::on_threads(self.threads, move || {
            BloomierFilter::construct(pairs, value_bits, fingerprint_bits, hasher, reseed)
        })
    }
}

/// The fewest fingerprint bits whose false-positive rate 2^-bits is at most `p`.
fn fingerprint_bits_for(p: f64) -> Result<u32, RetrievalError> {
    if !(p > 0.0 && p < 1.0) {
        return Err(bloomforge_core::Error::InvalidFalsePositiveRate(p).into());
    }
    let bits = (-p.log2()).ceil();
    if bits > 32.0 {
        return Err(bloomforge_core::Error::UnreachableFalsePositiveRate {
            requested: p,
            best: (-32f64).exp2(),
        }
        .into());
    }
    Ok(bits as u32)
}

/// Collects `(key, value)` pairs as a `HashMap` would (a repeated key keeps its last
/// value) and builds `BloomierFilter::builder().build(&pairs)`: values as wide as the
/// largest, a fingerprint for [`DEFAULT_FALSE_POS`] (7 bits), the default hasher with
/// seed 0.
///
/// # Panics
/// If construction fails: the table cannot be allocated, or 2^32 keys or more. Use the
/// builder to get these as errors.
impl<K: Hash + Eq + Sync> FromIterator<(K, u32)> for BloomierFilter {
    fn from_iter<I: IntoIterator<Item = (K, u32)>>(iter: I) -> Self {
        let map: std::collections::HashMap<K, u32> = iter.into_iter().collect();
        let pairs: Vec<(K, u32)> = map.into_iter().collect();
        Self::builder()
            .build(&pairs)
            .unwrap_or_else(|e| panic!("cannot build from the collected pairs: {e}"))
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
pub struct BloomierFilterView<'a, S = DefaultHasher> {
    hasher: S,
    attempt: u32,
    layout: Layout,
    items: u64,
    bits: CellBits,
    words: &'a [u8],
}

impl<'a> BloomierFilterView<'a> {
    /// Borrows bytes written by [`BloomierFilter::to_bytes`] with an unkeyed hasher,
    /// checking every header field, the layout, the widths and the payload checksum.
    ///
    /// # Errors
    /// [`RetrievalError::Core`] with [`bloomforge_core::Error::Corrupt`] for corrupt,
    /// truncated or foreign bytes; [`bloomforge_core::Error::HasherMismatch`] for a keyed
    /// filter.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, RetrievalError> {
        Self::open(bytes, None)
    }
}

impl<'a, S: PersistentHasher> BloomierFilterView<'a, S> {
    /// Borrows serialized bytes with the caller's hasher (a keyed filter's key).
    ///
    /// # Errors
    /// As [`BloomierFilter::from_bytes_with_hasher`].
    pub fn from_bytes_with_hasher(bytes: &'a [u8], hasher: S) -> Result<Self, RetrievalError> {
        Self::open(bytes, Some(hasher))
    }

    fn open(bytes: &'a [u8], hasher: Option<S>) -> Result<Self, RetrievalError> {
        let p = parse(bytes, hasher)?;
        Ok(Self {
            hasher: p.hasher,
            attempt: p.attempt,
            layout: p.layout,
            items: p.items,
            bits: p.bits,
            words: p.words,
        })
    }
}

impl<S: BuildHasher> BloomierFilterView<'_, S> {
    /// The value of `key`, as [`BloomierFilter::get`].
    #[inline]
    pub fn get<Q: Hash + ?Sized>(&self, key: &Q) -> Option<u32> {
        self.get_hash(self.hasher.hash_one(key))
    }

    /// [`get`](Self::get) for a hash from [`hasher`](Self::hasher).
    #[inline(always)]
    pub fn get_hash(&self, hash: u64) -> Option<u32> {
        let hash = peel::retry_hash(hash, self.attempt);
        let width = self.bits.width();
        if width <= LE_READ_MAX_WIDTH {
            // SAFETY: `parse` checked that `words` holds the packed cells of `layout`
            // and a spare word.
            return unsafe { answer_le(&self.layout, self.bits, hash, self.words) };
        }
        answer(&self.layout, self.bits, hash, |c| {
            packed_get(width, c, |w| u64_at(self.words, 8 * w))
        })
    }

    batch_lookups! {
    /// [`get`](Self::get) of every key into `out`, pipelined as
    /// [`BloomierFilter::get_batch`].
    ///
    /// # Errors
    /// [`bloomforge_core::Error::LengthMismatch`] (as [`RetrievalError::Core`]) unless
    /// `out` is as long as `keys`; `out` is then untouched.
    }

    #[inline(always)]
    fn batch<K>(
        &self,
        keys: &[K],
        out: &mut [Option<u32>],
        hash: impl Fn(&K) -> u64,
    ) -> Result<(), RetrievalError> {
        let width = self.bits.width();
        // SAFETY: as in `get_hash`.
        unsafe {
            get_batch_in(
                &self.layout,
                self.attempt,
                self.bits,
                keys,
                out,
                hash,
                self.words.as_ptr(),
                self.words,
                |c| packed_get(width, c, |w| u64_at(self.words, 8 * w)),
            )
        }
    }

    /// The hasher keys are hashed with.
    pub fn hasher(&self) -> &S {
        &self.hasher
    }

    /// Distinct keys stored.
    pub fn len(&self) -> u64 {
        self.items
    }

    /// Whether no key is stored.
    pub fn is_empty(&self) -> bool {
        self.items == 0
    }

    /// Bits per value.
    pub fn value_bits(&self) -> u32 {
        self.bits.value_bits
    }

    /// Bits of fingerprint per cell.
    pub fn fingerprint_bits(&self) -> u32 {
        self.bits.fingerprint_bits
    }

    /// Probability that a key outside the set gets `Some(_)`: 2^-fingerprint_bits.
    pub fn expected_false_pos(&self) -> f64 {
        (-f64::from(self.bits.fingerprint_bits)).exp2()
    }

    /// An owned copy of the filter.
    pub fn to_filter(&self) -> BloomierFilter<S>
    where
        S: Clone,
    {
        BloomierFilter {
            hasher: self.hasher.clone(),
            attempt: self.attempt,
            layout: self.layout,
            items: self.items,
            bits: self.bits,
            cells: Packed {
                width: self.bits.width(),
                words: (0..self.words.len() / 8)
                    .map(|w| u64_at(self.words, 8 * w))
                    .collect(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bloomforge_core::hash::mix64;

    /// The one-read path answers as the two-word path for every width it serves, on
    /// every cell of a table filled with arbitrary values (the last cells included).
    #[test]
    fn le_read_equals_two_word_read() {
        for width in 1..=LE_READ_MAX_WIDTH {
            for cells in [1usize, 2, 7, 64, 257] {
                let mut p = Packed::new(width, cells).unwrap();
                for c in 0..cells {
                    p.set(c, mix64((u64::from(width) << 32) | c as u64));
                }
                let bytes: Vec<u8> = p.words.iter().flat_map(|w| w.to_le_bytes()).collect();
                for c in 0..cells {
                    let two = packed_get(width, c, |w| p.words[w]);
                    // SAFETY: `bytes` are the packed words of `cells` cells and a spare word.
                    let le = unsafe { packed_get_le(width, c, &bytes) };
                    assert_eq!(le, two, "{width} {c}");
                    assert_eq!(p.get(c), two, "{width} {c}");
                    assert_eq!(two, mix64((u64::from(width) << 32) | c as u64) & p.mask());
                }
            }
        }
    }

    /// Every width path of `get` (8, 16, 32, other <= 56, and the two-word path above)
    /// returns each member's value, owned and viewed, and agrees with the generic cell
    /// reads on non-members.
    #[test]
    fn get_answers_alike_on_every_width_path() {
        for (v, f) in [
            (8, 0),
            (3, 5),
            (8, 8),
            (5, 7),
            (16, 16),
            (20, 30),
            (32, 24),
            (32, 32),
        ] {
            let pairs: Vec<(u64, u32)> = (0..3000u64)
                .map(|k| (k, (mix64(k) as u32) & ((1u64 << v) - 1) as u32))
                .collect();
            let filter = BloomierFilter::build(&pairs, v, f).unwrap();
            let bytes = filter.to_bytes();
            let view = BloomierFilterView::from_bytes(&bytes).unwrap();
            for &(k, value) in &pairs {
                assert_eq!(filter.get(&k), Some(value), "{v} {f}");
                assert_eq!(view.get(&k), Some(value), "{v} {f}");
            }
            for k in 3000..6000u64 {
                let h = peel::retry_hash(filter.hasher().hash_one(k), filter.attempt);
                let generic = answer(&filter.layout, filter.bits, h, |c| {
                    packed_get(v + f, c, |w| filter.cells.words[w])
                });
                assert_eq!(filter.get(&k), generic, "{v} {f}");
                assert_eq!(view.get(&k), generic, "{v} {f}");
            }
        }
    }
}
