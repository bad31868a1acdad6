"""The command line and Python agree: a filter built by ``bloomforge build`` answers in
Python exactly as ``bloomforge query`` does, and a filter saved from Python answers in
``bloomforge query`` exactly as in Python."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from bloomforge import BloomFilter, CountingBloomFilter

# Lines as the command line reads them: UTF-8, no empty lines, no trailing CR.
KEYS = (
    [f"https://example.org/page/{i}" for i in range(3000)]
    + [f"caf\u00e9-{i}-\u65e5\u672c-\U0001f600" for i in range(500)]
    + [str(i) for i in range(500)]
    + ["tab\tinside", " leading space", "trailing space ", "-", "a" * 5000]
)
NON_MEMBERS = [f"https://example.org/other/{i}" for i in range(20_000)] + [
    str(i) for i in range(10_000, 15_000)
]
PROBES = KEYS + NON_MEMBERS

# CLI kind -> (Python class, the kind Python reports, or None).
CLI_KINDS = {
    "blocked": (BloomFilter, "blocked"),
    "split": (BloomFilter, "split-block"),
    "standard": (BloomFilter, "standard"),
    "counting": (CountingBloomFilter, None),
    "counting-standard": (CountingBloomFilter, None),
}


def write_lines(path, lines):
    path.write_bytes("".join(f"{s}\n" for s in lines).encode())
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    return write_lines(d / "keys.txt", KEYS), write_lines(d / "probes.txt", PROBES), d


def query(cli, filter_path, probes_path):
    """The probe lines ``bloomforge query`` prints (those that may be present), in order."""
    out = cli("query", "--threads", "1", filter_path, probes_path)
    return out.decode().split("\n")[:-1] if out else []


def python_answers(f):
    """What Python answers for every probe, by ``in`` and by each batch form."""
    by_in = [p for p in PROBES if p in f]
    mask = f.contains_many(PROBES)
    assert mask.dtype == np.bool_ and mask.shape == (len(PROBES),)
    for form in (pa.array(PROBES), [p.encode() for p in PROBES],
                 pa.array(PROBES, pa.large_string())):
        assert (f.contains_many(form) == mask).all()
    by_batch = [p for p, m in zip(PROBES, mask) if m]
    assert by_in == by_batch
    return by_in


@pytest.mark.parametrize("kind", list(CLI_KINDS))
def test_cli_build_python_query(cli, files, kind):
    keys, probes, d = files
    out = d / f"cli-{kind}.bf"
    cli("build", keys, "-o", out, "--kind", kind, "--fp", "0.01", "--seed", "11")
    cls, pykind = CLI_KINDS[kind]
    f = cls.load(out)
    if pykind:
        assert f.kind == pykind and f.seed == 11
    else:
        assert len(f) == len(KEYS)
    got = python_answers(f)
    assert got[: len(KEYS)] == KEYS  # no false negatives
    assert got == query(cli, out, probes)
    # Some non-members read absent, or the comparison above would be empty.
    assert len(got) < len(PROBES)


@pytest.mark.parametrize(
    "make",
    [
        lambda: BloomFilter(len(KEYS), 0.01, kind="blocked", seed=3),
        lambda: BloomFilter(len(KEYS), 0.01, kind="split-block"),
        lambda: BloomFilter(len(KEYS), 0.01, kind="standard", seed=2**64 - 1),
        lambda: CountingBloomFilter(len(KEYS), 0.01, seed=5),
    ],
    ids=["blocked", "split-block", "standard", "counting"],
)
def test_python_save_cli_query(cli, files, make):
    _, probes, d = files
    f = make()
    f.add_many(KEYS)
    out = d / "py.bf"
    f.save(out)
    got = python_answers(f)
    assert got[: len(KEYS)] == KEYS
    assert query(cli, out, probes) == got
    absent = cli("query", "--absent", "--threads", "1", out, probes).decode().split("\n")[:-1]
    assert absent == [p for p in PROBES if p not in f]
    assert cli("stats", out)  # the command line reads the whole file


def test_cli_merge_of_python_filters(cli, files):
    _, probes, d = files
    a = BloomFilter(len(KEYS), kind="blocked")
    b = BloomFilter(len(KEYS), kind="blocked")
    a.add_many(KEYS[:2000])
    b.add_many(KEYS[2000:])
    a.save(d / "a.bf")
    b.save(d / "b.bf")
    cli("merge", d / "a.bf", d / "b.bf", "-o", d / "ab.bf")
    assert BloomFilter.load(d / "ab.bf") == a | b
