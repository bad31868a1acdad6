"""The other classes: d-left counting, scalable, stable and atomic Bloom filters, xor and
binary fuse filters, Bloomier filters, bitmaps. The same protocol as the core classes
(keys, batches, bytes, files, pickling, errors), then what each one adds. A class the
module does not export is skipped."""

from __future__ import annotations

import copy
import pickle
import threading
from collections import Counter

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bloomforge
from bloomforge import BloomFilter, FormatError
from conftest import HEADER_LEN, binomial_upper_bound


def cls(name):
    c = getattr(bloomforge, name, None)
    if c is None:
        pytest.skip(f"bloomforge.{name} is not in this build")
    return c


# ------------------------------------------------------------------ hashed-key classes
# name -> (class name, build(keys, seed) -> a filter holding keys). Each builder sizes
# the filter from constants only, so equal keys in any form give equal filters.

def _dynamic(cls_name, **kw):
    def build(keys, seed=0):
        f = cls(cls_name)(4000, seed=seed, **kw) if cls_name != "StableBloomFilter" else \
            cls(cls_name)(200_000, seed=seed, **kw)
        f.add_many(keys)
        return f
    return build


def _static(cls_name):
    def build(keys, seed=0):
        return cls(cls_name)(keys, seed=seed)
    return build


def _bloomier(keys, seed=0):
    # Arrow arrays and NumPy arrays hold keys, not pairs: turned into a list of pairs.
    if isinstance(keys, (pa.Array, pa.ChunkedArray)):
        keys = keys.to_pylist()
    elif isinstance(keys, np.ndarray):
        keys = keys.tolist()
    keys = list(keys)
    vals = [i % 13 for i in range(len(keys))]
    return cls("BloomierFilter")(list(zip(keys, vals)), seed=seed, value_bits=4)


HASHED = {
    "dleft": ("DLeftCountingBloomFilter", _dynamic("DLeftCountingBloomFilter")),
    "scalable": ("ScalableBloomFilter", _dynamic("ScalableBloomFilter")),
    "scalable-standard": ("ScalableBloomFilter", _dynamic("ScalableBloomFilter",
                                                          layout="standard")),
    "stable": ("StableBloomFilter", _dynamic("StableBloomFilter")),
    "atomic": ("AtomicBloomFilter", _dynamic("AtomicBloomFilter")),
    "atomic-standard": ("AtomicBloomFilter", _dynamic("AtomicBloomFilter", kind="standard")),
    "xor": ("XorFilter", _static("XorFilter")),
    "binary-fuse": ("BinaryFuseFilter", _static("BinaryFuseFilter")),
    "bloomier": ("BloomierFilter", _bloomier),
}
INT_SETS = {"bitmap": "Bitmap", "two-bitmap": "TwoBitmap"}

STRS = [f"k{i}" for i in range(1500)] + ["", "caf\u00e9", "\U0001f600", "a\0b"]
INTS = list(range(-300, 1200)) + [2**63 - 1, -(2**63), 2**32]
ABSENT = [f"absent-{i}" for i in range(20_000)]


def string_forms(strs):
    bs = [s.encode() for s in strs]
    h = len(strs) // 2
    return {
        "pa.string": pa.array(strs, pa.string()),
        "pa.large_string": pa.array(strs, pa.large_string()),
        "pa.string_view": pa.array(strs, pa.string_view()),
        "pa.binary": pa.array(bs, pa.binary()),
        "pa.chunked": pa.chunked_array([strs[:h], strs[h:]], pa.string()),
        "list[bytes]": bs,
    }


def int_forms(ints):
    h = len(ints) // 2
    a = np.array(ints, np.int64)
    return {
        "np.int64": a,
        "np.uint64": a.view(np.uint64),
        "pa.int64": pa.array(ints, pa.int64()),
        "pa.uint64": pa.array(a.view(np.uint64)),
        "pa.chunked": pa.chunked_array([ints[:h], ints[h:]], pa.int64()),
        "list[np.int64]": list(a),
    }


@pytest.fixture(params=sorted(HASHED))
def hashed(request):
    name = request.param
    cls(HASHED[name][0])
    return name, HASHED[name][1]


@pytest.fixture(params=sorted(INT_SETS))
def intset(request):
    return cls(INT_SETS[request.param])


def samples():
    """One small non-empty instance of each new class present (for the decoding fuzz)."""
    out = {}
    for name, (cname, build) in HASHED.items():
        if hasattr(bloomforge, cname):
            out[name] = build(list(range(30)), 7)
    for name, cname in INT_SETS.items():
        if hasattr(bloomforge, cname):
            f = getattr(bloomforge, cname)(1000)
            f.add_many([1, 5, 5, 999, 64, 65])
            out[name] = f
    return out


NEW_SAMPLES = samples()


# ------------------------------------------------------------- keys in every form


def test_strings_in_every_form(hashed):
    name, build = hashed
    f = build(STRS)
    got = f.contains_many(STRS)
    assert got.dtype == np.bool_ and got.shape == (len(STRS),)
    if name == "stable":
        assert got.sum() >= 0.999 * len(STRS)  # see test_stable_forgets_old_keys
    else:
        assert got.all(), "false negative"
    for form, keys in string_forms(STRS).items():
        assert build(keys) == f, form
        assert (f.contains_many(keys) == got).all(), form
    assert [k in f for k in STRS[:50]] == got[:50].tolist()


def test_ints_in_every_form(hashed):
    name, build = hashed
    f = build(INTS)
    got = f.contains_many(INTS)
    if name != "stable":
        assert got.all()
    for form, keys in int_forms(INTS).items():
        assert build(keys) == f, form
        assert (f.contains_many(keys) == got).all(), form
    # Negative ints are their 64-bit pattern; str and bytes are one key.
    assert (f.contains_many([-1, -300]) == f.contains_many([2**64 - 1, 2**64 - 300])).all()


def test_hashed_key_errors(hashed):
    _, build = hashed
    f = build(STRS[:10])
    for bad in (1.5, None, [1]):
        with pytest.raises(TypeError):
            bad in f  # noqa: B015
        with pytest.raises(TypeError):
            f.contains_many([bad])
    for bad in (2**64, -(2**63) - 1):
        with pytest.raises(OverflowError):
            bad in f  # noqa: B015
    with pytest.raises(ValueError, match="null"):
        f.contains_many(pa.array(["a", None]))
    with pytest.raises(TypeError):
        f.contains_many("one string")


def test_false_positive_rate_bound(hashed):
    name, build = hashed
    f = build(STRS)
    p = f.false_positive_rate
    assert 0 < p < 0.05
    fp = int(f.contains_many(ABSENT).sum())
    # P[FP count >= bound] <= 1e-6 for 20 000 probes of rate p (exact binomial tail).
    assert fp < binomial_upper_bound(len(ABSENT), p, 1e-6), (fp, p)


# ------------------------------------------------- bytes, files, pickle, copies


def all_new():
    if not NEW_SAMPLES:
        pytest.skip("no new classes in this build")
    return NEW_SAMPLES


def test_roundtrips(tmp_path):
    for name, f in all_new().items():
        b = f.to_bytes()
        assert b[:4] == b"BLMF"
        assert type(f).from_bytes(b) == f, name
        p = tmp_path / f"{name}.bf"
        f.save(p)
        assert type(f).load(p) == f and type(f).load(str(p)) == f, name
        assert pickle.loads(pickle.dumps(f)) == f, name
        assert copy.deepcopy(f) == f and copy.copy(f) == f and f.copy() == f, name
        assert f.copy() is not f
        assert repr(f).startswith(type(f).__name__ + "("), repr(f)
        with pytest.raises(TypeError):
            hash(f)
        assert f != "x"


def test_copies_are_independent():
    for name, f in all_new().items():
        if not hasattr(f, "add"):
            continue
        g = f.copy()
        g.add(777)
        assert 777 in g and g != f, name


def test_wrong_kinds_and_damage(tmp_path):
    objs = dict(all_new())
    objs["bloom"] = BloomFilter(100)
    objs["counting"] = bloomforge.CountingBloomFilter(100)
    for name, f in objs.items():
        for other, g in objs.items():
            if type(f) is type(g):
                continue
            if {type(f).__name__, type(g).__name__} == {"BloomFilter", "AtomicBloomFilter"}:
                assert type(f).from_bytes(g.to_bytes()).to_bytes() == g.to_bytes()
                continue
            with pytest.raises(FormatError):
                type(f).from_bytes(g.to_bytes())
        b = f.to_bytes()
        for bad in (b"", b[:HEADER_LEN], b[:-1], b + b"\0"):
            with pytest.raises(FormatError):
                type(f).from_bytes(bad)
        with pytest.raises(FileNotFoundError) as e:
            type(f).load(tmp_path / "missing.bf")
        assert e.value.filename == str(tmp_path / "missing.bf")


@pytest.mark.parametrize("name", sorted(HASHED) + sorted(INT_SETS))
def test_size_in_bytes(name):
    if name in HASHED:
        cname, build = HASHED[name]
        cls(cname)
        f = build(list(range(3000)))
    else:
        f = cls(INT_SETS[name])(2**20)
    payload = len(f.to_bytes()) - HEADER_LEN
    assert abs(f.size_in_bytes - payload) <= 0.05 * payload, (f.size_in_bytes, payload)


def test_bad_parameters():
    checks = [
        ("DLeftCountingBloomFilter", lambda c: c(0), "expected item"),
        ("DLeftCountingBloomFilter", lambda c: c(10, 1.5), "false-positive"),
        ("DLeftCountingBloomFilter", lambda c: c(10, counter_bits=9), "counter_bits"),
        ("ScalableBloomFilter", lambda c: c(0), "expected item"),
        ("ScalableBloomFilter", lambda c: c(10, growth_factor=0.5), "growth_factor"),
        ("ScalableBloomFilter", lambda c: c(10, tightening_ratio=1.0), "tightening_ratio"),
        ("ScalableBloomFilter", lambda c: c(10, max_slices=0), "max_slices"),
        ("ScalableBloomFilter", lambda c: c(10, layout="split-block"), "layout"),
        ("StableBloomFilter", lambda c: c(0), "size"),
        ("StableBloomFilter", lambda c: c(100, cell_bits=9), "cell_bits"),
        ("AtomicBloomFilter", lambda c: c(10, kind="x"), "kind"),
        ("AtomicBloomFilter", lambda c: c(10, 0.0), "false-positive"),
        ("XorFilter", lambda c: c(["a"], fingerprint_bits=12), "fingerprint_bits"),
        ("BinaryFuseFilter", lambda c: c(["a"], fingerprint_bits=32), "fingerprint_bits"),
        ("BloomierFilter", lambda c: c({"a": -1}), "values"),
        ("BloomierFilter", lambda c: c({"a": 2**32}), "values"),
        ("BloomierFilter", lambda c: c({"a": 8}, value_bits=3), "value"),
        ("BloomierFilter", lambda c: c([("a", 1), ("a", 2)]), "duplicate key"),
        ("Bitmap", lambda c: c(0), "universe"),
        ("Bitmap", lambda c: c(2**33), "universe"),
        ("TwoBitmap", lambda c: c(0), "universe"),
    ]
    ran = 0
    for cname, call, word in checks:
        c = getattr(bloomforge, cname, None)
        if c is None:
            continue
        with pytest.raises(ValueError, match=word):
            call(c)
        ran += 1
    if not ran:
        pytest.skip("no new classes in this build")


# --------------------------------------------------------------- d-left counting


@settings(max_examples=100)
@given(ops=st.lists(st.tuples(st.sampled_from(["add", "add", "remove"]),
                              st.one_of(st.integers(0, 30), st.sampled_from(["a", "b", "\u00e9"]))),
                    max_size=100),
       counter_bits=st.sampled_from([1, 2, 4]))
def test_dleft_model(ops, counter_bits):
    c = cls("DLeftCountingBloomFilter")
    f = c(64, 0.01, counter_bits=counter_bits, seed=3)
    model = Counter()
    for op, k in ops:
        if op == "add":
            before = f.to_bytes()
            try:
                f.add(k)
            except ValueError:
                assert f.to_bytes() == before  # full: unchanged
            else:
                model[k] += 1
        elif model[k] > 0:
            f.remove(k)
            model[k] -= 1
        elif k not in f:
            before = f.to_bytes()
            with pytest.raises(KeyError):
                f.remove(k)
            assert f.discard(k) is False and f.to_bytes() == before
        present = [k for k, n in model.items() if n > 0]
        assert all(k in f for k in present), "false negative"
        assert len(f) == sum(model.values())
        for k in present:
            assert f.count(k) >= min(model[k], 2**counter_bits - 1)


def test_dleft_batch_all_or_nothing():
    f = cls("DLeftCountingBloomFilter")(10)
    f.add_many(range(20))
    before = f.to_bytes()
    with pytest.raises(ValueError, match="full"):
        f.add_many(range(100, 10_000))
    assert f.to_bytes() == before and len(f) == 20
    got = f.remove_many(list(range(20)))
    assert got.all() and len(f) == 0
    assert f.count_many(range(5)).tolist() == [0] * 5


# ---------------------------------------------------------------------- scalable


def test_scalable_grows_within_its_rate():
    c = cls("ScalableBloomFilter")
    f = c(1000, 0.01, seed=2)
    with pytest.raises(TypeError):
        len(f)
    slices = []
    for lo in range(0, 50_000, 10_000):
        f.add_many(range(lo, lo + 10_000))
        slices.append(f.num_slices)
    assert slices == sorted(slices) and slices[-1] > 1
    assert f.contains_many(range(50_000)).all()
    assert f.false_positive_rate <= f.target_false_positive_rate == 0.01
    assert abs(f.approx_len() - 50_000) < 0.05 * 50_000
    assert f.capacity >= 50_000


def test_scalable_union_and_mismatch():
    c = cls("ScalableBloomFilter")
    a, b = c(100, seed=1), c(100, seed=1)
    a.add_many(range(1000))
    b.add_many(range(1000, 1100))
    u = a | b
    assert u.contains_many(range(1100)).all()
    alias = a
    a |= b
    assert a is alias and a == u
    for kw, word in ((dict(seed=2), "hasher|seed"), (dict(layout="standard"), "layout"),
                     (dict(initial_capacity=200), "capacity"),
                     (dict(false_positive_rate=0.001), "false_pos"),
                     (dict(growth_factor=4.0), "growth")):
        args = dict(initial_capacity=100, seed=1)
        args.update(kw)
        with pytest.raises(ValueError, match=word):
            c(**args) | c(100, seed=1)


def test_scalable_slice_limit_keeps_earlier_keys():
    f = cls("ScalableBloomFilter")(10, max_slices=2)
    with pytest.raises(ValueError, match="max_slices"):
        f.add_many(range(1000))
    n = f.capacity
    assert f.contains_many(range(n)).all()
    before = f.to_bytes()
    with pytest.raises(ValueError):
        f.add(10**9)
    assert f.to_bytes() == before


# ------------------------------------------------------------------------ stable


def test_stable_check_and_add_and_seeds():
    c = cls("StableBloomFilter")
    f = c(100_000, 0.01, rng_seed=5)
    assert f.check_and_add("a") is False
    assert f.check_and_add("a") is True
    got = f.check_and_add_many(["b", "c", "b", "a"])
    assert got.tolist() == [False, False, True, True]
    assert f.inserts == 6
    g1, g2, g3 = c(5000, rng_seed=1), c(5000, rng_seed=1), c(5000, rng_seed=2)
    for g in (g1, g2, g3):
        g.add_many(range(3000))
    assert g1 == g2 and g1 != g3  # the same seeds and keys give the same filter


def test_stable_forgets_old_keys():
    f = cls("StableBloomFilter")(1000, 0.01)
    f.add_many(range(100_000))
    # The last key's cells were just set; keys from the start are mostly gone.
    assert 99_999 in f
    assert f.contains_many(range(1000)).mean() < 0.1
    # The fill sits at its stable point: the rate is near the stable rate.
    assert f.false_positive_rate < 2 * f.stable_false_positive_rate


# ------------------------------------------------------------------------ atomic


def test_atomic_threads_add_together():
    c = cls("AtomicBloomFilter")
    f = c(400_000, kind="blocked")
    parts = [np.arange(i * 100_000, (i + 1) * 100_000, dtype=np.int64) for i in range(4)]
    errors = []
    barrier = threading.Barrier(len(parts))

    def work(p):
        barrier.wait()
        try:
            f.add_many(p)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(p,)) for p in parts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []  # no borrow errors: adds take no lock
    ref = BloomFilter(400_000, kind="blocked")
    ref.add_many(np.concatenate(parts))
    assert f.to_bloom_filter() == ref
    assert f.to_bytes() == ref.to_bytes()
    assert c.from_bytes(ref.to_bytes()) == f


# -------------------------------------------------------------- static filters


@pytest.mark.parametrize("cname", ["XorFilter", "BinaryFuseFilter"])
def test_static_filters(cname):
    c = cls(cname)
    f = c(["a", "a", "b", 3])
    assert len(f) == 3  # repeats allowed, counted once
    assert all(k in f for k in ("a", b"a", "b", 3))
    assert not hasattr(f, "add")
    f16 = c(STRS, fingerprint_bits=16)
    assert f16.false_positive_rate == 2**-16 and f16.fingerprint_bits == 16
    assert f16.contains_many(STRS).all()
    empty = c([])
    assert len(empty) == 0
    # An empty table still matches a fingerprint at the filter's rate (P <= 1e-6 bound).
    hits = int(empty.contains_many(ABSENT).sum())
    assert hits < binomial_upper_bound(len(ABSENT), empty.false_positive_rate, 1e-6)
    with pytest.raises(TypeError, match="wrap it in a list"):
        c("abc")
    with pytest.raises(TypeError):
        c([1.5])
    big = np.arange(200_000, dtype=np.int64)
    assert c(big) == c(big, threads=1) == c(big, threads=2)


def test_bloomier_values():
    c = cls("BloomierFilter")
    mapping = {f"k{i}": i % 100 for i in range(3000)}
    mapping[b"raw"] = 7
    mapping[-5] = 99
    f = c(mapping)
    assert len(f) == len(mapping)
    assert all(f[k] == v for k, v in mapping.items())
    assert f["raw"] == 7  # str and bytes are one key
    assert f[2**64 - 5] == 99  # negative ints are their 64-bit pattern
    values, found = f.get_many(list(mapping))
    assert values.dtype == np.uint32 and found.dtype == np.bool_
    assert found.all() and values.tolist() == list(mapping.values())
    keys = [k for k in mapping if isinstance(k, str)]
    v2, _ = f.get_many(pa.array(keys))
    assert v2.tolist() == [mapping[k] for k in keys]
    miss = sum(f.get(k) is not None for k in ABSENT)
    # P[misses >= bound] <= 1e-6 at the filter's own rate (exact binomial tail).
    assert miss < binomial_upper_bound(len(ABSENT), f.false_positive_rate, 1e-6)
    assert f.get("surely-absent-key", "d") in ("d",) + tuple(range(2**f.value_bits))
    with pytest.raises(KeyError):
        for k in ABSENT:
            f[k]


# ----------------------------------------------------------------------- bitmaps


@settings(max_examples=100)
@given(ops=st.lists(st.tuples(st.sampled_from(["add", "remove", "discard"]),
                              st.integers(-3, 70)), max_size=80),
       other=st.sets(st.integers(0, 63)))
def test_bitmap_is_a_set(ops, other):
    c = cls("Bitmap")
    f = c(64)
    model = set()
    for op, x in ops:
        inside = 0 <= x < 64
        if op == "add":
            if inside:
                f.add(x)
                model.add(x)
            else:
                with pytest.raises(ValueError, match="universe"):
                    f.add(x)
        elif op == "remove":
            if x in model:
                f.remove(x)
                model.discard(x)
            else:
                with pytest.raises(KeyError):
                    f.remove(x)
        else:
            assert f.discard(x) is (x in model)
            model.discard(x)
        assert len(f) == len(model)
        assert list(f) == sorted(model)
    g = c(64)
    g.add_many(sorted(other))
    assert list(f | g) == sorted(model | other)
    assert list(f & g) == sorted(model & other)
    assert list(f - g) == sorted(model - other)
    assert list(f ^ g) == sorted(model ^ other)
    assert f.to_numpy().tolist() == sorted(model)
    for i, x in enumerate(sorted(model)):
        assert f.select(i) == x and f.rank(x) == i
    with pytest.raises(IndexError):
        f.select(len(model))


def test_int_sets_batches(intset):
    f = intset(2**20)
    vals = list(range(0, 2**20, 3))
    f.add_many(vals)
    for form in (np.array(vals, np.uint32), np.array(vals, np.int64), pa.array(vals, pa.uint32()),
                 pa.array(vals, pa.int64()), pa.chunked_array([vals[:10], vals[10:]])):
        g = intset(2**20)
        g.add_many(form)
        assert g == f
    got = f.contains_many(range(12))
    assert got.dtype == np.bool_ and got.tolist() == [i % 3 == 0 for i in range(12)]
    before = f.to_bytes()
    with pytest.raises(ValueError, match="universe"):
        f.add_many([1, 2, 2**20])  # all or nothing
    assert f.to_bytes() == before
    with pytest.raises(TypeError):
        f.add("1")
    assert f.contains_many([-1, 2**20, 2**64 - 1]).tolist() == [False] * 3
    with pytest.raises(ValueError, match="universe"):
        f | intset(2**21) if hasattr(f, "__or__") else f.merge(intset(2**21))


@settings(max_examples=60)
@given(vals=st.lists(st.integers(0, 99), max_size=200))
def test_two_bitmap_counts(vals):
    c = cls("TwoBitmap")
    f = c(100)
    f.add_many(vals)
    m = Counter(vals)
    once = sorted(v for v, n in m.items() if n == 1)
    many = sorted(v for v, n in m.items() if n > 1)
    assert f.once().tolist() == once and f.many().tolist() == many
    assert f.count_once == len(once) and f.count_many == len(many)
    assert len(f) == len(m)
    assert f.seen_many(range(100)).tolist() == [min(m[v], 2) for v in range(100)]
    g = c(100)
    g.add_many(vals)
    g.merge(f)
    assert g.many().tolist() == sorted(m)  # once + once = many


# -------------------------------------------------------------------------- CLI


CLI_KEYS = [f"line-{i}" for i in range(3000)] + [f"\u00fcnicode-{i}" for i in range(300)]
CLI_PROBES = CLI_KEYS + [f"other-{i}" for i in range(10_000)]


@pytest.mark.parametrize(
    "kind, cname, extra",
    [("dleft", "DLeftCountingBloomFilter", []),
     ("scalable", "ScalableBloomFilter", ["--expected", "500"]),
     ("scalable-standard", "ScalableBloomFilter", ["--expected", "500"]),
     ("stable", "StableBloomFilter", ["--memory", "512K"])],
)
def test_cli_build_python_query(cli, tmp_path, kind, cname, extra):
    c = cls(cname)
    keys = tmp_path / "keys.txt"
    probes = tmp_path / "probes.txt"
    keys.write_bytes("".join(f"{k}\n" for k in CLI_KEYS).encode())
    probes.write_bytes("".join(f"{k}\n" for k in CLI_PROBES).encode())
    out = tmp_path / f"{kind}.bf"
    cli("build", keys, "-o", out, "--kind", kind, "--fp", "0.01", *extra)
    f = c.load(out)
    mask = f.contains_many(CLI_PROBES)
    assert (f.contains_many(pa.array(CLI_PROBES)) == mask).all()
    want = [p for p, m in zip(CLI_PROBES, mask) if m]
    got = cli("query", "--threads", "1", out, probes).decode().split("\n")[:-1]
    assert got == want
    if kind != "stable":
        assert mask[: len(CLI_KEYS)].all()
    # And back: Python's bytes answer the same in the command line.
    f2 = tmp_path / f"{kind}-py.bf"
    f.save(f2)
    assert cli("query", "--threads", "1", f2, probes).decode().split("\n")[:-1] == want


def test_dleft_huge_remainder_bits_is_format_error():
    import struct

    from conftest import reseal

    c = cls("DLeftCountingBloomFilter")
    f = c(100)
    f.add_many(range(30))
    b = bytearray(f.to_bytes())
    # The payload's parameter block: u32 subtables, cells, remainder_bits, counter_bits.
    b[HEADER_LEN + 8:HEADER_LEN + 12] = struct.pack("<I", 2**32 - 1)
    with pytest.raises(FormatError):
        c.from_bytes(reseal(bytes(b)))


def test_batch_arguments_like_bloom_filter():
    """The newer classes read batches as BloomFilter does: strided NumPy views, NumPy
    integer scalars, and `threads=0` refused whatever the batch size."""
    strided = np.arange(40, dtype=np.int64)[::3]
    for cname in ("Bitmap", "TwoBitmap"):
        c = getattr(bloomforge, cname, None)
        if c is None:
            continue
        f, g = c(100), c(100)
        f.add_many(strided)
        g.add_many(strided.tolist())
        assert f == g
        assert f.contains_many(np.arange(40, dtype=np.uint32)[::3]).all()
        f.add(np.int64(99))
        assert 99 in f
    for cname in ("XorFilter", "BinaryFuseFilter"):
        c = getattr(bloomforge, cname, None)
        if c is not None:
            assert c(strided) == c(strided.tolist()) == c(list(strided))
    c = getattr(bloomforge, "AtomicBloomFilter", None)
    if c is not None:
        f = c(100)
        f.add_many(strided)
        assert f.contains_many(strided).all() and np.int64(3) in f
        with pytest.raises(ValueError, match="threads"):
            f.add_many([1], threads=0)
        with pytest.raises(ValueError, match="threads"):
            f.contains_many([1], threads=0)
