"""bloomforge against the Python Bloom-filter packages, side by side in one run.

    python crates/python/bench/bench.py [--n 10000000] [--loop-n 1000000] [--markdown OUT]

Installs nothing by itself: peers that are not importable are left out of the table (pip
install rbloom pybloomfiltermmap3 pyprobables fastbloom-rs abloom to include them). Every
filter is sized for `--n` keys at 1 % and every timed call checks its answers (members
must all be found; the false positives of non-members must stay near 1 %), so a wrong
filter cannot post a fast number.

Columns: ns per key, median of `--reps` runs. "add loop" / "in loop": a Python `for` loop
of one call per key over `--loop-n` keys (the call overhead a user pays); "add batch" /
"contains batch": one call over all `--n` keys (NumPy uint64 array, or a pyarrow string
array for URLs), where the package has one; "build from column": a filter of a pandas,
Polars or pyarrow column of URLs.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import tempfile
import time

import numpy as np

import bloomforge

FP = 0.01


def timed(fn, reps):
    """Median seconds of `reps` calls of `fn` (each call gets a fresh setup from fn)."""
    times = []
    result = None
    for _ in range(reps):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def urls(n, offset=0):
    return [f"https://example.com/{i * 2654435761 % 1000003}/page/{i}" for i in range(offset, offset + n)]


def check_members(found, what):
    if not all(found):
        raise SystemExit(f"WRONG ANSWER: {what} missed a member")


def check_fp(hits, total, what, limit=0.02):
    rate = hits / total
    if rate > limit:
        raise SystemExit(f"WRONG ANSWER: {what} false-positive rate {rate:.4f} > {limit}")
    return rate


class Peer:
    """One package's filter, with whatever batch calls it has."""

    name = ""

    def new(self, n):
        raise NotImplementedError

    def add(self, f, key):
        f.add(key)

    def contains(self, f, key):
        return key in f

    add_batch_ints = None
    contains_batch_ints = None


class Bloomforge(Peer):
    name = "bloomforge"

    def new(self, n):
        return bloomforge.BloomFilter(n, FP)

    def add_batch_ints(self, f, keys):
        f.add_many(keys)

    def contains_batch_ints(self, f, keys):
        return f.contains_many(keys)


def peers():
    out = [Bloomforge()]
    try:
        import rbloom

        class R(Peer):
            name = "rbloom"

            def new(self, n):
                return rbloom.Bloom(n, FP)

        out.append(R())
    except ImportError:
        pass
    try:
        import pybloomfilter

        class M(Peer):
            name = "pybloomfiltermmap3"

            def new(self, n):
                return pybloomfilter.BloomFilter(n, FP)

        out.append(M())
    except ImportError:
        pass
    try:
        from probables import BloomFilter as PB

        class P(Peer):
            name = "pyprobables"

            def new(self, n):
                return PB(est_elements=n, false_positive_rate=FP)

            def contains(self, f, key):
                return f.check(key)

        out.append(P())
    except ImportError:
        pass
    try:
        from fastbloom_rs import BloomFilter as FB

        class F(Peer):
            name = "fastbloom-rs"

            def new(self, n):
                return FB(n, FP)

            def contains(self, f, key):
                return f.contains(key)

            def add_batch_ints(self, f, keys):
                f.add_int_batch(keys)

            def contains_batch_ints(self, f, keys):
                return f.contains_int_batch(keys)

        out.append(F())
    except ImportError:
        pass
    try:
        import abloom

        class A(Peer):
            name = "abloom"

            def new(self, n):
                return abloom.BloomFilter(n, FP)

        out.append(A())
    except ImportError:
        pass
    return out


def loop_rows(peer, keys, absent, reps, row):
    f = peer.new(len(keys))

    def add_loop():
        for k in keys:
            peer.add(f, k)

    t, _ = timed(add_loop, reps)
    row["add loop"] = t / len(keys) * 1e9

    def in_loop():
        return [peer.contains(f, k) for k in keys]

    t, found = timed(in_loop, reps)
    check_members(found, f"{peer.name} in loop")
    row["in loop"] = t / len(keys) * 1e9
    hits = sum(peer.contains(f, k) for k in absent)
    check_fp(hits, len(absent), f"{peer.name} in loop")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000_000, help="keys for batch rows")
    ap.add_argument("--loop-n", type=int, default=1_000_000, help="keys for per-call loops")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--markdown", help="also write the tables to this file")
    args = ap.parse_args()
    n, m, reps = args.n, args.loop_n, args.reps
    rng = np.random.default_rng(20261128)
    # Members below 2^62, non-members above: disjoint, and within every peer's int range.
    ints = rng.integers(0, 2**62, size=n, dtype=np.uint64)
    absent_ints = rng.integers(2**62, 2**63, size=min(n, 1_000_000), dtype=np.uint64)
    int_list = [int(x) for x in ints[:m]]
    absent_list = [int(x) for x in absent_ints[:m]]
    url_list = urls(m)
    absent_urls = urls(m, offset=n)

    lines = []
    say = lambda s="": (print(s), lines.append(s))
    say(f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, numpy {np.__version__}; "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC")
    say(f"Command: python crates/python/bench/bench.py --n {n} --loop-n {m} --reps {reps}")
    say()

    all_peers = peers()
    for label, keys, absent in [("int keys", int_list, absent_list), ("URL strings", url_list, absent_urls)]:
        say(f"### Per-call loops, {m:,} {label} (ns per call, median of {reps})")
        say()
        say("| package | add loop | in loop | in loop / bloomforge |")
        say("|---|---:|---:|---:|")
        base = None
        for p in all_peers:
            row = {}
            try:
                loop_rows(p, keys, absent, reps, row)
            except SystemExit:
                raise
            except Exception as e:  # a peer that cannot take this key type
                say(f"| {p.name} | n/a ({type(e).__name__}) | | |")
                continue
            base = base or row["in loop"]
            say(f"| {p.name} | {row['add loop']:.0f} | {row['in loop']:.0f} | {row['in loop'] / base:.2f}x |")
        say()

    say(f"### Batches, {n:,} random uint64 keys from NumPy (ns per key, median of {reps})")
    say()
    say("| package | add batch | contains batch | contains batch vs rbloom's in loop |")
    say("|---|---:|---:|---:|")
    rbloom_in = None
    for p in all_peers:
        if p.name == "rbloom":
            f = p.new(m)
            for k in int_list:
                f.add(k)
            t, found = timed(lambda: [k in f for k in int_list], reps)
            check_members(found, "rbloom")
            rbloom_in = t / m * 1e9
    for p in all_peers:
        if p.add_batch_ints is None:
            continue
        f = p.new(n)
        keys = ints if p.name == "bloomforge" else [int(x) for x in ints]
        probes = keys
        t_add, _ = timed(lambda: p.add_batch_ints(f, keys), 1)
        t_in, found = timed(lambda: p.contains_batch_ints(f, probes), reps)
        check_members(list(found) if p.name != "bloomforge" else [bool(found.all())], p.name)
        absent_probe = absent_ints if p.name == "bloomforge" else [int(x) for x in absent_ints]
        hits = int(np.count_nonzero(p.contains_batch_ints(f, absent_probe)))
        check_fp(hits, len(absent_ints), f"{p.name} batch")
        ratio = f"{rbloom_in / (t_in / n * 1e9):.0f}x" if rbloom_in else "-"
        say(f"| {p.name} | {t_add / n * 1e9:.1f} | {t_in / n * 1e9:.1f} | {ratio} |")
    say()

    import pyarrow as pa

    url_n = n
    say(f"### {url_n:,} URL strings (ns per key, median of {reps})")
    say()
    all_urls = urls(url_n)
    arrow_urls = pa.array(all_urls, pa.string())
    absent_arrow = pa.array(urls(min(url_n, 1_000_000), offset=url_n), pa.string())
    f = bloomforge.BloomFilter(url_n, FP)
    t_add, _ = timed(lambda: f.add_many(arrow_urls), 1)
    t_in, found = timed(lambda: f.contains_many(arrow_urls), reps)
    check_members([bool(found.all())], "bloomforge arrow")
    check_fp(int(np.count_nonzero(f.contains_many(absent_arrow))), len(absent_arrow), "bloomforge arrow")
    t_list, _ = timed(lambda: f.contains_many(all_urls), 1)
    say("| input | add_many | contains_many |")
    say("|---|---:|---:|")
    say(f"| pyarrow string array | {t_add / url_n * 1e9:.1f} | {t_in / url_n * 1e9:.1f} |")
    say(f"| Python list of str | | {t_list / url_n * 1e9:.1f} |")
    try:
        import polars as pl

        s = pl.Series("url", all_urls)
        g = bloomforge.BloomFilter(url_n, FP)
        t, _ = timed(lambda: g.add_many(s), 1)
        assert g == f
        say(f"| Polars Series (build) | {t / url_n * 1e9:.1f} | |")
    except ImportError:
        pass
    try:
        import pandas as pd

        col = pd.Series(all_urls, dtype=pd.ArrowDtype(pa.string()))
        g = bloomforge.BloomFilter(url_n, FP)
        t, _ = timed(lambda: g.add_many(pa.array(col)), 1)
        assert g == f
        say(f"| pandas ArrowDtype column (build) | {t / url_n * 1e9:.1f} | |")
    except ImportError:
        pass
    say()

    say("### Memory")
    say()
    say("| filter | size_in_bytes | Rust filter bytes (file minus 64-byte header) | ratio |")
    say("|---|---:|---:|---:|")
    for kind in ["split-block", "blocked", "standard"]:
        g = bloomforge.BloomFilter(n, FP, kind=kind)
        rust = len(g.to_bytes()) - 64
        say(f"| BloomFilter kind={kind}, n={n:,} | {g.size_in_bytes:,} | {rust:,} | {g.size_in_bytes / rust:.3f} |")
    say()

    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
