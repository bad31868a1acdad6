//! Model-based tests: random inserts and removes against an exact model of the filter's
//! counting semantics, on tiny tables and tiny remainders (r down to 1, so fingerprint
//! collisions and full buckets are frequent).
//!
//! The model tracks, per true fingerprint `f`, the number of resident keys and whether
//! its counter ever reached `2^c - 1` (then it is sticky). That predicts `count` exactly,
//! so the tests check much more than "no false negative, count >= truth": every query
//! answer, every insert/remove result, `len`, `occupied_cells`, the table invariants
//! (`validate`), and that a failed operation leaves the filter bit-for-bit unchanged.

use crate::common;

use bloomforge_core::{Count, RemoveOutcome};
use bloomforge_dleft::{DLeftCountingBloomFilter, DLeftError};

/// The model's answer for a sticky fingerprint.
const SATURATED: u64 = u64::MAX;

/// A count in the model's terms (`SATURATED` for `AtLeast`), checking the floor.
fn flat(c: Count, counter_max: u64) -> u64 {
    match c {
        Count::Exact(n) => n,
        Count::AtLeast(n) => {
            assert_eq!(n, counter_max, "AtLeast reports the counter's maximum");
            SATURATED
        }
    }
}

/// The test's code for a remove outcome.
fn code(o: RemoveOutcome) -> u8 {
    match o {
        RemoveOutcome::Removed => 2,
        RemoveOutcome::Saturated => 5,
    }
}
use common::{backends, build};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use std::collections::HashMap;

#[derive(Clone, Copy, Debug)]
enum Op {
    /// Insert key `k` (from a small universe: duplicates are frequent).
    Insert(u64),
    /// Remove the `i`-th (mod len) resident key.
    RemovePresent(usize),
    /// Remove key `k` if the model says its fingerprint is absent (must fail unchanged).
    RemoveAbsent(u64),
    /// Insert keys `k, k + step, ...` (`len` of them) as one all-or-nothing batch.
    InsertBatch(u64, u64, u8),
    /// Remove, as one batch, the resident keys at indices `i, i + step, ...` (mod the
    /// number of resident keys; repeats allowed, so a batch may remove a key more often
    /// than it is present and must then fail as a whole).
    RemoveBatch(usize, usize, u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0u64..300).prop_map(Op::Insert),
        3 => any::<usize>().prop_map(Op::RemovePresent),
        1 => (0u64..300).prop_map(Op::RemoveAbsent),
        1 => (0u64..300, 1u64..40, 0u8..24).prop_map(|(k, s, n)| Op::InsertBatch(k, s, n)),
        1 => (any::<usize>(), 1usize..5, 0u8..12).prop_map(|(i, s, n)| Op::RemoveBatch(i, s, n)),
    ]
}

#[derive(Clone, Copy, Debug)]
struct Shape {
    d: u32,
    b: u64,
    w: u32,
    r: u32,
    c: u32,
    seed: u64,
}

fn shape() -> impl Strategy<Value = Shape> {
    (
        prop_oneof![Just(1u32), Just(2), Just(3), Just(4), Just(8)],
        prop_oneof![
            Just(1u64),
            Just(2),
            Just(3),
            Just(4),
            Just(6),
            Just(8),
            Just(13),
            Just(16)
        ],
        prop_oneof![
            Just(1u32),
            Just(2),
            Just(3),
            Just(4),
            Just(8),
            Just(9),
            Just(16)
        ],
        prop_oneof![
            Just(1u32),
            Just(2),
            Just(3),
            Just(4),
            Just(4),
            Just(6),
            Just(12),
            Just(25)
        ],
        prop_oneof![Just(1u32), Just(2), Just(2), Just(3), Just(7)],
        any::<u64>(),
    )
        .prop_map(|(d, b, w, r, c, seed)| Shape {
            d,
            b,
            w,
            r,
            c,
            seed,
        })
}

/// The exact model: per fingerprint, (resident keys, sticky).
#[derive(Default)]
struct Model {
    per_fp: HashMap<u64, (u64, bool)>,
    resident: Vec<u64>,
    len: u64,
}

impl Model {
    /// Applies one insert of a key with fingerprint `fp` (known to succeed).
    fn insert(&mut self, k: u64, fp: u64, counter_max: u64) {
        let e = self.per_fp.entry(fp).or_insert((0, false));
        e.0 += 1;
        if e.0 >= counter_max {
            e.1 = true;
        }
        self.resident.push(k);
        self.len += 1;
    }

    /// Applies one remove of resident key number `idx` with fingerprint `fp`.
    fn remove(&mut self, idx: usize, fp: u64) {
        self.resident.swap_remove(idx);
        let e = self.per_fp.get_mut(&fp).unwrap();
        e.0 -= 1;
        if e.0 == 0 && !e.1 {
            self.per_fp.remove(&fp);
        }
        // The filter's len is inserts minus removes, saturating at 0.
        self.len = self.len.saturating_sub(1);
    }

    fn expected_count(&self, f: u64) -> u64 {
        match self.per_fp.get(&f) {
            Some(&(_, true)) => SATURATED,
            Some(&(n, false)) => n,
            None => 0,
        }
    }

    fn occupied(&self) -> u64 {
        self.per_fp
            .values()
            .filter(|&&(n, sticky)| n > 0 || sticky)
            .count() as u64
    }
}

fn run(s: Shape, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut filters: Vec<DLeftCountingBloomFilter> = backends()
        .into_iter()
        .map(|b| {
            let mut f = build(s.d, s.b, s.w, s.r, s.c, s.seed);
            f.set_backend(b).unwrap();
            f
        })
        .collect();
    let counter_max = (1u64 << s.c) - 1;
    let mut model = Model::default();
    for op in ops {
        // Every backend performs the same operation; they must agree exactly.
        let before = filters[0].clone();
        let mut results = Vec::new();
        for f in &mut filters {
            let res = match *op {
                Op::Insert(k) => f.insert(&k).map(|existed| existed as u8),
                Op::RemovePresent(i) if !model.resident.is_empty() => {
                    let k = model.resident[i % model.resident.len()];
                    f.remove(&k).map(code)
                }
                Op::RemovePresent(_) => Ok(3),
                Op::RemoveAbsent(k) if model.expected_count(f.fingerprint(&k)) == 0 => {
                    f.remove(&k).map(code)
                }
                Op::RemoveAbsent(_) => Ok(3),
                Op::InsertBatch(k, step, n) => {
                    let batch: Vec<u64> = (0..u64::from(n)).map(|i| (k + i * step) % 300).collect();
                    f.insert_batch(&batch).map(|()| 4)
                }
                Op::RemoveBatch(i, step, n) if !model.resident.is_empty() => {
                    let len = model.resident.len();
                    let batch: Vec<u64> = (0..usize::from(n))
                        .map(|j| model.resident[(i + j * step) % len])
                        .collect();
                    f.remove_batch(&batch).map(|()| 4)
                }
                Op::RemoveBatch(..) => Ok(3),
            };
            results.push(res);
        }
        prop_assert!(
            results.windows(2).all(|w| w[0] == w[1]),
            "backends disagree: {results:?}"
        );
        for f in &filters[1..] {
            prop_assert!(*f == filters[0], "backends left different tables");
        }
        let f = &filters[0];
        match (*op, &results[0]) {
            (Op::Insert(k), res) => {
                let fp = f.fingerprint(&k);
                let known = model.expected_count(fp) != 0;
                match res {
                    Ok(existed) => {
                        prop_assert_eq!(*existed == 1, known, "insert result vs model");
                        model.insert(k, fp, counter_max);
                    }
                    Err(DLeftError::BucketFull) => {
                        prop_assert!(!known, "BucketFull for a stored fingerprint");
                        prop_assert!(*f == before, "failed insert changed the filter");
                    }
                    Err(e) => return Err(TestCaseError::fail(format!("unexpected {e}"))),
                }
            }
            (Op::RemovePresent(i), res) if !model.resident.is_empty() => {
                let idx = i % model.resident.len();
                let fp = f.fingerprint(&model.resident[idx]);
                let want = if model.expected_count(fp) == SATURATED {
                    5
                } else {
                    2
                };
                prop_assert_eq!(res, &Ok(want), "remove of a resident key: outcome vs model");
                model.remove(idx, fp);
            }
            (Op::InsertBatch(k, step, n), res) => {
                let batch: Vec<u64> = (0..u64::from(n)).map(|i| (k + i * step) % 300).collect();
                match res {
                    Ok(4) => {
                        for &k in &batch {
                            model.insert(k, f.fingerprint(&k), counter_max);
                        }
                    }
                    Err(DLeftError::BatchFailed { index, error }) => {
                        prop_assert_eq!(&**error, &DLeftError::BucketFull);
                        prop_assert!(*index < batch.len());
                        prop_assert!(*f == before, "failed insert batch changed the filter");
                    }
                    other => {
                        return Err(TestCaseError::fail(format!("insert batch gave {other:?}")))
                    }
                }
            }
            (Op::RemoveBatch(i, step, n), res) if !model.resident.is_empty() => {
                // Predict with a scratch copy of the model: the first key whose
                // fingerprint is absent at its turn fails the whole batch.
                let len = model.resident.len();
                let batch: Vec<u64> = (0..usize::from(n))
                    .map(|j| model.resident[(i + j * step) % len])
                    .collect();
                let mut scratch = Model {
                    per_fp: model.per_fp.clone(),
                    resident: model.resident.clone(),
                    len: model.len,
                };
                let mut fails_at = None;
                for (pos, &k) in batch.iter().enumerate() {
                    let fp = f.fingerprint(&k);
                    if scratch.expected_count(fp) == 0 {
                        fails_at = Some(pos);
                        break;
                    }
                    // Remove some resident key with this fingerprint (the filter cannot
                    // tell keys of one fingerprint apart), preferring k itself.
                    let idx =
                        scratch.resident.iter().position(|&x| x == k).or_else(|| {
                            scratch.resident.iter().position(|x| f.fingerprint(x) == fp)
                        });
                    match idx {
                        Some(idx) => scratch.remove(idx, fp),
                        None => scratch.len = scratch.len.saturating_sub(1), // sticky, no resident key left
                    }
                }
                match (fails_at, res) {
                    (None, Ok(4)) => model = scratch,
                    (Some(at), Err(DLeftError::BatchFailed { index, error })) => {
                        prop_assert_eq!(*index, at);
                        prop_assert_eq!(&**error, &DLeftError::NotPresent);
                        prop_assert!(*f == before, "failed remove batch changed the filter");
                    }
                    (want, got) => {
                        return Err(TestCaseError::fail(format!(
                            "remove batch: expected failure at {want:?}, got {got:?}"
                        )));
                    }
                }
            }
            (Op::RemoveAbsent(_), Ok(2)) => {
                return Err(TestCaseError::fail(
                    "remove of an absent fingerprint succeeded",
                ));
            }
            (Op::RemoveAbsent(_), Err(DLeftError::NotPresent)) => {
                prop_assert!(*f == before, "failed remove changed the filter");
            }
            (_, Ok(3)) => {}
            (op, res) => return Err(TestCaseError::fail(format!("{op:?} gave {res:?}"))),
        }
        // Exact queries for every key of the universe (resident or not), on every
        // backend (each has its own query kernels).
        for k in 0u64..300 {
            let want = model.expected_count(f.fingerprint(&k));
            for g in &filters {
                prop_assert_eq!(
                    flat(g.count(&k), counter_max),
                    want,
                    "count of key {} ({:?})",
                    k,
                    g.backend()
                );
                prop_assert_eq!(g.contains(&k), want != 0, "contains of key {}", k);
            }
        }
        prop_assert_eq!(f.len(), model.len);
        prop_assert_eq!(f.occupied_cells(), model.occupied());
        if let Err(e) = f.validate() {
            return Err(TestCaseError::fail(e));
        }
    }
    // No false negative, count >= truth (the filter's promise, implied by the exact
    // model but checked directly too).
    let f = &filters[0];
    let mut truth: HashMap<u64, u64> = HashMap::new();
    for &k in &model.resident {
        *truth.entry(k).or_default() += 1;
    }
    for (k, n) in truth {
        prop_assert!(f.contains(&k));
        prop_assert!(f.count(&k).is_saturated() || f.count(&k).get() >= n);
    }
    Ok(())
}

fn config(cases: u32, seed: u64) -> Config {
    Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config(192, 0x00d1_ef70))]
    #[test]
    fn random_operations_match_the_exact_model(s in shape(), ops in prop::collection::vec(op(), 1..160)) {
        run(s, &ops)?;
    }
}

proptest! {
    #![proptest_config(config(64, 0x5eed_0004))]
    /// r = 4 with the default shape (d = 4, w = 8, c = 2): 16 remainders per bucket, so
    /// keys of the 300-key universe collide in fingerprint all the time.
    #[test]
    fn tiny_remainders_default_shape(b in 1u64..20, seed in any::<u64>(), ops in prop::collection::vec(op(), 1..300)) {
        run(Shape { d: 4, b, w: 8, r: 4, c: 2, seed }, &ops)?;
    }
}
