"""Threads: batch calls run without the GIL, so two threads can reach one filter at once.
A call that finds the filter in use by another raises ``RuntimeError`` (the borrow error)
and changes nothing; it never corrupts the filter."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from bloomforge import BloomFilter, CountingBloomFilter, CuckooFilter
from conftest import BLOOM_KINDS

N = 300_000


def race(*calls):
    """Runs the calls on threads started together; each result is "ok" or the exception."""
    barrier = threading.Barrier(len(calls))
    results = [None] * len(calls)

    def run(i, call):
        barrier.wait()
        try:
            call()
            results[i] = "ok"
        except BaseException as e:  # noqa: BLE001 - reported to the test
            results[i] = e

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def check_outcome(results):
    for r in results:
        assert r == "ok" or (isinstance(r, RuntimeError) and "borrow" in str(r)), repr(r)


@pytest.mark.parametrize("kind", BLOOM_KINDS)
@pytest.mark.parametrize("form", ["numpy", "list"])
def test_two_writers(kind, form):
    f = BloomFilter(2 * N, kind=kind)
    a = np.arange(0, N, dtype=np.int64)
    b = np.arange(N, 2 * N, dtype=np.int64)
    if form == "list":
        a, b = a.tolist(), b.tolist()
    ra, rb = race(lambda: f.add_many(a), lambda: f.add_many(b))
    check_outcome([ra, rb])
    assert ra == "ok" or rb == "ok"  # at least one of them ran
    for batch, r in ((a, ra), (b, rb)):
        if r == "ok":
            assert f.contains_many(batch).all(), "a key added by a successful call is missing"
    # The filter is intact: it equals a sequential build of what succeeded.
    g = BloomFilter(2 * N, kind=kind)
    for batch, r in ((a, ra), (b, rb)):
        if r == "ok":
            g.add_many(batch)
    assert f == g


def test_writer_and_readers():
    f = BloomFilter(2 * N, kind="blocked")
    base = np.arange(N, dtype=np.int64)
    f.add_many(base)
    more = np.arange(N, 2 * N, dtype=np.int64)
    seen = []
    results = race(
        lambda: f.add_many(more),
        lambda: seen.append(f.contains_many(base)),
        lambda: seen.append(f.contains_many(base)),
    )
    check_outcome(results)
    # Readers never miss a key that was in the filter before they started.
    assert all(s.all() for s in seen)
    if results[0] == "ok":
        assert f.contains_many(more).all()


def test_readers_share():
    f = BloomFilter(N, kind="split-block")
    keys = np.arange(N, dtype=np.int64)
    f.add_many(keys)
    out = []
    results = race(*[lambda: out.append(f.contains_many(keys)) for _ in range(4)])
    assert results == ["ok"] * 4  # shared reads never conflict
    assert len(out) == 4 and all(o.all() for o in out)


@pytest.mark.parametrize("cls", [CountingBloomFilter, CuckooFilter])
def test_two_writers_other_classes(cls):
    f = cls(2 * N)
    a = np.arange(0, N, dtype=np.int64)
    b = np.arange(N, 2 * N, dtype=np.int64)
    ra, rb = race(lambda: f.add_many(a), lambda: f.add_many(b))
    check_outcome([ra, rb])
    expected = sum(N for r in (ra, rb) if r == "ok")
    assert len(f) == expected
    for batch, r in ((a, ra), (b, rb)):
        if r == "ok":
            assert f.contains_many(batch).all()


def test_many_rounds_stay_consistent():
    # Repeated short races on one filter: every success is kept, nothing else changes.
    f = BloomFilter(400_000, kind="blocked", seed=1)
    g = BloomFilter(400_000, kind="blocked", seed=1)
    for r in range(8):
        a = np.arange(r * 50_000, r * 50_000 + 25_000, dtype=np.int64)
        b = np.arange(r * 50_000 + 25_000, (r + 1) * 50_000, dtype=np.int64)
        ra, rb = race(lambda: f.add_many(a), lambda: f.add_many(b))
        check_outcome([ra, rb])
        for batch, res in ((a, ra), (b, rb)):
            if res == "ok":
                g.add_many(batch)
    assert f == g
