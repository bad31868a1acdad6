"""``GuavaBloomFilter``, ``SparkBloomFilter``, ``read_foreign_filter`` and the Parquet
functions.

- Bit for bit against the filters Guava and Spark wrote (``crates/interop/tests/data``,
  see its README): the same parameters and keys give the same ``to_bytes()``, from a list,
  NumPy and pyarrow alike; ``from_bytes`` of their bytes answers every probe as the
  library did.
- The Python protocol: pickle, copies, operators and their errors, parameters, key types,
  bad and truncated bytes.
- The Parquet retrofit: a file written by pyarrow, indexed, reads back the same, and its
  filters answer probes (and agree with DuckDB's ``parquet_bloom_probe`` when it has one).
"""

from __future__ import annotations

import copy
import csv
import pickle

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bloomforge
from bloomforge import (
    BloomFilter,
    FormatError,
    GuavaBloomFilter,
    SparkBloomFilter,
    read_foreign_filter,
)
from conftest import REPO_ROOT

DATA = REPO_ROOT / "crates" / "interop" / "tests" / "data"
U64 = (1 << 64) - 1


# ------------------------------------------------------------------------- fixtures


def read_keys(name: str) -> list:
    """A key file: ``s:<hex>`` a str, ``b:<hex>`` bytes, ``l:<int>`` an int."""
    keys = []
    for line in (DATA / name).read_text(encoding="utf-8").splitlines():
        kind, _, value = line.partition(":")
        if kind == "s":
            keys.append(bytes.fromhex(value).decode("utf-8"))
        elif kind == "b":
            keys.append(bytes.fromhex(value))
        elif kind == "l":
            keys.append(int(value))
        else:
            raise AssertionError(f"{name}: bad line {line!r}")
    return keys


def read_fixtures() -> list[dict]:
    with open(DATA / "fixtures.tsv", encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


FIXTURES = read_fixtures()
KEYS = {name: read_keys(name) for name in {r[c] for r in FIXTURES for c in ("keys", "probes")}}


def build(row: dict):
    """An empty filter of a fixture's parameters."""
    n, p = int(row["expected_items"]), float(row["fpp"])
    if row["system"] == "guava":
        return GuavaBloomFilter(n, p, strategy=row["version"])
    return SparkBloomFilter(n, p, version=int(row["version"]), seed=int(row["seed"]))


def expected_bytes(row: dict) -> bytes:
    return (DATA / f"{row['name']}.bin").read_bytes()


def expected_answers(row: dict) -> np.ndarray:
    line = (DATA / f"{row['name']}.answers").read_text(encoding="ascii").strip()
    return np.frombuffer(line.encode(), dtype=np.uint8) == ord("1")


def batch_forms(keys: list) -> dict:
    """The same keys as every batch the classes take (lists always; NumPy and Arrow when
    the keys are of one type)."""
    forms = {"list": keys, "tuple": tuple(keys), "generator": (k for k in keys)}
    if all(isinstance(k, int) for k in keys):
        i64 = np.array(keys, dtype=np.int64)
        forms.update({
            "numpy int64": i64,
            "numpy uint64 (same bits)": i64.view(np.uint64),
            "numpy int64 strided": np.stack([i64, i64], axis=1)[:, 0],
            "ints from 2**63 as the same bits": [k & U64 for k in keys],
            "pyarrow int64": pa.array(keys, pa.int64()),
            "pyarrow uint64": pa.array(i64.view(np.uint64), pa.uint64()),
            "pyarrow chunked": pa.chunked_array([keys[:700], keys[700:]], pa.int64()),
        })
    elif all(isinstance(k, str) for k in keys):
        forms.update({
            "pyarrow string": pa.array(keys, pa.string()),
            "pyarrow large_string": pa.array(keys, pa.large_string()),
            "pyarrow string_view": pa.array(keys, pa.string_view()),
            "utf-8 bytes": [k.encode() for k in keys],
            "pyarrow binary of the utf-8": pa.array([k.encode() for k in keys], pa.binary()),
        })
    elif all(isinstance(k, bytes) for k in keys):
        forms.update({
            "pyarrow binary": pa.array(keys, pa.binary()),
            "pyarrow large_binary": pa.array(keys, pa.large_binary()),
            "pyarrow binary_view": pa.array(keys, pa.binary_view()),
            "bytearray": [bytearray(k) for k in keys],
            "memoryview": [memoryview(k) for k in keys],
        })
    return forms


def fixture_id(row):
    return row["name"]


@pytest.fixture(params=FIXTURES, ids=fixture_id)
def fixture(request):
    return request.param


def test_manifest_covers_both_systems():
    systems = {(r["system"], r["version"]) for r in FIXTURES}
    assert systems == {("guava", "MURMUR128_MITZ_64"), ("guava", "MURMUR128_MITZ_32"),
                       ("spark", "1"), ("spark", "2")}


# ------------------------------------------------------------------- bit for bit


def test_built_one_key_at_a_time_writes_the_library_bytes(fixture):
    f = build(fixture)
    assert f.num_bits == int(fixture["num_bits"])
    assert f.size_in_bytes * 8 == f.num_bits
    for k in KEYS[fixture["keys"]]:
        f.add(k)
    assert f.to_bytes() == expected_bytes(fixture)


def test_every_batch_form_writes_the_library_bytes(fixture):
    want = expected_bytes(fixture)
    for form, keys in batch_forms(KEYS[fixture["keys"]]).items():
        f = build(fixture)
        f.add_many(keys)
        assert f.to_bytes() == want, form
    g = build(fixture)
    g.update(KEYS[fixture["keys"]])
    assert g.to_bytes() == want


def test_library_bytes_answer_the_probes_as_the_library(fixture):
    want = expected_answers(fixture)
    probes = KEYS[fixture["probes"]]
    assert len(want) == len(probes)
    cls = GuavaBloomFilter if fixture["system"] == "guava" else SparkBloomFilter
    f = cls.from_bytes(expected_bytes(fixture))
    assert f.num_bits == int(fixture["num_bits"])
    assert f.to_bytes() == expected_bytes(fixture)
    for form, keys in batch_forms(probes).items():
        got = f.contains_many(keys)
        assert got.dtype == np.bool_ and got.shape == want.shape, form
        assert (got == want).all(), (form, int((got != want).sum()))
    assert [k in f for k in probes[:300]] == want[:300].tolist()
    # Every key that went in is present.
    assert f.contains_many(KEYS[fixture["keys"]]).all()


def test_read_foreign_filter_tells_the_formats_apart(fixture):
    f = read_foreign_filter(expected_bytes(fixture))
    if fixture["system"] == "guava":
        assert type(f) is GuavaBloomFilter and f.strategy == fixture["version"]
    else:
        assert type(f) is SparkBloomFilter and f.version == int(fixture["version"])
        assert f.seed == int(fixture["seed"])
    assert f.to_bytes() == expected_bytes(fixture)


def test_parameters_match_the_manifest(fixture):
    f = build(fixture)
    if fixture["system"] == "guava":
        assert f.strategy == fixture["version"]
    else:
        assert (f.version, f.seed) == (int(fixture["version"]), int(fixture["seed"]))
    assert f.fill == 0 and f.false_positive_rate == 0 and f.approx_len() == 0


def test_known_sizes():
    # BloomFilter.create(funnel, 10_000, 0.01) in Guava: 95,872 bits, 7 hash functions.
    g = GuavaBloomFilter(10_000, 0.01)
    assert (g.num_bits, g.num_hashes, g.strategy) == (95_872, 7, "MURMUR128_MITZ_64")
    # The defaults are Guava's and Spark's: 3 %.
    assert GuavaBloomFilter(1000) == GuavaBloomFilter(1000, 0.03)
    s = SparkBloomFilter(1000)
    assert s == SparkBloomFilter(1000, 0.03, version=2, seed=0)
    assert (s.version, s.seed) == (2, 0)
    # Guava takes 0 expected items as 1.
    assert GuavaBloomFilter(0, 0.01) == GuavaBloomFilter(1, 0.01)


# -------------------------------------------------------------------------- threads


@pytest.mark.parametrize("cls", [GuavaBloomFilter, SparkBloomFilter])
def test_threads_give_the_same_bits_and_answers(cls):
    n = (1 << 20) + 12_345
    keys = np.arange(n, dtype=np.int64) * 7919
    one = cls(n, 0.01)
    one.add_many(keys)
    two = cls(n, 0.01)
    two.add_many(keys, threads=2)
    assert one == two
    strs = pa.array([f"k{i}" for i in range(n)], pa.string())
    a, b = cls(n, 0.01), cls(n, 0.01)
    a.add_many(strs)
    b.add_many(strs, threads=3)
    assert a == b
    probes = np.arange(n, dtype=np.int64) * 7919 + 1
    serial = one.contains_many(probes, threads=1)
    assert (one.contains_many(probes) == serial).all()
    assert (one.contains_many(probes, threads=2) == serial).all()
    assert one.contains_many(keys).all()
    with pytest.raises(ValueError, match="threads"):
        one.add_many(keys, threads=0)
    with pytest.raises(ValueError, match="threads"):
        one.contains_many(keys, threads=0)


# ------------------------------------------------------------------------- protocol

GUAVA_KEYS = [f"user-{i}" for i in range(500)]


def samples():
    """One small, non-empty filter of each class and variant."""
    out = {
        "guava": GuavaBloomFilter(300, 0.01),
        "guava-mitz32": GuavaBloomFilter(300, 0.01, strategy="MURMUR128_MITZ_32"),
        "spark-v1": SparkBloomFilter(300, 0.01, version=1),
        "spark-v2-seed": SparkBloomFilter(300, 0.01, seed=-17),
    }
    for f in out.values():
        f.add_many(GUAVA_KEYS[:200])
    return out


INTEROP_SAMPLES = samples()


@pytest.fixture(params=sorted(INTEROP_SAMPLES))
def sample(request):
    return INTEROP_SAMPLES[request.param].copy()


def test_roundtrips(sample, tmp_path):
    cls = type(sample)
    b = sample.to_bytes()
    assert cls.from_bytes(b) == sample
    assert read_foreign_filter(b) == sample
    assert pickle.loads(pickle.dumps(sample)) == sample
    assert copy.copy(sample) == sample and copy.deepcopy(sample) == sample
    assert sample.copy() is not sample and sample.copy() == sample
    p = tmp_path / "f.bin"
    sample.save(p)
    assert p.read_bytes() == b
    assert cls.load(p) == sample and cls.load(str(p)) == sample
    with pytest.raises(FileNotFoundError):
        cls.load(tmp_path / "missing.bin")
    assert repr(sample).startswith(cls.__name__ + "(")
    with pytest.raises(TypeError):
        hash(sample)
    with pytest.raises(TypeError):
        len(sample)


def test_copies_are_independent(sample):
    c = sample.copy()
    c.add("only-in-the-copy")
    assert "only-in-the-copy" in c
    d = copy.deepcopy(sample)
    d.clear()
    assert d.fill == 0 and "user-0" not in d and "user-0" in sample


def test_state(sample):
    assert all(k in sample for k in GUAVA_KEYS[:200])
    assert sample.contains_many(GUAVA_KEYS[:200]).all()
    # 300 probes never added, at about 1 % (a filter for 300 keys holding 200): far under
    # 30 read present (binomial, p <= 0.01: P[X >= 30] < 1e-12).
    assert sample.contains_many(GUAVA_KEYS[200:]).sum() < 30
    assert 0 < sample.fill < 1
    assert sample.expected_false_pos == sample.false_positive_rate
    assert sample.false_positive_rate == pytest.approx(sample.fill ** sample.num_hashes)
    # The estimate from the fill is within 10 % at this load (fixed keys: deterministic).
    assert abs(sample.approx_len() - 200) < 20, sample.approx_len()
    sample.clear()
    assert sample.fill == 0 and not sample.contains_many(GUAVA_KEYS).any()


def test_union_and_intersection(sample):
    a = type(sample).from_bytes(sample.to_bytes())
    a.clear()
    b = a.copy()
    a.add_many(GUAVA_KEYS[:100])
    b.add_many(GUAVA_KEYS[50:150])
    u = a | b
    assert u.contains_many(GUAVA_KEYS[:150]).all()
    i = a & b
    assert i.contains_many(GUAVA_KEYS[50:100]).all()
    assert i.fill <= min(a.fill, b.fill)
    c = a.copy()
    c |= b
    assert c == u
    c = a.copy()
    c &= b
    assert c == i
    # Union with itself changes nothing.
    assert (a | a) == a and (a & a) == a


def test_incompatible_filters_do_not_combine():
    g = GuavaBloomFilter(1000, 0.01)
    for other in (GuavaBloomFilter(2000, 0.01), GuavaBloomFilter(1000, 0.001),
                  GuavaBloomFilter(1000, 0.01, strategy="MURMUR128_MITZ_32")):
        for op in (lambda a, b: a | b, lambda a, b: a & b):
            with pytest.raises(ValueError, match="incompatible"):
                op(g, other)
        before = g.to_bytes()
        with pytest.raises(ValueError, match="incompatible"):
            g |= other
        assert g.to_bytes() == before
    s = SparkBloomFilter(1000, 0.01)
    for other in (SparkBloomFilter(1000, 0.01, seed=1), SparkBloomFilter(1000, 0.01, version=1),
                  SparkBloomFilter(999_999, 0.01)):
        with pytest.raises(ValueError, match="incompatible"):
            s | other
        with pytest.raises(ValueError, match="incompatible"):
            s &= other
    # Different classes: the operators do not apply.
    with pytest.raises(TypeError):
        g | s
    with pytest.raises(TypeError):
        s | BloomFilter(1000)
    assert g != s and g != g.to_bytes() and s != None  # noqa: E711


def test_parameters_are_checked():
    for p in (0.0, 1.0, 1.5, -0.1, float("nan")):
        with pytest.raises(ValueError, match="false-positive rate"):
            GuavaBloomFilter(100, p)
        with pytest.raises(ValueError, match="false-positive rate"):
            SparkBloomFilter(100, p)
    with pytest.raises(ValueError, match="strategy"):
        GuavaBloomFilter(100, strategy="MURMUR3")
    assert GuavaBloomFilter(100, strategy="murmur128_mitz_32").strategy == "MURMUR128_MITZ_32"
    with pytest.raises(ValueError, match="[Ee]xpected"):
        SparkBloomFilter(0)
    with pytest.raises(ValueError, match="version"):
        SparkBloomFilter(100, version=3)
    with pytest.raises(ValueError, match="seed"):
        SparkBloomFilter(100, seed=2**31)
    with pytest.raises(ValueError, match="seed"):
        SparkBloomFilter(100, version=1, seed=5)
    assert SparkBloomFilter(100, seed=-(2**31)).seed == -(2**31)
    with pytest.raises(OverflowError):
        GuavaBloomFilter(-1)
    with pytest.raises(ValueError):
        GuavaBloomFilter(2**63)
    # Guava: a tiny filter at a large rate has zero bits.
    with pytest.raises(ValueError, match="0 bits"):
        GuavaBloomFilter(1, 0.9)


# ---------------------------------------------------------------------------- keys


@pytest.mark.parametrize("cls", [GuavaBloomFilter, SparkBloomFilter])
def test_key_types(cls):
    f = cls(100, 0.01)
    f.add("caf\u00e9")
    # A str is its UTF-8 bytes; bytes-like objects are their bytes.
    for same in ("caf\u00e9", "caf\u00e9".encode(), bytearray("caf\u00e9".encode()),
                 memoryview("caf\u00e9".encode())):
        assert same in f
    g = cls(100, 0.01)
    g.add(b"caf\xc3\xa9")
    assert g == f
    # An int is a Java long: from 2**63 on, the long of the same bits; NumPy integers too.
    f.add(-1)
    assert U64 in f and np.int64(-1) in f and np.uint64(U64) in f
    h = cls(100, 0.01)
    h.add(np.uint64(U64))
    h.add("caf\u00e9")
    assert h == f
    for bad in (1.5, None, object(), ["x"]):
        with pytest.raises(TypeError):
            f.add(bad)
        with pytest.raises(TypeError):
            bad in f  # noqa: B015
    for big in (2**64, -(2**63) - 1):
        with pytest.raises(OverflowError):
            f.add(big)
        with pytest.raises(OverflowError):
            f.add_many([1, big])
    # A long and its decimal string are different keys.
    e = cls(1000, 0.0001)
    e.add(7)
    assert "7" not in e


@pytest.mark.parametrize("cls", [GuavaBloomFilter, SparkBloomFilter])
def test_batches_are_checked_before_any_key_is_applied(cls):
    f = cls(100, 0.01)
    before = f.to_bytes()
    with pytest.raises(TypeError):
        f.add_many(["a", "b", 1.5, "c"])
    with pytest.raises(OverflowError):
        f.add_many(["a", 2**64])
    with pytest.raises(UnicodeEncodeError):
        f.add_many(["a", "\ud800"])
    assert f.to_bytes() == before
    with pytest.raises(TypeError, match="wrap it in a list"):
        f.add_many("abc")
    with pytest.raises(TypeError, match="wrap it in a list"):
        f.contains_many(b"abc")
    with pytest.raises(ValueError, match="null"):
        f.add_many(pa.array(["a", None]))
    with pytest.raises(TypeError):
        f.add_many(np.array([1.5, 2.5]))
    with pytest.raises(TypeError):
        f.add_many(pa.array([1.5]))
    assert f.to_bytes() == before
    # Empty batches of every form.
    for empty in ([], np.array([], np.int64), pa.array([], pa.string()), pa.array([])):
        f.add_many(empty)
        assert f.contains_many(empty).shape == (0,)
    assert f.to_bytes() == before


@pytest.mark.parametrize("cls", [GuavaBloomFilter, SparkBloomFilter])
def test_int32_batches_are_longs(cls):
    keys = list(range(-500, 500))
    f = cls(1000, 0.01)
    f.add_many(keys)
    for form in (np.array(keys, np.int32), pa.array(keys, pa.int32()),
                 np.arange(0, 500, dtype=np.uint32), pa.array(range(500), pa.uint32())):
        assert f.contains_many(form).all()
    g = cls(1000, 0.01)
    g.add_many(np.array(keys, np.int32))
    assert g == f


def test_polars_and_pandas_series():
    pl = pytest.importorskip("polars")
    keys = KEYS["keys-strings.txt"]
    f = GuavaBloomFilter(1000, 0.01)
    f.add_many(keys)
    g = GuavaBloomFilter(1000, 0.01)
    g.add_many(pl.Series(keys))
    assert g == f
    pd = pytest.importorskip("pandas")
    h = GuavaBloomFilter(1000, 0.01)
    h.add_many(pa.chunked_array([pa.array(keys)]).to_pandas(types_mapper=pd.ArrowDtype))
    assert h == f


# --------------------------------------------------------------------------- bytes


def one_line(e: BaseException) -> str:
    msg = str(e)
    assert msg and "\n" not in msg, msg
    return msg


def test_bad_bytes_raise_format_error():
    spark = SparkBloomFilter(100).to_bytes()
    guava = GuavaBloomFilter(100).to_bytes()
    for cls in (GuavaBloomFilter, SparkBloomFilter):
        for bad in (b"", b"\x01", b"not a filter", b"\x07\x03\x00\x00\x00\x01" + bytes(8),
                    b"\x00\x00\x00\x09" + bytes(20)):
            with pytest.raises(FormatError) as e:
                cls.from_bytes(bad)
            one_line(e.value)
            assert isinstance(e.value, ValueError)
    # The other system's bytes: the message names the class that reads them.
    with pytest.raises(FormatError, match="SparkBloomFilter") as e:
        GuavaBloomFilter.from_bytes(spark)
    one_line(e.value)
    with pytest.raises(FormatError, match="GuavaBloomFilter") as e:
        SparkBloomFilter.from_bytes(guava)
    one_line(e.value)
    # bloomforge's own format.
    own = BloomFilter(100).to_bytes()
    for read in (GuavaBloomFilter.from_bytes, SparkBloomFilter.from_bytes, read_foreign_filter):
        with pytest.raises(FormatError, match="bloomforge's own format") as e:
            read(own)
        one_line(e.value)
    # Bytes after the filter.
    for cls, b in ((GuavaBloomFilter, guava), (SparkBloomFilter, spark)):
        with pytest.raises(FormatError, match="after"):
            cls.from_bytes(b + b"\x00")
    with pytest.raises(FormatError) as e:
        read_foreign_filter(b"\xff\xff")
    one_line(e.value)
    with pytest.raises(FormatError):
        read_foreign_filter(b"")


def test_bad_bytes_in_files(tmp_path):
    p = tmp_path / "bad.bin"
    p.write_bytes(b"\x01\x05\x00\x00\x00\x02" + bytes(7))
    with pytest.raises(FormatError, match="truncated"):
        GuavaBloomFilter.load(p)


def test_every_truncation_of_every_fixture_is_refused(fixture):
    data = expected_bytes(fixture)
    cls = GuavaBloomFilter if fixture["system"] == "guava" else SparkBloomFilter
    cuts = sorted(set(range(0, 40)) | set(range(len(data) - 40, len(data)))
                  | set(range(0, len(data), 97)))
    for cut in cuts:
        if 0 <= cut < len(data):
            with pytest.raises(FormatError):
                cls.from_bytes(data[:cut])
            with pytest.raises(FormatError):
                read_foreign_filter(data[:cut])


def exercise(f):
    """A decoded filter works: query, add, serialize, re-read."""
    repr(f)
    assert type(f).from_bytes(f.to_bytes()) == f
    for k in (0, 1, U64, "x", b"y", -1):
        k in f  # noqa: B015
    assert f.contains_many(range(50)).shape == (50,)
    f.add(12)
    f.add_many(range(100, 400))
    assert 12 in f and f.contains_many(range(100, 400)).all()
    f.approx_len()
    f.false_positive_rate
    assert type(f).from_bytes(f.to_bytes()) == f
    f | f


def decode(read, data):
    try:
        f = read(data)
    except (FormatError, MemoryError):
        return
    exercise(f)


READERS = [GuavaBloomFilter.from_bytes, SparkBloomFilter.from_bytes, read_foreign_filter]


@settings(max_examples=300)
@given(data=st.binary(max_size=200), read=st.sampled_from(READERS))
def test_from_arbitrary_bytes(data, read):
    decode(read, data)


@settings(max_examples=300)
@given(name=st.sampled_from(sorted(INTEROP_SAMPLES)), read=st.sampled_from(READERS),
       edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), max_size=4),
       cut=st.one_of(st.none(), st.integers(0, 10**6)))
def test_from_damaged_bytes(name, read, edits, cut):
    data = bytearray(INTEROP_SAMPLES[name].to_bytes())
    for at, x in edits:
        data[at % len(data)] ^= x
    if cut is not None:
        data = data[: cut % (len(data) + 1)]
    decode(read, bytes(data))


@settings(max_examples=100)
@given(k=st.integers(1, 255), words=st.integers(-(2**31), 2**31 - 1),
       tail=st.binary(max_size=64), strategy=st.integers(0, 1))
def test_guava_headers(k, words, tail, strategy):
    # A header that claims more words than the bytes hold is refused before allocating.
    data = bytes([strategy, k]) + words.to_bytes(4, "big", signed=True) + tail
    decode(GuavaBloomFilter.from_bytes, data)


@settings(max_examples=100)
@given(version=st.integers(1, 2), k=st.integers(-(2**31), 2**31 - 1),
       words=st.integers(-(2**31), 2**31 - 1), tail=st.binary(max_size=64))
def test_spark_headers(version, k, words, tail):
    head = version.to_bytes(4, "big") + k.to_bytes(4, "big", signed=True)
    if version == 2:
        head += (7).to_bytes(4, "big")
    decode(SparkBloomFilter.from_bytes, head + words.to_bytes(4, "big", signed=True) + tail)


# ------------------------------------------------------------------------- Parquet


def write_table(path, rows=10_000, row_group_size=2_500):
    table = pa.table({
        "url": [f"https://example.org/{i}" for i in range(rows)],
        "id": pa.array(range(rows), pa.int64()),
        "score": pa.array([i * 0.5 for i in range(rows)], pa.float64()),
    })
    pq.write_table(table, path, row_group_size=row_group_size)
    return table


def test_parquet_index_keeps_the_data_and_adds_filters(tmp_path):
    src, dst = tmp_path / "plain.parquet", tmp_path / "indexed.parquet"
    table = write_table(src)
    report = bloomforge.parquet_index(src, dst, columns=["url", "id"], false_positive_rate=0.01)
    assert report["row_groups"] == 4 and report["rows"] == 10_000
    assert [c["column"] for c in report["columns"]] == ["url", "id"]
    for c in report["columns"]:
        assert c["row_groups_indexed"] == 4 and c["row_groups_kept"] == 0
        assert c["distinct_values"] == 10_000
        assert c["filter_bytes"] > 0
        assert 0 < c["false_positive_rate"] <= c["max_false_positive_rate"] < 0.02
    assert report["filters_kept"] == 0
    assert report["output_bytes"] == dst.stat().st_size
    # The data reads back the same, in the same row groups.
    assert pq.read_table(dst).equals(table)
    meta_src, meta_dst = pq.ParquetFile(src).metadata, pq.ParquetFile(dst).metadata
    assert meta_dst.num_row_groups == meta_src.num_row_groups
    for rg in range(meta_src.num_row_groups):
        assert meta_dst.row_group(rg).num_rows == meta_src.row_group(rg).num_rows
    # Filters: the two named columns in every row group, none for the third.
    info = bloomforge.parquet_filters(str(dst))
    assert len(info) == 4 * 3
    for i in info:
        assert set(i) == {"row_group", "column", "physical_type", "rows", "filter"}
        if i["column"] == "score":
            assert i["filter"] is None
        else:
            assert i["filter"]["bitset_bytes"] > 0
            assert i["filter"]["false_positive_rate"] < 0.02
            assert abs(i["filter"]["estimated_distinct"] - 2500) < 250
    assert {i["physical_type"] for i in info} == {"BYTE_ARRAY", "INT64", "DOUBLE"}
    assert all(i["filter"] is None for i in bloomforge.parquet_filters(src))


def test_parquet_probe(tmp_path):
    src, dst = tmp_path / "plain.parquet", tmp_path / "indexed.parquet"
    write_table(src)
    bloomforge.parquet_index(src, dst, columns="url")
    # A value is "may_contain" in its row group (never a false negative).
    for i in (0, 2499, 2500, 9999):
        answers = bloomforge.parquet_probe(dst, "url", f"https://example.org/{i}")
        assert [a["row_group"] for a in answers] == [0, 1, 2, 3]
        assert all(a["rows"] == 2500 for a in answers)
        assert answers[i // 2500]["answer"] == "may_contain"
    # Values in no row group are absent from nearly all: 200 values x 4 row groups at
    # about 1 %: well under 40 false positives (binomial: P[X >= 40] < 1e-12).
    hits = sum(a["answer"] == "may_contain"
               for v in range(200)
               for a in bloomforge.parquet_probe(dst, "url", f"https://example.net/{v}"))
    assert hits < 40
    assert {a["answer"] for a in bloomforge.parquet_probe(dst, "id", 5)} == {"no_filter"}
    assert {a["answer"] for a in bloomforge.parquet_probe(src, "url", "x")} == {"no_filter"}


def test_parquet_probe_value_types(tmp_path):
    src = tmp_path / "t.parquet"
    write_table(src, rows=1000, row_group_size=1000)
    bloomforge.parquet_index(src, columns=["url", "id", "score"])  # in place
    may = [{"row_group": 0, "rows": 1000, "answer": "may_contain"}]
    assert bloomforge.parquet_probe(src, "id", 17) == may
    assert bloomforge.parquet_probe(src, "id", np.int64(17)) == may
    assert bloomforge.parquet_probe(src, "id", "17") == may  # text, parsed for the column
    assert bloomforge.parquet_probe(src, "id", (17).to_bytes(8, "little")) == may
    assert bloomforge.parquet_probe(src, "score", 8.5) == may
    assert bloomforge.parquet_probe(src, "url", b"https://example.org/3") == may
    assert bloomforge.parquet_probe(src, "url", bytearray(b"https://example.org/3")) == may
    with pytest.raises(TypeError):
        bloomforge.parquet_probe(src, "id", None)
    with pytest.raises(TypeError):
        bloomforge.parquet_probe(src, "id", True)
    with pytest.raises(ValueError):
        bloomforge.parquet_probe(src, "id", "not a number")
    with pytest.raises(OverflowError):
        bloomforge.parquet_probe(src, "id", 2**64)


def test_parquet_index_in_place_and_keep_existing(tmp_path):
    path = tmp_path / "t.parquet"
    table = write_table(path, rows=4000, row_group_size=1000)
    first = bloomforge.parquet_index(str(path), columns=["id"], false_positive_rate=0.1)
    assert pq.read_table(path).equals(table)
    before = {(i["row_group"], i["column"]): i["filter"] for i in bloomforge.parquet_filters(path)}
    # Keep the id filters, add the url ones: the id filters stay as they were.
    report = bloomforge.parquet_index(path, columns=["id", "url"], keep_existing=True,
                                      false_positive_rate=0.001)
    by_col = {c["column"]: c for c in report["columns"]}
    assert by_col["id"]["row_groups_kept"] == 4 and by_col["id"]["row_groups_indexed"] == 0
    assert by_col["url"]["row_groups_indexed"] == 4
    after = {(i["row_group"], i["column"]): i["filter"] for i in bloomforge.parquet_filters(path)}
    for rg in range(4):
        assert after[(rg, "id")] == before[(rg, "id")]
        assert after[(rg, "url")] is not None
    # Naming a column alone replaces its filters; the others' are carried over.
    report = bloomforge.parquet_index(path, columns=["id"], false_positive_rate=0.001)
    assert report["filters_kept"] == 4
    assert report["columns"][0]["false_positive_rate"] < first["columns"][0]["false_positive_rate"]
    assert pq.read_table(path).equals(table)


def test_parquet_errors(tmp_path):
    src = tmp_path / "t.parquet"
    write_table(src, rows=100, row_group_size=100)
    out = tmp_path / "out.parquet"
    with pytest.raises(ValueError, match="nope") as e:
        bloomforge.parquet_index(src, out, columns=["nope"])
    one_line(e.value)
    assert not out.exists()
    with pytest.raises(ValueError):
        bloomforge.parquet_index(src, out, columns=[])
    with pytest.raises(ValueError):
        bloomforge.parquet_index(src, out, columns=["id"], false_positive_rate=1.5)
    with pytest.raises(TypeError):
        bloomforge.parquet_index(src, out)  # columns is required
    with pytest.raises(FileNotFoundError):
        bloomforge.parquet_index(tmp_path / "missing.parquet", out, columns=["id"])
    with pytest.raises(FileNotFoundError):
        bloomforge.parquet_filters(tmp_path / "missing.parquet")
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"not parquet at all" * 10)
    for call in (lambda: bloomforge.parquet_filters(junk),
                 lambda: bloomforge.parquet_probe(junk, "id", 1),
                 lambda: bloomforge.parquet_index(junk, out, columns=["id"])):
        with pytest.raises(ValueError):
            call()
    with pytest.raises(ValueError, match="nope"):
        bloomforge.parquet_probe(src, "nope", 1)
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_duckdb_reads_the_filters(tmp_path):
    duckdb = pytest.importorskip("duckdb")
    src, dst = tmp_path / "plain.parquet", tmp_path / "indexed.parquet"
    write_table(src, rows=4000, row_group_size=1000)
    bloomforge.parquet_index(src, dst, columns=["url", "id"])
    con = duckdb.connect()
    try:
        rows = con.execute(
            "SELECT row_group_id, bloom_filter_excludes FROM parquet_bloom_probe(?, 'url', ?) "
            "ORDER BY row_group_id",
            [str(dst), "https://example.org/1500"],
        ).fetchall()
    except duckdb.Error as e:  # an older DuckDB without parquet_bloom_probe
        pytest.skip(f"DuckDB cannot probe Parquet Bloom filters: {e}")
    # DuckDB reads the filters: the row group that holds the value is not excluded, and
    # it agrees with parquet_probe on every row group.
    ours = bloomforge.parquet_probe(dst, "url", "https://example.org/1500")
    assert [bool(x) for _, x in rows] == [a["answer"] == "absent" for a in ours]
    assert rows[1][1] is False
    rows = con.execute(
        "SELECT bloom_filter_excludes FROM parquet_bloom_probe(?, 'id', 3999) "
        "ORDER BY row_group_id", [str(dst)]).fetchall()
    assert rows[3][0] is False
    assert con.execute("SELECT count(*) FROM read_parquet(?) WHERE id = 3999",
                       [str(dst)]).fetchone()[0] == 1
