"""Shared fixtures and helpers of the Python test suite.

The suite runs against whatever ``bloomforge`` imports: a ``maturin develop`` build or an
installed release wheel. Every randomized test fixes its seed; every statistical assertion
states its false-alarm probability.
"""

from __future__ import annotations

import math
import os
import pathlib
import struct
import subprocess

import pytest
from hypothesis import HealthCheck, settings

import bloomforge

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
HEADER_LEN = 64

# Hypothesis: derandomized (the same examples on every run), no example database on disk.
settings.register_profile(
    "bloomforge",
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("bloomforge")


def pytest_report_header(config):
    return f"bloomforge from {bloomforge.__file__}; CLI: {cli_path() or 'not found'}"


# ----------------------------------------------------------------------------- filters

BLOOM_KINDS = ["split-block", "blocked", "standard"]

# Membership filters: name -> factory(expected_items, false_positive_rate, seed).
MEMBERSHIP = {
    "bloom-split-block": lambda n, p=0.01, seed=0: bloomforge.BloomFilter(
        n, p, kind="split-block", seed=seed
    ),
    "bloom-blocked": lambda n, p=0.01, seed=0: bloomforge.BloomFilter(
        n, p, kind="blocked", seed=seed
    ),
    "bloom-standard": lambda n, p=0.01, seed=0: bloomforge.BloomFilter(
        n, p, kind="standard", seed=seed
    ),
    "counting": lambda n, p=0.01, seed=0: bloomforge.CountingBloomFilter(n, p, seed=seed),
    "cuckoo": lambda n, p=0.01, seed=0: bloomforge.CuckooFilter(n, p, seed=seed),
}


@pytest.fixture(params=sorted(MEMBERSHIP))
def make(request):
    """A factory of one membership filter kind (parametrized over all of them)."""
    return MEMBERSHIP[request.param]


@pytest.fixture(params=BLOOM_KINDS)
def bloom_kind(request):
    return request.param


# ------------------------------------------------------------------ the command line


def cli_path() -> pathlib.Path | None:
    """The ``bloomforge`` binary: $BLOOMFORGE_CLI, else target/debug/bloomforge."""
    env = os.environ.get("BLOOMFORGE_CLI")
    p = pathlib.Path(env) if env else REPO_ROOT / "target" / "debug" / "bloomforge"
    return p if p.is_file() and os.access(p, os.X_OK) else None


@pytest.fixture(scope="session")
def cli():
    """Runs the command line: ``cli("query", f, probes)`` -> stdout bytes."""
    path = cli_path()
    if path is None:
        pytest.skip(
            "the bloomforge command line was not found: set BLOOMFORGE_CLI or build it "
            f"(cargo build -p bloomforge-cli) so that {REPO_ROOT / 'target/debug/bloomforge'} "
            "exists"
        )

    def run(*args):
        r = subprocess.run(
            [str(path), "--quiet", *map(str, args)],
            capture_output=True,
            timeout=120,
        )
        if r.returncode != 0:
            raise AssertionError(
                f"bloomforge {' '.join(map(str, args))} exited {r.returncode}: "
                f"{r.stderr.decode(errors='replace')}"
            )
        return r.stdout

    return run


# ---------------------------------------------------------------- the file format

_P1 = 11400714785074694791
_P2 = 14029467366897019727
_P3 = 1609587929392839161
_P4 = 9650029242287828579
_P5 = 2870177450012600261
_M = (1 << 64) - 1


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _M, 31) * _P1) & _M


def xxh64(data: bytes, seed: int = 0) -> int:
    """XXH64 (the format's checksum), in plain Python for small inputs."""
    n = len(data)
    i = 0
    if n >= 32:
        v = [(seed + _P1 + _P2) & _M, (seed + _P2) & _M, seed & _M, (seed - _P1) & _M]
        while i + 32 <= n:
            lanes = struct.unpack_from("<4Q", data, i)
            v = [_round(a, b) for a, b in zip(v, lanes)]
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M
        for a in v:
            h = ((h ^ _round(0, a)) * _P1 + _P4) & _M
    else:
        h = (seed + _P5) & _M
    h = (h + n) & _M
    while i + 8 <= n:
        (lane,) = struct.unpack_from("<Q", data, i)
        h = (_rotl(h ^ _round(0, lane), 27) * _P1 + _P4) & _M
        i += 8
    if i + 4 <= n:
        (lane,) = struct.unpack_from("<I", data, i)
        h = (_rotl(h ^ ((lane * _P1) & _M), 23) * _P2 + _P3) & _M
        i += 4
    while i < n:
        h = (_rotl(h ^ ((data[i] * _P5) & _M), 11) * _P1) & _M
        i += 1
    h ^= h >> 33
    h = (h * _P2) & _M
    h ^= h >> 29
    h = (h * _P3) & _M
    h ^= h >> 32
    return h


def reseal(data: bytes) -> bytes:
    """``data`` with its checksum field rewritten to match its header and payload (the
    format's rule: XXH64 of the header with the checksum zeroed, then the payload, for
    version 3; of the payload alone for versions 1 and 2), so that edits reach the
    decoder's later checks."""
    if len(data) < HEADER_LEN:
        return data
    head, payload = data[:HEADER_LEN], data[HEADER_LEN:]
    (version,) = struct.unpack_from("<H", head, 4)
    if version < 3:
        s = xxh64(payload)
    else:
        s = xxh64(head[:48] + bytes(8) + head[56:] + payload)
    return head[:48] + struct.pack("<Q", s) + head[56:] + payload


# ------------------------------------------------------------------- statistics


def binomial_upper_bound(n: int, p: float, alpha: float = 1e-6) -> int:
    """The smallest ``c`` with ``P[Binomial(n, p) >= c] <= alpha``: observing ``c`` or more
    successes has probability at most ``alpha`` when the true rate is at most ``p``.
    Exact tail, summed in log space with ``math.lgamma``."""
    assert 0 <= p < 1 and n >= 0
    if p == 0:
        return 1
    log_p, log_q = math.log(p), math.log1p(-p)
    lg_n = math.lgamma(n + 1)

    def log_pmf(k: int) -> float:
        return lg_n - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * log_p + (n - k) * log_q

    # From the top down: P[X >= c] grows as c falls; stop at the first c past alpha.
    mean = n * p
    sd = math.sqrt(n * p * (1 - p))
    top = min(n, int(mean + 50 * sd + 50))
    tail = 0.0
    c = top + 1
    for k in range(top, -1, -1):
        t = tail + math.exp(log_pmf(k))
        if t > alpha:
            return c
        tail, c = t, k
    return 0
