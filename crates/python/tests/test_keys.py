"""Keys mean the same everywhere: a str is its UTF-8 bytes, an int its 64-bit value, whether
it comes alone, in a list, in a NumPy array, or in an Arrow array from pyarrow, Polars or
pandas. Filters built from equal keys are equal, bit for bit."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from bloomforge import BloomFilter, CountingBloomFilter, Iblt

STRS = [f"k{i}" for i in range(300)] + ["", "caf\u00e9", "\u65e5\u672c", "\U0001f600 emoji", "a\0b"]
BYTES = [s.encode() for s in STRS]
INTS = list(range(-50, 250)) + [2**63 - 1, -(2**63), 2**32, 2**32 - 1, -(2**31)]
NONNEG = [k for k in INTS if k >= 0] + [2**64 - 1, 2**63]


def build(make, keys):
    f = make(1000)
    f.add_many(keys)
    return f


def string_forms(strs):
    bs = [s.encode() for s in strs]
    half = len(strs) // 2
    return {
        "list[str]": strs,
        "list[bytes]": bs,
        "tuple[str]": tuple(strs),
        "generator": (s for s in strs),
        "pa.string": pa.array(strs, pa.string()),
        "pa.large_string": pa.array(strs, pa.large_string()),
        "pa.string_view": pa.array(strs, pa.string_view()),
        "pa.binary": pa.array(bs, pa.binary()),
        "pa.large_binary": pa.array(bs, pa.large_binary()),
        "pa.binary_view": pa.array(bs, pa.binary_view()),
        "pa.chunked": pa.chunked_array([strs[:half], strs[half:]], pa.string()),
        "pa.sliced": pa.array(["pad"] * 7 + strs + ["pad"], pa.string()).slice(7, len(strs)),
    }


def int_forms(ints):
    half = len(ints) // 2
    return {
        "list[int]": ints,
        "np.int64": np.array(ints, np.int64),
        "np.uint64 (same bits)": np.array(ints, np.int64).view(np.uint64),
        "pa.int64": pa.array(ints, pa.int64()),
        "pa.uint64 (same bits)": pa.array(np.array(ints, np.int64).view(np.uint64)),
        "pa.chunked": pa.chunked_array([ints[:half], ints[half:]], pa.int64()),
        "pa.sliced": pa.array([0] * 5 + ints + [0], pa.int64()).slice(5, len(ints)),
        "np.int64 strided": np.array([x for k in ints for x in (k, 0)], np.int64)[::2],
        "list[np.int64]": list(np.array(ints, np.int64)),
    }


@pytest.mark.parametrize("form", list(string_forms(STRS)))
def test_string_forms_build_equal_filters(make, form):
    ref = build(make, STRS)
    assert build(make, string_forms(STRS)[form]) == ref
    got = ref.contains_many(string_forms(STRS)[form])
    assert got.dtype == np.bool_ and got.shape == (len(STRS),) and got.all()


def test_str_and_bytes_are_one_key(make):
    f = make(100)
    f.add("caf\u00e9")
    assert "caf\u00e9".encode() in f
    g = make(100)
    g.add(b"caf\xc3\xa9")
    assert f == g


def test_int_and_its_decimal_string_differ():
    t = Iblt(5)
    assert t.hash_of(123) != t.hash_of("123")
    assert t.hash_of(123) != t.hash_of(b"123")


@pytest.mark.parametrize("form", list(int_forms(INTS)))
def test_int_forms_build_equal_filters(make, form):
    ref = build(make, INTS)
    assert build(make, int_forms(INTS)[form]) == ref
    got = ref.contains_many(int_forms(INTS)[form])
    assert got.dtype == np.bool_ and got.shape == (len(INTS),) and got.all()


def test_unsigned_forms(make):
    ref = build(make, NONNEG)
    for keys in (np.array(NONNEG, np.uint64), pa.array(NONNEG, pa.uint64())):
        assert build(make, keys) == ref
    small = [k for k in NONNEG if k < 2**32]
    ref32 = build(make, small)
    for keys in (np.array(small, np.uint32), pa.array(small, pa.uint32())):
        assert build(make, keys) == ref32


def test_int32_forms_sign_extend(make):
    ks = [-(2**31), -5, -1, 0, 7, 2**31 - 1]
    ref = build(make, ks)
    for keys in (np.array(ks, np.int32), pa.array(ks, pa.int32())):
        assert build(make, keys) == ref


def test_negative_ints_are_their_64_bit_pattern(make):
    f = make(100)
    f.add(-1)
    assert 2**64 - 1 in f
    assert build(make, [-1, -(2**63)]) == build(make, [2**64 - 1, 2**63])
    assert build(make, np.array([-1], np.int32)) == build(make, np.array([2**64 - 1], np.uint64))
    # uint32 values are not sign-extended.
    assert build(make, np.array([2**32 - 1], np.uint32)) == build(make, [2**32 - 1])


def test_numpy_scalars_are_ints(make):
    f = make(1000)
    f.add(np.int64(-3))
    f.add(np.uint64(2**64 - 1))
    f.add(np.int32(7))
    assert -3 in f and 2**64 - 1 in f and 7 in f
    assert np.uint8(7) in f
    assert build(make, [np.int64(-3), np.uint64(2**64 - 1), np.int32(7)]) == f
    with pytest.raises(TypeError):
        f.add(np.float64(1.0))


def test_contains_many_shapes(make):
    f = build(make, STRS)
    for keys in ([], np.array([], np.int64), pa.array([], pa.string()), pa.array([]),
                 pa.chunked_array([], pa.int64()), iter(())):
        got = f.contains_many(keys)
        assert isinstance(got, np.ndarray) and got.dtype == np.bool_ and got.shape == (0,)
    mixed = STRS[:10] + [10**6 + i for i in range(10)]
    got = f.contains_many(mixed)
    assert got.shape == (20,)
    assert (got == np.array([k in f for k in mixed])).all()


def test_contains_many_matches_in(make):
    f = build(make, STRS[:150])
    probes = STRS + [f"absent-{i}" for i in range(2000)]
    want = np.array([k in f for k in probes])
    for keys in (probes, pa.array(probes), [p.encode() for p in probes]):
        assert (f.contains_many(keys) == want).all()


def test_unsupported_arrow_types():
    f = BloomFilter(100)
    for arr in (pa.array([1.0]), pa.array([1], pa.int8()), pa.array([1], pa.int16()),
                pa.array(["a"]).dictionary_encode(), pa.array([True]),
                pa.table({"a": ["x"]})):
        with pytest.raises(TypeError, match="Arrow keys"):
            f.add_many(arr)
    assert f == BloomFilter(100)


@pytest.mark.parametrize(
    "arr",
    [
        pa.array(["a", None, "c"]),
        pa.array([1, None], pa.int64()),
        pa.array([b"x", None], pa.binary()),
        pa.chunked_array([["a", "b"], ["c", None]]),
        pa.array([None, None]),
    ],
    ids=["string", "int64", "binary", "chunked, null in the last chunk", "null type"],
)
def test_arrow_nulls_raise(make, arr):
    f = make(100)
    with pytest.raises(ValueError, match="null"):
        f.add_many(arr)
    with pytest.raises(ValueError, match="null"):
        f.contains_many(arr)
    assert f == make(100)  # nothing of the batch was added


@pytest.mark.parametrize("kind", ["split-block", "blocked", "standard"])
def test_parallel_batches_equal_sequential(kind):
    # From 2**20 keys a batch runs on several threads; the bits must not depend on it.
    keys = np.arange(-(2**19), 2**19 + 7, dtype=np.int64)
    a = BloomFilter(len(keys), kind=kind)
    a.add_many(keys)
    b = BloomFilter(len(keys), kind=kind)
    b.add_many(keys, threads=1)
    c = BloomFilter(len(keys), kind=kind)
    c.add_many(keys, threads=2)
    assert a == b == c
    probes = np.arange(2**40, 2**40 + 2**20, dtype=np.int64)
    want = a.contains_many(probes, threads=1)
    assert (a.contains_many(probes) == want).all()
    assert (a.contains_many(probes, threads=3) == want).all()
    assert a.contains_many(keys).all()


# --------------------------------------------------------------- Polars and pandas


def test_polars_series(make):
    pl = pytest.importorskip("polars", reason="polars is not installed: Polars inputs untested")
    assert build(make, pl.Series(STRS)) == build(make, STRS)
    assert build(make, pl.Series(INTS, dtype=pl.Int64)) == build(make, INTS)
    assert build(make, pl.Series(NONNEG, dtype=pl.UInt64)) == build(make, NONNEG)
    # A Series of several chunks.
    s = pl.Series(STRS[:100])
    s.append(pl.Series(STRS[100:]))
    assert s.n_chunks() >= 2
    assert build(make, s) == build(make, STRS)
    f = build(make, STRS)
    got = f.contains_many(pl.Series(STRS))
    assert got.dtype == np.bool_ and got.shape == (len(STRS),) and got.all()
    with pytest.raises(ValueError, match="null"):
        f.add_many(pl.Series(["a", None]))
    df = pl.DataFrame({"k": STRS})
    assert build(make, df["k"]) == build(make, STRS)


def test_pandas_columns(make):
    pd = pytest.importorskip("pandas", reason="pandas is not installed: pandas inputs untested")
    ref_s, ref_i = build(make, STRS), build(make, INTS)
    assert build(make, pd.Series(STRS, dtype=pd.ArrowDtype(pa.string()))) == ref_s
    assert build(make, pd.Series(STRS, dtype=pd.ArrowDtype(pa.large_string()))) == ref_s
    assert build(make, pd.Series(INTS, dtype=pd.ArrowDtype(pa.int64()))) == ref_i
    assert build(make, pd.Series(INTS, dtype="int64")) == ref_i  # NumPy-backed
    assert build(make, pd.Series(STRS)) == ref_s  # default string / object dtype
    df = pd.DataFrame({"k": pd.Series(STRS, dtype=pd.ArrowDtype(pa.string()))})
    assert build(make, df["k"]) == ref_s
    got = ref_s.contains_many(df["k"])
    assert got.dtype == np.bool_ and got.shape == (len(STRS),) and got.all()
    with pytest.raises(ValueError, match="null"):
        ref_s.add_many(pd.Series(["a", None], dtype=pd.ArrowDtype(pa.string())))


def test_counting_batches_agree():
    ref = CountingBloomFilter(1000)
    ref.add_many(STRS)
    for form in (pa.array(STRS), BYTES, pa.array(STRS, pa.string_view())):
        assert (ref.count_many(form) == ref.count_many(STRS)).all()
    g = ref.copy()
    got = g.remove_many(pa.array(STRS[:10]))
    assert got.all() and len(g) == len(STRS) - 10

