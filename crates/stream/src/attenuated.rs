//! The attenuated Bloom filter (Rhea and Kubiatowicz, INFOCOM 2002): what is reachable
//! through each neighbour of a network node, level by level.

use crate::error::{corrupt, Result, StreamError};
use crate::io::{le_u32, le_u64, SinkWriter};
use bloomforge_core::format::{self, FilterKind, PersistentHasher, HEADER_LEN};
use bloomforge_core::{BlockedBloomFilter, DefaultHasher};
use core::hash::{BuildHasher, Hash};

/// Depth `D` of a filter made by [`AttenuatedBloomFilter::new`].
pub const DEFAULT_DEPTH: usize = 3;
/// Largest depth accepted.
pub const MAX_DEPTH: usize = 64;

const PARAMS_LEN: usize = 16;

#[derive(Clone, Debug)]
struct Edge<S> {
    neighbour: u64,
    levels: Vec<BlockedBloomFilter<S>>,
}

/// One node's routing state: a core [`BlockedBloomFilter`] of the keys (documents) the
/// node holds, and for each neighbour an array of `D` filters, where level `i` (0-based)
/// holds what is reachable through that neighbour in `i + 1` hops. Level 0 of the array
/// for neighbour `v` is `v`'s own filter; level `i` is the union of `v`'s levels `i - 1`
/// over `v`'s other neighbours ([`merge_from_neighbour`](Self::merge_from_neighbour)), so
/// after `D` rounds of exchanges every node knows what lies within `D` hops.
/// [`route`](Self::route) sends a query to the neighbour with the lowest matching level.
///
/// All filters of a network share one shape (bits, probes, hasher): build every node with
/// the same `expected_items` (keys per level filter), `false_pos`, depth and hasher.
///
/// ```
/// use bloomforge_stream::AttenuatedBloomFilter;
///
/// // A path a - b - c; c holds "doc".
/// let node = |id| AttenuatedBloomFilter::builder().node_id(id).expected_items(100).build();
/// let (mut a, mut b, mut c) = (node(1)?, node(2)?, node(3)?);
/// c.insert(&"doc");
/// a.add_neighbour(2)?;
/// b.add_neighbour(1)?;
/// b.add_neighbour(3)?;
/// c.add_neighbour(2)?;
/// b.merge_from_neighbour(&c)?; // b: "doc" 1 hop through c
/// a.merge_from_neighbour(&b)?; // a: "doc" 2 hops through b
/// assert_eq!(a.route(&"doc"), Some((2, 2)));
/// assert_eq!(b.route(&"doc"), Some((3, 1)));
/// assert!(c.contains_local(&"doc"));
/// # Ok::<(), bloomforge_stream::StreamError>(())
/// ```
#[derive(Clone, Debug)]
pub struct AttenuatedBloomFilter<S = DefaultHasher> {
    id: u64,
    depth: usize,
    local: BlockedBloomFilter<S>,
    edges: Vec<Edge<S>>,
}

/// Builder of an [`AttenuatedBloomFilter`]:
/// `AttenuatedBloomFilter::builder().node_id(id).expected_items(n).false_pos(p).depth(3).build()?`.
#[must_use = "a builder does nothing until finished with .build()"]
#[derive(Clone, Debug)]
pub struct AttenuatedBloomFilterBuilder<S = DefaultHasher> {
    id: u64,
    items: Option<u64>,
    false_pos: f64,
    depth: usize,
    hasher: S,
}

impl Default for AttenuatedBloomFilterBuilder {
    fn default() -> Self {
        Self {
            id: 0,
            items: None,
            false_pos: bloomforge_core::builder::DEFAULT_FALSE_POS,
            depth: DEFAULT_DEPTH,
            hasher: DefaultHasher::default(),
        }
    }
}

impl AttenuatedBloomFilterBuilder {
    /// Seeds the default hasher (every node of a network must use the same).
    pub fn seed(self, seed: u64) -> Self {
        Self {
            hasher: DefaultHasher::with_seed(seed),
            ..self
        }
    }
}

impl<S: BuildHasher + Clone> AttenuatedBloomFilterBuilder<S> {
    /// This node's id (default 0), the id its neighbours know it by.
    pub fn node_id(self, id: u64) -> Self {
        Self { id, ..self }
    }

    /// Keys each level filter is sized for (required): the most keys any level holds,
    /// about the keys of a node times `(degree - 1)^(D - 1)` at the deepest level.
    pub fn expected_items(self, items: u64) -> Self {
        Self {
            items: Some(items),
            ..self
        }
    }

    /// The false-positive rate of each level filter at `expected_items`, in (0, 1)
    /// (default 0.01).
    pub fn false_pos(self, fp: f64) -> Self {
        Self {
            false_pos: fp,
            ..self
        }
    }

    /// The depth `D` in 1..=64 (default 3): levels per neighbour, the farthest hop count
    /// the node knows about.
    pub fn depth(self, depth: usize) -> Self {
        Self { depth, ..self }
    }

    /// Uses `hasher` instead of the default.
    pub fn hasher<S2: BuildHasher + Clone>(self, hasher: S2) -> AttenuatedBloomFilterBuilder<S2> {
        AttenuatedBloomFilterBuilder {
            id: self.id,
            items: self.items,
            false_pos: self.false_pos,
            depth: self.depth,
            hasher,
        }
    }

    /// Builds a node with no neighbours and no keys.
    ///
    /// # Errors
    /// [`StreamError::InvalidParameter`] for a depth outside 1..=64; core's errors for the
    /// item count, the rate and the allocation.
    pub fn build(self) -> Result<AttenuatedBloomFilter<S>> {
        if !(1..=MAX_DEPTH).contains(&self.depth) {
            return Err(StreamError::InvalidParameter {
                name: "depth",
                value: self.depth as f64,
                reason: "must be in 1..=64",
            });
        }
        let local = BlockedBloomFilter::with_false_pos(self.false_pos)
            .hasher(self.hasher)
            .expected_items(self.items.unwrap_or(0))?;
        Ok(AttenuatedBloomFilter {
            id: self.id,
            depth: self.depth,
            local,
            edges: Vec::new(),
        })
    }
}

impl AttenuatedBloomFilter {
    /// Node 0 of depth 3 whose level filters hold `expected_items` keys at rate
    /// `false_pos`, default hasher: the same as
    /// `Self::builder().expected_items(n).false_pos(p).build()` (use the builder to set
    /// the node's id and the depth).
    ///
    /// # Errors
    /// As [`AttenuatedBloomFilterBuilder::build`].
    pub fn new(expected_items: u64, false_pos: f64) -> Result<Self> {
        Self::builder()
            .expected_items(expected_items)
            .false_pos(false_pos)
            .build()
    }

    /// The builder (node id, depth, sizing, hasher).
    pub fn builder() -> AttenuatedBloomFilterBuilder {
        AttenuatedBloomFilterBuilder::default()
    }

    /// Reads a node serialized with an unkeyed hasher.
    ///
    /// # Errors
    /// [`bloomforge_core::Error::Corrupt`] (in [`StreamError::Core`]) for truncated,
    /// corrupted or hostile bytes, [`bloomforge_core::Error::HasherMismatch`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::decode(bytes, None)
    }

    /// Reads one serialized node from `reader` (nothing past it).
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), or [`bloomforge_core::Error::Io`].
    pub fn read_from<R: std::io::Read>(reader: R) -> Result<Self> {
        Self::from_bytes(&format::read_serialized(reader)?)
    }
}

impl<S: BuildHasher + Clone> AttenuatedBloomFilter<S> {
    /// This node's id.
    pub fn node_id(&self) -> u64 {
        self.id
    }

    /// The depth `D`.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The neighbours' ids, in the order they were added (the order [`route`](Self::route)
    /// breaks ties in).
    pub fn neighbours(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        self.edges.iter().map(|e| e.neighbour)
    }

    /// The filter of the keys this node holds.
    pub fn local(&self) -> &BlockedBloomFilter<S> {
        &self.local
    }

    /// Level `level` (0-based: `level + 1` hops) of the array for `neighbour`.
    pub fn level(&self, neighbour: u64, level: usize) -> Option<&BlockedBloomFilter<S>> {
        self.edge(neighbour).and_then(|e| e.levels.get(level))
    }

    fn edge(&self, neighbour: u64) -> Option<&Edge<S>> {
        self.edges.iter().find(|e| e.neighbour == neighbour)
    }

    /// Adds a neighbour with empty levels (nothing is known through it until
    /// [`merge_from_neighbour`](Self::merge_from_neighbour)); adding a known one does
    /// nothing.
    ///
    /// # Errors
    /// [`StreamError::InvalidParameter`] for the node's own id.
    pub fn add_neighbour(&mut self, neighbour: u64) -> Result<()> {
        if neighbour == self.id {
            return Err(StreamError::InvalidParameter {
                name: "neighbour",
                value: neighbour as f64,
                reason: "a node is not its own neighbour",
            });
        }
        if self.edge(neighbour).is_none() {
            let mut empty = self.local.clone();
            empty.clear();
            self.edges.push(Edge {
                neighbour,
                levels: vec![empty; self.depth],
            });
        }
        Ok(())
    }

    /// Inserts a key this node holds; `true` if it may already have been there. Its
    /// neighbours see it after their next
    /// [`merge_from_neighbour`](Self::merge_from_neighbour) from this node.
    pub fn insert<T: Hash + ?Sized>(&mut self, key: &T) -> bool {
        self.local.insert(key)
    }

    /// Whether this node may hold `key`.
    pub fn contains_local<T: Hash + ?Sized>(&self, key: &T) -> bool {
        self.local.contains(key)
    }

    /// Where to send a query for `key`: the neighbour whose array matches at the lowest
    /// level, and that level's hop count (`1..=D`); among neighbours matching at the same
    /// level, the first added. `None` when no level of any neighbour matches (the key is
    /// not within `D` hops, up to false positives). The node's own keys are not
    /// consulted: check [`contains_local`](Self::contains_local) first.
    pub fn route<T: Hash + ?Sized>(&self, key: &T) -> Option<(u64, usize)> {
        self.route_hash(self.local.hasher().hash_one(key))
    }

    /// [`route`](Self::route) by a precomputed hash.
    pub fn route_hash(&self, hash: u64) -> Option<(u64, usize)> {
        (0..self.depth).find_map(|level| {
            self.edges
                .iter()
                .find(|e| e.levels[level].contains_hash(hash))
                .map(|e| (e.neighbour, level + 1))
        })
    }

    /// Rebuilds the array for `neighbour` from that node's state: level 0 becomes its
    /// local filter, level `i` the union of its levels `i - 1` over its neighbours other
    /// than this node (a query never bounces straight back). The levels are replaced, not
    /// added to, so keys the neighbour no longer reaches disappear. `D` rounds in which
    /// every node merges from each neighbour propagate everything `D` hops.
    ///
    /// # Errors
    /// [`StreamError::UnknownNeighbour`] unless [`add_neighbour`](Self::add_neighbour)
    /// added it; [`StreamError::Incompatible`] if its depth differs, core's
    /// [`IncompatibleFilters`](bloomforge_core::Error::IncompatibleFilters) if its filters'
    /// shapes (bits, probes, hasher) differ. Nothing changes then.
    pub fn merge_from_neighbour(&mut self, neighbour: &AttenuatedBloomFilter<S>) -> Result<()> {
        let at = self
            .edges
            .iter()
            .position(|e| e.neighbour == neighbour.id)
            .ok_or(StreamError::UnknownNeighbour(neighbour.id))?;
        if neighbour.depth != self.depth {
            return Err(StreamError::Incompatible {
                parameter: "depth",
                left: self.depth.to_string(),
                right: neighbour.depth.to_string(),
            });
        }
        let (mine, theirs) = (self.local.shape(), neighbour.local.shape());
        if mine != theirs {
            return Err(bloomforge_core::Error::IncompatibleFilters {
                left: mine,
                right: theirs,
            }
            .into());
        }
        let mut levels = Vec::with_capacity(self.depth);
        levels.push(neighbour.local.clone());
        for level in 1..self.depth {
            let mut acc = self.local.clone();
            acc.clear();
            for e in neighbour.edges.iter().filter(|e| e.neighbour != self.id) {
                // Same shapes: the neighbour's filters were all cloned from its local one.
                acc.union(&e.levels[level - 1])?;
            }
            levels.push(acc);
        }
        self.edges[at].levels = levels;
        Ok(())
    }

    /// For each level, the chance that a key held nowhere matches some neighbour's
    /// array there: `1 - Π_neighbours (1 - f)`, with `f` each filter's rate from its fill.
    pub fn false_pos_by_level(&self) -> Vec<f64> {
        (0..self.depth)
            .map(|level| {
                1.0 - self
                    .edges
                    .iter()
                    .map(|e| 1.0 - e.levels[level].expected_false_pos())
                    .product::<f64>()
            })
            .collect()
    }

    /// Estimated number of distinct keys this node holds (its local filter's
    /// [`estimated_len`](BlockedBloomFilter::estimated_len), from the fill). There is no
    /// `len()`: the local filter is a plain Bloom filter, which cannot tell a repeated key
    /// or a false positive from a new key. What the neighbours' levels reach is not
    /// counted (see [`false_pos_by_level`](Self::false_pos_by_level) for them).
    pub fn estimated_len(&self) -> f64 {
        self.local.estimated_len()
    }

    /// Whether this node holds no key (its local filter has no bit set;
    /// `estimated_len() == 0`). Its neighbours' levels may still route queries onwards.
    pub fn is_empty(&self) -> bool {
        self.local.is_empty()
    }

    /// Bytes the filters' bit arrays occupy (the local one and every level).
    pub fn memory_bytes(&self) -> u64 {
        (1 + self.edges.len() as u64 * self.depth as u64) * (self.local.num_bits() / 8)
    }
}

impl<S: PersistentHasher + Clone> AttenuatedBloomFilter<S> {
    /// Serializes the node in the format of [`bloomforge_core::format`] (kind
    /// [`FilterKind::Attenuated`]): its id, depth and neighbour count, its local filter,
    /// then per neighbour its id and its `D` level filters, each filter in core's own
    /// serialized form.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        // Writing into a `Vec` cannot fail.
        let _ = self.write_to(&mut out);
        out
    }

    /// Writes the bytes of [`to_bytes`](Self::to_bytes) to `writer`, streamed.
    ///
    /// # Errors
    /// [`bloomforge_core::Error::Io`] if the writer fails.
    pub fn write_to<W: std::io::Write>(&self, writer: W) -> Result<()> {
        let one = HEADER_LEN as u64 + self.local.num_bits() / 8;
        let filters = 1 + self.edges.len() as u64 * self.depth as u64;
        let len = PARAMS_LEN as u64 + 8 + filters * one + self.edges.len() as u64 * 8;
        let mut head = Vec::with_capacity(PARAMS_LEN + 8);
        head.extend_from_slice(&self.id.to_le_bytes());
        head.extend_from_slice(&(self.depth as u32).to_le_bytes());
        head.extend_from_slice(&(self.edges.len() as u32).to_le_bytes());
        head.extend_from_slice(&one.to_le_bytes());
        format::encode_to(
            writer,
            FilterKind::Attenuated,
            self.local.hasher(),
            self.local.num_hashes(),
            self.local.num_bits(),
            self.edges.len() as u64,
            len,
            |sink| {
                sink(&head);
                let _ = self.local.write_to(SinkWriter(&mut *sink));
                for e in &self.edges {
                    sink(&e.neighbour.to_le_bytes());
                    for l in &e.levels {
                        let _ = l.write_to(SinkWriter(&mut *sink));
                    }
                }
            },
        )?;
        Ok(())
    }

    /// Reads a node with the caller's hasher.
    ///
    /// # Errors
    /// As [`from_bytes`](AttenuatedBloomFilter::from_bytes).
    pub fn from_bytes_with_hasher(bytes: &[u8], hasher: S) -> Result<Self> {
        Self::decode(bytes, Some(hasher))
    }

    fn decode(bytes: &[u8], hasher: Option<S>) -> Result<Self> {
        let (_, payload, hasher) = format::decode(bytes, FilterKind::Attenuated, hasher)?;
        if payload.len() < PARAMS_LEN + 8 {
            return Err(corrupt(
                "attenuated filter: payload shorter than its parameters",
            ));
        }
        let id = le_u64(payload, 0);
        let depth = le_u32(payload, 8) as usize;
        let edges = le_u32(payload, 12) as u64;
        let one = le_u64(payload, 16);
        if !(1..=MAX_DEPTH).contains(&depth) || one <= HEADER_LEN as u64 {
            return Err(corrupt(
                "attenuated filter: depth or filter size out of range",
            ));
        }
        let rest = (payload.len() - PARAMS_LEN - 8) as u64;
        // Every product checked: `one` comes from the bytes (hostile sizes overflow).
        let need = (depth as u64)
            .checked_mul(one)
            .and_then(|levels| levels.checked_add(8))
            .and_then(|per_edge| edges.checked_mul(per_edge))
            .and_then(|x| x.checked_add(one));
        if need != Some(rest) {
            return Err(corrupt("attenuated filter: payload length does not match"));
        }
        let one = one as usize;
        let mut at = PARAMS_LEN + 8;
        let filter = |at: &mut usize| {
            let f = BlockedBloomFilter::from_bytes_with_hasher(
                &payload[*at..*at + one],
                hasher.clone(),
            );
            *at += one;
            f
        };
        let local = filter(&mut at)?;
        let mut out = Self {
            id,
            depth,
            local,
            edges: Vec::new(),
        };
        for _ in 0..edges {
            let neighbour = le_u64(payload, at);
            at += 8;
            let levels = (0..depth)
                .map(|_| filter(&mut at))
                .collect::<bloomforge_core::Result<Vec<_>>>()?;
            if levels.iter().any(|l| l.shape() != out.local.shape())
                || neighbour == id
                || out.edge(neighbour).is_some()
            {
                return Err(corrupt("attenuated filter: inconsistent neighbour array"));
            }
            out.edges.push(Edge { neighbour, levels });
        }
        Ok(out)
    }
}

/// Equal when the ids, depths, local filters and neighbour arrays (in order) are equal.
impl<S: BuildHasher> PartialEq for AttenuatedBloomFilter<S> {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && self.depth == other.depth
            && self.local == other.local
            && self.edges.len() == other.edges.len()
            && self
                .edges
                .iter()
                .zip(&other.edges)
                .all(|(a, b)| a.neighbour == b.neighbour && a.levels == b.levels)
    }
}

/// Inserts keys this node holds.
impl<T: Hash, S: BuildHasher + Clone> Extend<T> for AttenuatedBloomFilter<S> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        for key in iter {
            self.insert(&key);
        }
    }
}

/// Collects the keys of node 0, depth 3, level filters sized for their number at a 1 %
/// rate (the keys are buffered to count them).
impl<T: Hash> FromIterator<T> for AttenuatedBloomFilter {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let keys: Vec<T> = iter.into_iter().collect();
        let mut f = AttenuatedBloomFilter::new(keys.len().max(1) as u64, 0.01)
            .expect("a filter for keys that fit in memory");
        f.extend(keys);
        f
    }
}
