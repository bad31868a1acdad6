"""The Python protocol of every class: adding and testing keys, lengths, set operators,
equality, copies, bytes, files, pickling, and the exception each misuse raises."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import bloomforge
from bloomforge import BloomFilter, CountingBloomFilter, CuckooFilter, FormatError, Iblt
from conftest import BLOOM_KINDS, HEADER_LEN, MEMBERSHIP

KEYS = [f"key-{i}" for i in range(1000)]
ABSENT = [f"absent-{i}" for i in range(1000)]


def filled(make, keys=KEYS, n=2000, p=0.01, seed=0):
    f = make(n, p, seed)
    f.add_many(keys)
    return f


def all_classes():
    """One small, non-empty instance of every class."""
    out = {name: filled(make) for name, make in MEMBERSHIP.items()}
    t = Iblt(20)
    t.add_many(KEYS[:100])
    out["iblt"] = t
    return out


# ------------------------------------------------------------------ add / update / in


def test_add_update_in(make):
    f = make(2000)
    for k in KEYS[:300]:
        f.add(k)
    f.update(KEYS[300:600])
    f.add_many(KEYS[600:])
    assert all(k in f for k in KEYS)
    # A filter sized for 2000 keys at 1 % holding 1000: well under 50 of 1000 absent keys
    # read present (binomial, p <= 0.01: P[X >= 50] < 1e-15).
    assert sum(k in f for k in ABSENT) < 50
    assert f.contains_many(KEYS).all()


def test_empty_filter_holds_nothing(make):
    f = make(100)
    assert not any(k in f for k in KEYS[:100])
    assert not f.contains_many(KEYS[:100]).any()
    assert f.false_positive_rate == 0.0


def test_key_types_in_one_filter(make):
    f = make(100)
    keys = ["text", b"bytes", 0, 1, -1, 2**64 - 1, -(2**63), "", b"", "caf\u00e9 \U0001f600"]
    for k in keys:
        f.add(k)
    assert all(k in f for k in keys)


# --------------------------------------------------------------------------- lengths


def test_bloom_has_no_len_but_approx_len(bloom_kind):
    f = BloomFilter(10_000, 0.01, kind=bloom_kind)
    with pytest.raises(TypeError):
        len(f)
    assert f.approx_len() == 0
    f.add_many(range(5000))
    est = f.approx_len()
    # The estimate from the fill is within a few percent at this load (deterministic:
    # fixed keys and seed).
    assert abs(est - 5000) < 0.05 * 5000, est
    f.add_many(range(5000))  # the same keys again: the same bits, the same estimate
    assert f.approx_len() == est


@pytest.mark.parametrize("name", ["counting", "cuckoo"])
def test_len_is_exact(name):
    f = MEMBERSHIP[name](2000)
    assert len(f) == 0
    f.add_many(KEYS[:500])
    assert len(f) == 500
    f.add("key-0")  # once more: counted again
    assert len(f) == 501
    f.remove("key-0")
    f.remove("key-1")
    assert len(f) == 499
    assert f.discard("key-2") is True
    assert len(f) == 498
    f.clear()
    assert len(f) == 0


def test_iblt_has_no_len():
    with pytest.raises(TypeError):
        len(Iblt(10))


# -------------------------------------------------------------------- set operators


def test_bloom_union_intersection(bloom_kind):
    a = BloomFilter(2000, kind=bloom_kind, seed=3)
    b = BloomFilter(2000, kind=bloom_kind, seed=3)
    a.add_many(KEYS[:600])
    b.add_many(KEYS[400:])
    both = BloomFilter(2000, kind=bloom_kind, seed=3)
    both.add_many(KEYS)
    u = a | b
    assert u == both  # the union of bits is the filter of all the keys
    assert all(k in u for k in KEYS)
    i = a & b
    assert all(k in i for k in KEYS[400:600])
    assert i.fill <= min(a.fill, b.fill)
    # The operands are unchanged.
    assert a == filled(lambda n, p, s: BloomFilter(n, p, kind=bloom_kind, seed=s), KEYS[:600], seed=3)

    c = a.copy()
    alias = c
    c |= b
    assert c is alias and c == u
    c = a.copy()
    alias = c
    c &= b
    assert c is alias and c == i


def test_counting_union():
    a = CountingBloomFilter(2000, seed=1)
    b = CountingBloomFilter(2000, seed=1)
    a.add_many(KEYS[:600])
    b.add_many(KEYS[400:])
    u = a | b
    assert len(u) == 1200
    assert all(k in u for k in KEYS)
    assert u.count("key-500") >= 2
    alias = a
    a |= b
    assert a is alias and a == u
    with pytest.raises(TypeError):
        a & b  # counters have no intersection


@pytest.mark.parametrize(
    "left, right, word",
    [
        (dict(kind="blocked"), dict(kind="split-block"), "kind"),
        (dict(kind="standard"), dict(kind="blocked"), "kind"),
        (dict(seed=1), dict(seed=2), "seed"),
        (dict(n=1000), dict(n=3000), "size"),
        (dict(p=0.01), dict(p=0.0001), "size"),
    ],
)
@pytest.mark.parametrize("op", ["|", "&", "|=", "&="])
def test_bloom_incompatible(left, right, word, op):
    def build(d):
        return BloomFilter(d.get("n", 1000), d.get("p", 0.01), kind=d.get("kind", "blocked"),
                           seed=d.get("seed", 0))

    a, b = build(left), build(right)
    a.add("x")
    before = a.copy()
    with pytest.raises(ValueError, match=word):
        if op == "|":
            a | b
        elif op == "&":
            a & b
        elif op == "|=":
            a |= b
        else:
            a &= b
    assert a == before  # nothing changed


@pytest.mark.parametrize(
    "left, right, word",
    [(dict(seed=1), dict(seed=2), "seed"), (dict(n=1000), dict(n=3000), "size")],
)
def test_counting_incompatible(left, right, word):
    a = CountingBloomFilter(left.get("n", 1000), seed=left.get("seed", 0))
    b = CountingBloomFilter(right.get("n", 1000), seed=right.get("seed", 0))
    with pytest.raises(ValueError, match=word):
        a | b
    with pytest.raises(ValueError, match=word):
        a |= b


def test_operators_with_other_types():
    f = BloomFilter(100)
    for other in (1, "x", None, CountingBloomFilter(100)):
        with pytest.raises(TypeError):
            f | other
        with pytest.raises(TypeError):
            f & other
    with pytest.raises(TypeError):
        CountingBloomFilter(100) | BloomFilter(100)
    with pytest.raises(TypeError):
        Iblt(10) - BloomFilter(10)


# ----------------------------------------------------------- equality, copies, clear


def test_equality_copy_clear(make):
    f = filled(make)
    g = filled(make)
    assert f == g and not (f != g)
    assert f != make(2000)
    assert f != filled(make, seed=9)
    assert f != "a filter" and f != None  # noqa: E711
    c = f.copy()
    assert c == f and c is not f
    c.add("another key")
    assert "another key" in c
    assert c.to_bytes() != f.to_bytes()
    assert copy.copy(f) == f and copy.copy(f) is not f
    assert copy.deepcopy(f) == f
    with pytest.raises(TypeError):
        hash(f)  # mutable: unhashable
    f.clear()
    assert f == make(2000)
    assert not any(k in f for k in KEYS)


def test_iblt_equality_copy():
    a, b = Iblt(20), Iblt(20)
    a.add_many(range(100))
    b.add_many(range(100))
    assert a == b and a.copy() == a and copy.deepcopy(a) == a
    b.add(1000)
    assert a != b
    assert a != Iblt(20, seed=1)


# -------------------------------------------------------------------------- repr


@pytest.mark.parametrize("kind", BLOOM_KINDS)
def test_bloom_repr(kind):
    f = BloomFilter(1000, kind=kind)
    f.add_many(range(100))
    r = repr(f)
    assert r.startswith("BloomFilter(")
    for part in (f'kind="{kind}"', f"num_bits={f.num_bits}", f"num_hashes={f.num_hashes}",
                 "fill=", "approx_len=", "false_positive_rate="):
        assert part in r, (part, r)


def test_other_reprs():
    c = CountingBloomFilter(1000)
    c.add_many(range(10))
    r = repr(c)
    assert r.startswith("CountingBloomFilter(") and "len=10" in r
    assert f"num_counters={c.num_counters}" in r and f"num_hashes={c.num_hashes}" in r
    k = CuckooFilter(1000)
    k.add_many(range(10))
    r = repr(k)
    assert r.startswith("CuckooFilter(") and "len=10" in r and "load_factor=" in r
    t = Iblt(10)
    r = repr(t)
    assert r.startswith("Iblt(") and f"cells={t.cells}" in r and "empty=true" in r


# ---------------------------------------------------- false_positive_rate, size


@pytest.mark.parametrize("name", sorted(MEMBERSHIP))
def test_false_positive_rate(name):
    f = MEMBERSHIP[name](10_000, 0.01)
    rates = []
    for lo in range(0, 10_000, 2500):
        f.add_many(range(lo, lo + 2500))
        rates.append(f.false_positive_rate)
    assert all(0 < r < 1 for r in rates)
    assert rates == sorted(rates)  # grows with the load
    # At the expected load the rate is near the target (never far above it).
    assert rates[-1] <= 0.015, rates


@pytest.mark.parametrize("name", sorted(MEMBERSHIP))
@pytest.mark.parametrize("n", [2000, 50_000])
def test_size_in_bytes_matches_serialized(name, n):
    f = MEMBERSHIP[name](n, 0.01)
    payload = len(f.to_bytes()) - HEADER_LEN
    assert abs(f.size_in_bytes - payload) <= 0.05 * payload, (f.size_in_bytes, payload)


def test_iblt_size_in_bytes():
    for d in (50, 1000):
        t = Iblt(d)
        payload = len(t.to_bytes()) - HEADER_LEN
        assert abs(t.size_in_bytes - payload) <= 0.05 * payload


# ------------------------------------------------- bytes, files, pickle, deepcopy


def test_bytes_roundtrip_every_class():
    for name, f in all_classes().items():
        b = f.to_bytes()
        assert isinstance(b, bytes) and b[:4] == b"BLMF", name
        g = type(f).from_bytes(b)
        assert g == f, name
        assert g.to_bytes() == b, name


@pytest.mark.parametrize("kind", BLOOM_KINDS)
def test_bloom_from_bytes_keeps_parameters(kind):
    f = BloomFilter(5000, 0.001, kind=kind, seed=42)
    f.add_many(KEYS)
    g = BloomFilter.from_bytes(f.to_bytes())
    assert (g.kind, g.num_bits, g.num_hashes, g.seed) == (kind, f.num_bits, f.num_hashes, 42)
    assert g.contains_many(KEYS).all()
    assert (g.contains_many(ABSENT) == f.contains_many(ABSENT)).all()


def test_save_load(tmp_path):
    for name, f in all_classes().items():
        p = tmp_path / f"{name}.bf"
        f.save(p)
        assert p.read_bytes() == f.to_bytes()
        assert type(f).load(p) == f, name
        assert type(f).load(str(p)) == f, name  # str paths too


@pytest.mark.parametrize("protocol", range(2, pickle.HIGHEST_PROTOCOL + 1))
def test_pickle_deepcopy(protocol):
    for name, f in all_classes().items():
        g = pickle.loads(pickle.dumps(f, protocol=protocol))
        assert type(g) is type(f) and g == f, name
        assert copy.deepcopy(f) == f
        # Inside a container, shared references survive deepcopy as one object.
        box = copy.deepcopy({"a": f, "b": [f]})
        assert box["a"] == f


def test_pickled_filter_answers_the_same():
    f = BloomFilter(2000, kind="standard", seed=5)
    f.add_many(KEYS)
    g = pickle.loads(pickle.dumps(f))
    assert (g.contains_many(KEYS + ABSENT) == f.contains_many(KEYS + ABSENT)).all()


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("cls", [BloomFilter, CountingBloomFilter, CuckooFilter])
@pytest.mark.parametrize(
    "args, word",
    [
        ((0,), "expected item"),
        ((100, 0.0), "false-positive rate"),
        ((100, 1.0), "false-positive rate"),
        ((100, -0.5), "false-positive rate"),
        ((100, 1.5), "false-positive rate"),
        ((100, float("nan")), "false-positive rate"),
    ],
)
def test_bad_parameters(cls, args, word):
    with pytest.raises(ValueError, match=word):
        cls(*args)


def test_bad_parameters_more():
    with pytest.raises(ValueError, match="kind"):
        BloomFilter(100, kind="cuckoo")
    with pytest.raises(ValueError):
        Iblt(0)
    with pytest.raises((ValueError, MemoryError)):
        BloomFilter(10**18)  # beyond the layout's largest size
    with pytest.raises(OverflowError):
        BloomFilter(-1)
    with pytest.raises(TypeError):
        BloomFilter("100")
    with pytest.raises(ValueError, match="threads"):
        BloomFilter(100).add_many([1, 2], threads=0)
    with pytest.raises(ValueError, match="threads"):
        BloomFilter(100).contains_many([1, 2], threads=0)


BAD_KEYS = [1.5, None, [1], (1,), {"a": 1}, bytearray(b"x"), object()]


@pytest.mark.parametrize("key", BAD_KEYS, ids=lambda k: type(k).__name__)
def test_bad_key_type(make, key):
    f = make(100)
    with pytest.raises(TypeError, match="str, bytes or int"):
        f.add(key)
    with pytest.raises(TypeError):
        key in f  # noqa: B015
    with pytest.raises(TypeError):
        f.add_many(["ok", key])
    with pytest.raises(TypeError):
        f.contains_many([key])
    assert f == make(100)  # a failed batch of objects adds nothing


def test_bad_batches():
    f = BloomFilter(100)
    for batch in ("a string", b"bytes"):
        with pytest.raises(TypeError, match="wrap it in a list"):
            f.add_many(batch)
    for batch in (5, None):
        with pytest.raises(TypeError):
            f.add_many(batch)
    for arr in (np.array([1.0]), np.array([True]), np.array([1], np.int8),
                np.zeros((2, 2), np.int64), np.array(5), np.array(["a"]),
                np.array([1], dtype=">i8")):
        with pytest.raises(TypeError, match="NumPy keys"):
            f.add_many(arr)
    assert f == BloomFilter(100)


@pytest.mark.parametrize("key", [2**64, -(2**63) - 1, 10**30, -(10**30)])
def test_int_out_of_range(make, key):
    f = make(100)
    with pytest.raises(OverflowError):
        f.add(key)
    with pytest.raises(OverflowError):
        key in f  # noqa: B015
    with pytest.raises(OverflowError):
        f.add_many([1, key])
    with pytest.raises(OverflowError):
        Iblt(5).hash_of(key)


def test_int_bounds_accepted(make):
    f = make(100)
    for k in (0, 2**64 - 1, -(2**63), 2**63, 2**63 - 1, True):
        f.add(k)
        assert k in f


def test_format_error_is_value_error():
    assert issubclass(FormatError, ValueError)
    assert FormatError.__module__ == "bloomforge"
    assert bloomforge.FormatError is FormatError


def test_corrupt_and_truncated_bytes():
    for name, f in all_classes().items():
        cls = type(f)
        b = f.to_bytes()
        for bad in (b"", b"BLMF", b[:HEADER_LEN - 1], b[:HEADER_LEN], b[:-1], b + b"\0",
                    b"x" * len(b), b[:4] + b"\xff\xff" + b[6:]):
            with pytest.raises(FormatError):
                cls.from_bytes(bad)
        flipped = bytearray(b)
        flipped[len(b) // 2] ^= 0x10
        with pytest.raises(FormatError):
            cls.from_bytes(bytes(flipped))  # the checksum catches it


def test_wrong_kind_is_format_error():
    objs = all_classes()
    for name, f in objs.items():
        for other_name, g in objs.items():
            if type(f) is type(g):
                continue
            with pytest.raises(FormatError):
                type(f).from_bytes(g.to_bytes())


def test_from_bytes_needs_bytes():
    with pytest.raises(TypeError):
        BloomFilter.from_bytes("BLMF")
    with pytest.raises(TypeError):
        BloomFilter.from_bytes(None)


def test_file_errors(tmp_path):
    missing = tmp_path / "missing.bf"
    for cls in (BloomFilter, CountingBloomFilter, CuckooFilter, Iblt):
        with pytest.raises(FileNotFoundError) as e:
            cls.load(missing)
        assert e.value.filename == str(missing)
        with pytest.raises(OSError) as e:
            cls.load(tmp_path)  # a directory
        assert e.value.filename == str(tmp_path)
    target = tmp_path / "no-such-dir" / "f.bf"
    with pytest.raises(OSError) as e:
        BloomFilter(10).save(target)
    assert e.value.filename == str(target)
    junk = tmp_path / "junk.bf"
    junk.write_bytes(b"not a filter at all, just text\n" * 4)
    with pytest.raises(FormatError):
        BloomFilter.load(junk)
    with pytest.raises(FormatError):
        CountingBloomFilter.load(junk)


@pytest.mark.parametrize("name", ["counting", "cuckoo"])
def test_remove_absent_raises_key_error(name):
    f = MEMBERSHIP[name](2000)
    f.add_many(KEYS)
    before = f.copy()
    for k in ABSENT[:200]:
        if k in f:
            continue  # a false positive: removing it is the documented misuse
        with pytest.raises(KeyError) as e:
            f.remove(k)
        assert e.value.args == (k,)
        assert f.discard(k) is False
    assert f == before
    with pytest.raises(KeyError):
        MEMBERSHIP[name](10).remove(0)


def test_counting_remove_count():
    f = CountingBloomFilter(2000)
    f.add_many(KEYS)
    f.add("key-1")
    assert f.count("key-1") >= 2
    assert f.remove("key-1") == "removed"
    assert "key-1" in f
    assert f.remove("key-1") == "removed"
    counts = f.count_many(KEYS[2:])
    assert counts.dtype == np.uint8 and (counts >= 1).all()
    removed = f.remove_many(KEYS[2:] + ["never added, surely"])
    assert removed.dtype == np.bool_ and removed[:-1].all()
    assert len(f) == 1 and "key-0" in f


def test_counting_saturation():
    f = CountingBloomFilter(100)
    for _ in range(20):
        f.add("hot")
    assert f.count("hot") == 15  # saturated: a lower bound
    assert len(f) == 20
    assert f.remove("hot") == "saturated"
    assert "hot" in f  # a saturated key stays


def test_cuckoo_full_and_all_or_nothing():
    f = CuckooFilter(100)
    f.add_many(range(100))
    probes = list(range(200_000, 201_000))
    answers = f.contains_many(probes)
    with pytest.raises(ValueError, match="full"):
        f.add_many(range(1000, 1200))
    # As before the call: the same keys, the same answers (the table may be rearranged).
    assert len(f) == 100
    assert f.contains_many(range(100)).all()
    assert (f.contains_many(probes) == answers).all()
    with pytest.raises(ValueError, match="full"):
        for k in range(1000, 2000):
            before = f.to_bytes()
            f.add(k)
    assert f.to_bytes() == before  # a failed add changes nothing
    assert 0 < f.load_factor <= 1


def test_iblt_difference():
    a, b = Iblt(50, seed=4), Iblt(50, seed=4)
    a.add_many(range(1000))
    b.add_many(range(10, 1010))
    only_a, only_b = (a - b).list_entries()
    assert only_a.dtype == np.uint64 and only_b.dtype == np.uint64
    assert sorted(only_a.tolist()) == sorted(a.hash_of(k) for k in range(10))
    assert sorted(only_b.tolist()) == sorted(a.hash_of(k) for k in range(1000, 1010))
    assert a.subtract(b) == a - b
    assert (a - a).is_empty() and not a.is_empty()
    c = a.copy()
    c.remove(5)
    c.add(5)
    assert c == a
    # str and bytes are the same key; an int is another.
    assert a.hash_of("5") == a.hash_of(b"5") != a.hash_of(5)
    assert a.hash_of(-1) == a.hash_of(2**64 - 1)


def test_iblt_errors():
    a = Iblt(10)
    a.add_many(range(5000))
    with pytest.raises(ValueError, match="expected_diff"):
        a.list_entries()
    with pytest.raises(ValueError, match="seed"):
        Iblt(10, seed=1) - Iblt(10, seed=2)
    with pytest.raises(ValueError, match="cell"):
        Iblt(10) - Iblt(1000)


def test_counting_stored_key_count_out_of_range():
    from conftest import reseal

    f = CountingBloomFilter(100)
    f.add("a")
    b = bytearray(f.to_bytes())
    for count in (2**63, 2**64 - 1):
        b[32:40] = count.to_bytes(8, "little")  # the header's key count
        with pytest.raises(FormatError, match="key count"):
            CountingBloomFilter.from_bytes(reseal(bytes(b)))
    b[32:40] = (2**63 - 1).to_bytes(8, "little")
    assert len(CountingBloomFilter.from_bytes(reseal(bytes(b)))) == 2**63 - 1


@pytest.mark.parametrize("kind", ["split-block", "blocked", "standard"])
def test_bits_is_a_memoryview_of_the_payload(kind):
    f = bloomforge.BloomFilter(1000, 0.01, kind=kind)
    f.update(["a", "b", 7])
    view = f.bits()
    assert isinstance(view, memoryview) and view.readonly
    assert view.tobytes() == f.to_bytes()[64:]
    ones = sum(bin(b).count("1") for b in view.tobytes())
    assert ones == round(f.fill * f.num_bits)
