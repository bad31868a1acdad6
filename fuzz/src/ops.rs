//! Model-based fuzzing of the filter operations.
//!
//! A sequence of insert / contains / batch / union / intersect / clear operations runs on
//! a small filter (one replica per available SIMD backend, plus the atomic twin) and on a
//! `HashSet` model of what must be present. Checked after every step:
//! * no false negatives: every key (and raw hash) of the model is reported present;
//! * a key already in the model makes `insert` return `true`;
//! * batch answers equal single-call answers; a wrong-length output is an error and
//!   leaves the output untouched;
//! * every backend and the atomic twin hold bit-identical words to `Backend::Scalar`;
//! * incompatible union / intersect is an error and leaves the filter unchanged;
//! * serialization round-trips.

use arbitrary::Arbitrary;
use bloomforge_core::{
    AtomicBlockedBloomFilter, AtomicSplitBlockBloomFilter, AtomicStandardBloomFilter, Backend,
    BlockedBloomFilter, Error, SplitBlockBloomFilter, StandardBloomFilter,
};
use core::hash::BuildHasher;
use std::collections::HashSet;

/// The operations of one filter type the target exercises.
trait Subject: Clone + PartialEq + core::fmt::Debug + Sized {
    type Atomic;
    /// Whether `k` may vary (split-block filters always use 8 probes).
    const VARIABLE_K: bool;
    fn build(bits: u64, k: u32, seed: u64) -> Result<Self, Error>;
    fn set_backend(&mut self, b: Backend) -> Result<(), Error>;
    fn insert(&mut self, key: u64) -> bool;
    fn contains(&self, key: u64) -> bool;
    fn insert_hash(&mut self, h: u64) -> bool;
    fn contains_hash(&self, h: u64) -> bool;
    fn hash_of(&self, key: u64) -> u64;
    fn insert_batch(&mut self, keys: &[u64]);
    fn contains_batch(&self, keys: &[u64], out: &mut [bool]) -> Result<(), Error>;
    fn insert_hash_batch(&mut self, hashes: &[u64]);
    fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) -> Result<(), Error>;
    fn union(&mut self, other: &Self) -> Result<(), Error>;
    fn intersect(&mut self, other: &Self) -> Result<(), Error>;
    fn clear(&mut self);
    fn words(&self) -> Vec<u64>;
    fn num_bits(&self) -> u64;
    fn num_hashes(&self) -> u32;
    fn count_ones(&self) -> u64;
    fn expected_false_pos(&self) -> f64;
    fn estimated_len(&self) -> f64;
    fn round_trip(&self) -> Self;
    fn to_atomic(&self) -> Self::Atomic;
    fn a_insert(a: &Self::Atomic, key: u64) -> bool;
    fn a_contains(a: &Self::Atomic, key: u64) -> bool;
    fn a_insert_hash(a: &Self::Atomic, h: u64) -> bool;
    fn a_contains_hash(a: &Self::Atomic, h: u64) -> bool;
    fn a_insert_batch(a: &Self::Atomic, keys: &[u64]);
    fn a_snapshot(a: &Self::Atomic) -> Self;
}

macro_rules! block_subject {
    ($F:ident, $A:ident, $vk:expr) => {
        impl Subject for $F {
            type Atomic = $A;
            const VARIABLE_K: bool = $vk;
            fn build(bits: u64, k: u32, seed: u64) -> Result<Self, Error> {
                $F::with_num_bits(bits).seed(seed).hashes(k)
            }
            fn set_backend(&mut self, b: Backend) -> Result<(), Error> {
                $F::set_backend(self, b)
            }
            fn insert(&mut self, key: u64) -> bool {
                $F::insert(self, &key)
            }
            fn contains(&self, key: u64) -> bool {
                $F::contains(self, &key)
            }
            fn insert_hash(&mut self, h: u64) -> bool {
                $F::insert_hash(self, h)
            }
            fn contains_hash(&self, h: u64) -> bool {
                $F::contains_hash(self, h)
            }
            fn hash_of(&self, key: u64) -> u64 {
                self.hasher().hash_one(key)
            }
            fn insert_batch(&mut self, keys: &[u64]) {
                $F::insert_batch(self, keys)
            }
            fn contains_batch(&self, keys: &[u64], out: &mut [bool]) -> Result<(), Error> {
                $F::contains_batch(self, keys, out)
            }
            fn insert_hash_batch(&mut self, hashes: &[u64]) {
                $F::insert_hash_batch(self, hashes)
            }
            fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) -> Result<(), Error> {
                $F::contains_hash_batch(self, hashes, out)
            }
            fn union(&mut self, other: &Self) -> Result<(), Error> {
                $F::union(self, other)
            }
            fn intersect(&mut self, other: &Self) -> Result<(), Error> {
                $F::intersect(self, other)
            }
            fn clear(&mut self) {
                $F::clear(self)
            }
            fn words(&self) -> Vec<u64> {
                let bytes = self.to_bytes();
                bytes[64..]
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                    .collect()
            }
            fn num_bits(&self) -> u64 {
                $F::num_bits(self)
            }
            fn num_hashes(&self) -> u32 {
                $F::num_hashes(self)
            }
            fn count_ones(&self) -> u64 {
                $F::count_ones(self)
            }
            fn expected_false_pos(&self) -> f64 {
                $F::expected_false_pos(self)
            }
            fn estimated_len(&self) -> f64 {
                $F::estimated_len(self)
            }
            fn round_trip(&self) -> Self {
                $F::from_bytes(&self.to_bytes()).expect("own encoding must decode")
            }
            fn to_atomic(&self) -> $A {
                let mut a = $A::from(self.clone());
                // The atomic twin runs the fastest backend, compared against the replica.
                a.set_backend(Backend::detect())
                    .expect("detected backend is available");
                a
            }
            fn a_insert(a: &$A, key: u64) -> bool {
                a.insert(&key)
            }
            fn a_contains(a: &$A, key: u64) -> bool {
                a.contains(&key)
            }
            fn a_insert_hash(a: &$A, h: u64) -> bool {
                a.insert_hash(h)
            }
            fn a_contains_hash(a: &$A, h: u64) -> bool {
                a.contains_hash(h)
            }
            fn a_insert_batch(a: &$A, keys: &[u64]) {
                a.insert_batch(keys);
                let mut out = vec![false; keys.len()];
                a.contains_batch(keys, &mut out).expect("equal lengths");
                assert!(out.iter().all(|&b| b), "atomic batch false negative");
            }
            fn a_snapshot(a: &$A) -> Self {
                a.snapshot()
            }
        }
    };
}

block_subject!(BlockedBloomFilter, AtomicBlockedBloomFilter, true);
block_subject!(SplitBlockBloomFilter, AtomicSplitBlockBloomFilter, false);

impl Subject for StandardBloomFilter {
    type Atomic = AtomicStandardBloomFilter;
    const VARIABLE_K: bool = true;
    fn build(bits: u64, k: u32, seed: u64) -> Result<Self, Error> {
        StandardBloomFilter::with_num_bits(bits)
            .seed(seed)
            .hashes(k)
    }
    fn set_backend(&mut self, b: Backend) -> Result<(), Error> {
        // One implementation: the replicas for other backends are plain copies.
        let _ = b;
        Ok(())
    }
    fn insert(&mut self, key: u64) -> bool {
        StandardBloomFilter::insert(self, &key)
    }
    fn contains(&self, key: u64) -> bool {
        StandardBloomFilter::contains(self, &key)
    }
    fn insert_hash(&mut self, h: u64) -> bool {
        StandardBloomFilter::insert_hash(self, h)
    }
    fn contains_hash(&self, h: u64) -> bool {
        StandardBloomFilter::contains_hash(self, h)
    }
    fn hash_of(&self, key: u64) -> u64 {
        self.hasher().hash_one(key)
    }
    fn insert_batch(&mut self, keys: &[u64]) {
        StandardBloomFilter::insert_batch(self, keys)
    }
    fn contains_batch(&self, keys: &[u64], out: &mut [bool]) -> Result<(), Error> {
        StandardBloomFilter::contains_batch(self, keys, out)
    }
    fn insert_hash_batch(&mut self, hashes: &[u64]) {
        StandardBloomFilter::insert_hash_batch(self, hashes)
    }
    fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) -> Result<(), Error> {
        StandardBloomFilter::contains_hash_batch(self, hashes, out)
    }
    fn union(&mut self, other: &Self) -> Result<(), Error> {
        StandardBloomFilter::union(self, other)
    }
    fn intersect(&mut self, other: &Self) -> Result<(), Error> {
        StandardBloomFilter::intersect(self, other)
    }
    fn clear(&mut self) {
        StandardBloomFilter::clear(self)
    }
    fn words(&self) -> Vec<u64> {
        let w = self.as_words().to_vec();
        // Bits past num_bits are never set.
        let tail = self.num_bits() % 64;
        if tail != 0 {
            assert_eq!(w[w.len() - 1] >> tail, 0, "bit set past num_bits");
        }
        w
    }
    fn num_bits(&self) -> u64 {
        StandardBloomFilter::num_bits(self)
    }
    fn num_hashes(&self) -> u32 {
        StandardBloomFilter::num_hashes(self)
    }
    fn count_ones(&self) -> u64 {
        StandardBloomFilter::count_ones(self)
    }
    fn expected_false_pos(&self) -> f64 {
        StandardBloomFilter::expected_false_pos(self)
    }
    fn estimated_len(&self) -> f64 {
        StandardBloomFilter::estimated_len(self)
    }
    fn round_trip(&self) -> Self {
        StandardBloomFilter::from_bytes(&self.to_bytes()).expect("own encoding must decode")
    }
    fn to_atomic(&self) -> AtomicStandardBloomFilter {
        AtomicStandardBloomFilter::from(self.clone())
    }
    fn a_insert(a: &AtomicStandardBloomFilter, key: u64) -> bool {
        a.insert(&key)
    }
    fn a_contains(a: &AtomicStandardBloomFilter, key: u64) -> bool {
        a.contains(&key)
    }
    fn a_insert_hash(a: &AtomicStandardBloomFilter, h: u64) -> bool {
        a.insert_hash(h)
    }
    fn a_contains_hash(a: &AtomicStandardBloomFilter, h: u64) -> bool {
        a.contains_hash(h)
    }
    fn a_insert_batch(a: &AtomicStandardBloomFilter, keys: &[u64]) {
        for k in keys {
            a.insert(k);
        }
    }
    fn a_snapshot(a: &AtomicStandardBloomFilter) -> Self {
        a.snapshot()
    }
}

#[derive(Arbitrary, Debug)]
enum Shape {
    Blocked { bits: u16, k: u8 },
    Split { bits: u16 },
    Standard { bits: u16, k: u8 },
}

/// Keys of a batch: listed, or a run `start, start + step, ...` (cheap long batches that
/// exercise the prefetch pipeline's ring buffer).
#[derive(Arbitrary, Debug, Clone)]
enum Keys {
    List(Vec<u64>),
    Run { start: u64, step: u64, len: u8 },
}

impl Keys {
    fn get(&self) -> Vec<u64> {
        match self {
            Keys::List(v) => v[..v.len().min(300)].to_vec(),
            Keys::Run { start, step, len } => (0..u64::from(*len))
                .map(|i| start.wrapping_add(i.wrapping_mul(*step)))
                .collect(),
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Op {
    Insert(u64),
    Contains(u64),
    InsertHash(u64),
    ContainsHash(u64),
    InsertBatch(Keys),
    ContainsBatch(Keys),
    InsertHashBatch(Keys),
    ContainsHashBatch(Keys),
    /// Union with a filter of the same shape holding `keys` (and `hashes`).
    Union {
        keys: Keys,
        hashes: Keys,
    },
    Intersect {
        keys: Keys,
        hashes: Keys,
    },
    /// Union / intersect with a filter of another seed, size or k: must fail, unchanged.
    Mismatched {
        seed_delta: u8,
        bits_delta: u8,
        k_delta: u8,
        intersect: bool,
    },
    /// Batch call with an output of the wrong length.
    WrongLength {
        keys: Keys,
        extra: bool,
    },
    Clear,
    RoundTrip,
}

#[derive(Arbitrary, Debug)]
struct Input {
    shape: Shape,
    seed: u64,
    ops: Vec<Op>,
}

/// One fuzz case.
fn fuzz_one(input: Input) {
    match input.shape {
        Shape::Blocked { bits, k } => {
            let bits = u64::from(bits % 4096) + 1;
            run::<BlockedBloomFilter>(bits, u32::from(k % 64) + 1, input.seed, &input.ops)
        }
        Shape::Split { bits } => {
            run::<SplitBlockBloomFilter>(u64::from(bits % 4096) + 1, 8, input.seed, &input.ops)
        }
        Shape::Standard { bits, k } => {
            let bits = u64::from(bits % 4096) + 1;
            run::<StandardBloomFilter>(bits, u32::from(k % 64) + 1, input.seed, &input.ops)
        }
    }
}

struct State<F: Subject> {
    /// Replica 0 runs `Backend::Scalar`; the others every other available backend.
    replicas: Vec<(Backend, F)>,
    atomic: F::Atomic,
    keys: HashSet<u64>,
    hashes: HashSet<u64>,
    bits: u64,
    k: u32,
    seed: u64,
}

impl<F: Subject> State<F> {
    fn scalar(&self) -> &F {
        &self.replicas[0].1
    }

    /// Every replica gives the same answer; returns it.
    fn agree(&self, what: &str, f: impl Fn(&F) -> bool) -> bool {
        let first = f(self.scalar());
        for (b, r) in &self.replicas[1..] {
            assert_eq!(f(r), first, "{what}: backend {b:?} disagrees with scalar");
        }
        first
    }

    fn insert(&mut self, key: u64) {
        let was_in = self.keys.contains(&key);
        let answers: Vec<bool> = self
            .replicas
            .iter_mut()
            .map(|(_, r)| r.insert(key))
            .collect();
        let a = F::a_insert(&self.atomic, key);
        assert!(
            answers.iter().all(|&x| x == answers[0]),
            "insert answers differ"
        );
        assert_eq!(a, answers[0], "atomic insert answer differs");
        if was_in {
            assert!(answers[0], "re-inserting a present key returned false");
        }
        self.keys.insert(key);
    }

    fn insert_hash(&mut self, h: u64) {
        let was_in = self.hashes.contains(&h);
        let answers: Vec<bool> = self
            .replicas
            .iter_mut()
            .map(|(_, r)| r.insert_hash(h))
            .collect();
        let a = F::a_insert_hash(&self.atomic, h);
        assert!(
            answers.iter().all(|&x| x == answers[0]),
            "insert_hash answers differ"
        );
        assert_eq!(a, answers[0], "atomic insert_hash answer differs");
        if was_in {
            assert!(answers[0], "re-inserting a present hash returned false");
        }
        self.hashes.insert(h);
    }

    fn contains(&self, key: u64) -> bool {
        let ans = self.agree("contains", |r| r.contains(key));
        assert_eq!(
            F::a_contains(&self.atomic, key),
            ans,
            "atomic contains differs"
        );
        let h = self.scalar().hash_of(key);
        assert_eq!(
            self.agree("contains_hash", |r| r.contains_hash(h)),
            ans,
            "contains != contains_hash(hash_one)"
        );
        if self.keys.contains(&key) {
            assert!(ans, "false negative for key {key:#x}");
        }
        ans
    }

    fn contains_hash(&self, h: u64) -> bool {
        let ans = self.agree("contains_hash", |r| r.contains_hash(h));
        assert_eq!(
            F::a_contains_hash(&self.atomic, h),
            ans,
            "atomic contains_hash differs"
        );
        if self.hashes.contains(&h) {
            assert!(ans, "false negative for hash {h:#x}");
        }
        ans
    }

    fn contains_batch(&self, keys: &[u64]) {
        for (b, r) in &self.replicas {
            let mut out = vec![false; keys.len()];
            r.contains_batch(keys, &mut out).expect("equal lengths");
            for (i, key) in keys.iter().enumerate() {
                assert_eq!(
                    out[i],
                    r.contains(*key),
                    "{b:?}: contains_batch[{i}] != contains"
                );
            }
        }
        for &key in keys {
            self.contains(key);
        }
    }

    fn contains_hash_batch(&self, hashes: &[u64]) {
        for (b, r) in &self.replicas {
            let mut out = vec![false; hashes.len()];
            r.contains_hash_batch(hashes, &mut out)
                .expect("equal lengths");
            for (i, h) in hashes.iter().enumerate() {
                assert_eq!(
                    out[i],
                    r.contains_hash(*h),
                    "{b:?}: contains_hash_batch[{i}] differs"
                );
            }
        }
        for &h in hashes {
            self.contains_hash(h);
        }
    }

    fn other(&self, keys: &[u64], hashes: &[u64]) -> F {
        let mut o = F::build(self.bits, self.k, self.seed).expect("same shape builds");
        o.insert_batch(keys);
        o.insert_hash_batch(hashes);
        o
    }

    fn resync_atomic(&mut self) {
        self.atomic = self.scalar().to_atomic();
    }

    fn check_replicas(&self) {
        let words = self.scalar().words();
        for (b, r) in &self.replicas[1..] {
            assert_eq!(r.words(), words, "backend {b:?} words differ from scalar");
            assert_eq!(r, self.scalar());
        }
        assert_eq!(
            F::a_snapshot(&self.atomic).words(),
            words,
            "atomic words differ"
        );
    }

    fn check_model(&self) {
        for &key in &self.keys {
            assert!(self.contains(key), "false negative for key {key:#x}");
        }
        for &h in &self.hashes {
            assert!(self.contains_hash(h), "false negative for hash {h:#x}");
        }
        let s = self.scalar();
        let fp = s.expected_false_pos();
        assert!((0.0..=1.0).contains(&fp), "expected_false_pos {fp}");
        let est = s.estimated_len();
        assert!(est >= 0.0 && !est.is_nan(), "estimated_len {est}");
        assert!(s.count_ones() <= s.num_bits());
        if !self.keys.is_empty() || !self.hashes.is_empty() {
            assert!(s.count_ones() >= 1);
        }
    }
}

fn run<F: Subject>(bits: u64, k: u32, seed: u64, ops: &[Op]) {
    let scalar = match F::build(bits, k, seed) {
        Ok(f) => f,
        Err(e) => panic!("valid small shape ({bits} bits, k {k}) refused: {e}"),
    };
    assert!(scalar.num_bits() >= bits, "fewer bits than asked");
    assert_eq!(scalar.num_hashes(), k);
    let mut replicas = Vec::new();
    for b in Backend::available() {
        let mut r = scalar.clone();
        r.set_backend(b).expect("available backend is accepted");
        replicas.push((b, r));
    }
    assert_eq!(
        replicas[0].0,
        Backend::Scalar,
        "available() lists scalar first"
    );
    let atomic = scalar.to_atomic();
    let mut st = State {
        replicas,
        atomic,
        keys: HashSet::new(),
        hashes: HashSet::new(),
        bits,
        k,
        seed,
    };

    for op in ops.iter().take(64) {
        match op {
            Op::Insert(key) => st.insert(*key),
            Op::Contains(key) => {
                st.contains(*key);
            }
            Op::InsertHash(h) => st.insert_hash(*h),
            Op::ContainsHash(h) => {
                st.contains_hash(*h);
            }
            Op::InsertBatch(keys) => {
                let keys = keys.get();
                for (_, r) in &mut st.replicas {
                    r.insert_batch(&keys);
                }
                F::a_insert_batch(&st.atomic, &keys);
                st.keys.extend(keys.iter().copied());
                st.contains_batch(&keys);
            }
            Op::ContainsBatch(keys) => st.contains_batch(&keys.get()),
            Op::InsertHashBatch(hashes) => {
                let hashes = hashes.get();
                for (_, r) in &mut st.replicas {
                    r.insert_hash_batch(&hashes);
                }
                for &h in &hashes {
                    F::a_insert_hash(&st.atomic, h);
                }
                st.hashes.extend(hashes.iter().copied());
                st.contains_hash_batch(&hashes);
            }
            Op::ContainsHashBatch(hashes) => st.contains_hash_batch(&hashes.get()),
            Op::Union { keys, hashes } => {
                let (keys, hashes) = (keys.get(), hashes.get());
                let other = st.other(&keys, &hashes);
                for (_, r) in &mut st.replicas {
                    r.union(&other).expect("same shape unions");
                }
                st.resync_atomic();
                st.keys.extend(keys);
                st.hashes.extend(hashes);
            }
            Op::Intersect { keys, hashes } => {
                let (keys, hashes) = (keys.get(), hashes.get());
                let other = st.other(&keys, &hashes);
                for (_, r) in &mut st.replicas {
                    r.intersect(&other).expect("same shape intersects");
                }
                st.resync_atomic();
                let keys: HashSet<u64> = keys.into_iter().collect();
                let hashes: HashSet<u64> = hashes.into_iter().collect();
                st.keys.retain(|x| keys.contains(x));
                st.hashes.retain(|x| hashes.contains(x));
            }
            Op::Mismatched {
                seed_delta,
                bits_delta,
                k_delta,
                intersect,
            } => {
                let seed = st.seed.wrapping_add(u64::from(*seed_delta));
                // Block layouts round sizes up: move by whole blocks so the shape differs.
                let bits = st.bits + u64::from(*bits_delta) * 512;
                let k = if F::VARIABLE_K {
                    (st.k + u32::from(*k_delta) - 1) % 64 + 1
                } else {
                    st.k
                };
                let Ok(other) = F::build(bits, k, seed) else {
                    panic!("valid mismatched shape refused");
                };
                let same =
                    other.num_bits() == st.scalar().num_bits() && k == st.k && seed == st.seed;
                let before = st.scalar().clone();
                for (_, r) in &mut st.replicas {
                    let res = if *intersect {
                        r.intersect(&other)
                    } else {
                        r.union(&other)
                    };
                    if same {
                        res.expect("same shape combines");
                    } else {
                        assert!(
                            matches!(res, Err(Error::IncompatibleFilters { .. })),
                            "incompatible filters combined: {res:?}"
                        );
                        assert_eq!(*r, before, "failed combine changed the filter");
                    }
                }
                if same {
                    // An empty filter of the same shape.
                    if *intersect {
                        st.keys.clear();
                        st.hashes.clear();
                    }
                    st.resync_atomic();
                }
            }
            Op::WrongLength { keys, extra } => {
                let keys = keys.get();
                let len = if *extra {
                    keys.len() + 1
                } else {
                    keys.len().saturating_sub(1)
                };
                if len != keys.len() {
                    for (_, r) in &st.replicas {
                        let mut out: Vec<bool> = (0..len).map(|i| i % 3 == 0).collect();
                        let snapshot = out.clone();
                        assert!(matches!(
                            r.contains_batch(&keys, &mut out),
                            Err(Error::LengthMismatch { .. })
                        ));
                        assert!(matches!(
                            r.contains_hash_batch(&keys, &mut out),
                            Err(Error::LengthMismatch { .. })
                        ));
                        assert_eq!(out, snapshot, "failed batch wrote its output");
                    }
                }
            }
            Op::Clear => {
                for (_, r) in &mut st.replicas {
                    r.clear();
                    assert_eq!(r.count_ones(), 0);
                }
                st.resync_atomic();
                st.keys.clear();
                st.hashes.clear();
            }
            Op::RoundTrip => {
                for (_, r) in &mut st.replicas {
                    let back = r.round_trip();
                    assert_eq!(&back, r, "serialization round trip changed the filter");
                }
            }
        }
        st.check_replicas();
    }
    st.check_model();
}

/// One fuzz case from raw bytes, as libFuzzer's typed `fuzz_target!` decodes them.
pub fn run_bytes(data: &[u8]) {
    if let Ok(input) = Input::arbitrary_take_rest(arbitrary::Unstructured::new(data)) {
        fuzz_one(input);
    }
}
