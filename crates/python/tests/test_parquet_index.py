"""`bloomforge parquet index` on files written by PyArrow and DuckDB, read back by both.

Only the command line is needed (not the extension module): the suite's conftest imports
`bloomforge`, so without the extension run this file alone with

    BLOOMFORGE_CLI=target/debug/bloomforge python -m pytest --noconftest \
        crates/python/tests/test_parquet_index.py

The command line is $BLOOMFORGE_CLI, else the workspace's target/debug/bloomforge; the
tests skip when neither exists. Every value is fixed; the statistical assertions state
their false-alarm probability.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import subprocess

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
duckdb = pytest.importorskip("duckdb")

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
ROW_GROUPS = 8
ROWS_PER_GROUP = 5000
FP = 0.01


def cli_path() -> pathlib.Path | None:
    env = os.environ.get("BLOOMFORGE_CLI")
    p = pathlib.Path(env) if env else REPO_ROOT / "target" / "debug" / "bloomforge"
    return p if p.is_file() and os.access(p, os.X_OK) else None


@pytest.fixture(scope="module")
def bloomforge():
    """Runs the command line; returns the completed process (stdout and stderr as text)."""
    path = cli_path()
    if path is None:
        pytest.skip(
            "no bloomforge command line: set BLOOMFORGE_CLI or cargo build -p bloomforge-cli"
        )

    def run(*args, check=True):
        r = subprocess.run(
            [str(path), *map(str, args)], capture_output=True, text=True, timeout=300
        )
        if check and r.returncode != 0:
            raise AssertionError(f"bloomforge {' '.join(map(str, args))}: {r.stderr}")
        return r

    return run


def binomial_upper_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), summed term by term in log space."""
    log_terms = (
        math.lgamma(n + 1)
        - math.lgamma(i + 1)
        - math.lgamma(n - i + 1)
        + i * math.log(p)
        + (n - i) * math.log1p(-p)
        for i in range(k, n + 1)
    )
    return math.fsum(math.exp(t) for t in log_terms)


def url(i: int) -> str:
    return f"https://site{i % 997}.example/page/{i * 7919 % 1_000_003}?ref={i}"


def write_pyarrow_file(path: pathlib.Path) -> "pa.Table":
    n = ROW_GROUPS * ROWS_PER_GROUP
    table = pa.table(
        {
            "url": pa.array([url(i) for i in range(n)], pa.string()),
            "id": pa.array([i * 13 - 1000 for i in range(n)], pa.int64()),
            "score": pa.array([None if i % 9 == 0 else i % 100 for i in range(n)], pa.int32()),
        }
    )
    pq.write_table(table, path, row_group_size=ROWS_PER_GROUP, compression="zstd")
    return table


def probe(con, path, column, value) -> list[bool]:
    """DuckDB's answer per row group: True where its filter excludes the value."""
    rows = con.execute(
        "SELECT row_group_id, bloom_filter_excludes FROM parquet_bloom_probe(?, ?, ?) "
        "ORDER BY row_group_id",
        [str(path), column, value],
    ).fetchall()
    return [bool(excludes) for _, excludes in rows]


def filter_blobs(con, path, column) -> list[bytes | None]:
    """The stored filter (header and bitset) of `column` in each row group, as bytes."""
    meta = con.execute(
        "SELECT row_group_id, bloom_filter_offset, bloom_filter_length "
        "FROM parquet_metadata(?) WHERE path_in_schema = ? ORDER BY row_group_id",
        [str(path), column],
    ).fetchall()
    data = pathlib.Path(path).read_bytes()
    return [None if off is None else data[off : off + length] for _, off, length in meta]


def test_pyarrow_file_indexed_reads_back_identically_and_duckdb_prunes(bloomforge, tmp_path):
    src, out = tmp_path / "events.parquet", tmp_path / "indexed.parquet"
    table = write_pyarrow_file(src)
    before = src.read_bytes()
    r = bloomforge(
        "parquet", "index", src, "-o", out, "--column", "url", "--column", "id", "--fp", FP
    )
    assert f"{ROW_GROUPS} row groups, {ROW_GROUPS * ROWS_PER_GROUP} rows" in r.stderr
    assert src.read_bytes() == before

    # PyArrow: the same table (schema and its metadata included), row groups and sizes.
    assert pq.read_table(out).equals(table, check_metadata=True)
    meta_in, meta_out = pq.ParquetFile(src).metadata, pq.ParquetFile(out).metadata
    assert meta_out.num_row_groups == meta_in.num_row_groups == ROW_GROUPS
    assert meta_out.created_by == meta_in.created_by
    assert meta_out.format_version == meta_in.format_version
    for g in range(ROW_GROUPS):
        rg_in, rg_out = meta_in.row_group(g), meta_out.row_group(g)
        assert rg_out.num_rows == rg_in.num_rows == ROWS_PER_GROUP
        for c in range(rg_in.num_columns):
            a, b = rg_in.column(c), rg_out.column(c)
            assert (b.compression, b.encodings, b.total_compressed_size) == (
                a.compression,
                a.encodings,
                a.total_compressed_size,
            )
            assert b.statistics == a.statistics
        expected = table.slice(g * ROWS_PER_GROUP, ROWS_PER_GROUP)
        assert pq.ParquetFile(out).read_row_group(g).equals(expected)

    # DuckDB: the same rows.
    con = duckdb.connect()
    q = "SELECT url, id, score FROM read_parquet(?) ORDER BY id"
    assert con.execute(q, [str(out)]).fetchall() == con.execute(q, [str(src)]).fetchall()

    # DuckDB's probe: never excludes a row group holding the value.
    for i in range(0, ROW_GROUPS * ROWS_PER_GROUP, 211):
        g = i // ROWS_PER_GROUP
        assert not probe(con, out, "url", url(i))[g], f"url {i}"
        assert not probe(con, out, "id", i * 13 - 1000)[g], f"id {i}"
    # The input has no filters: nothing is excluded.
    assert not any(probe(con, src, "url", "https://absent.example/"))

    # Absent values are excluded by >= 95 % of row groups. Each of the N probes below
    # passes a row group with probability at most that filter's false-positive rate,
    # checked <= 1 % from its fill; the test fails only if more than 5 % of them pass:
    # P(Binomial(N, 0.01) > 0.05 N) < 1e-6 (computed).
    listing = [
        json.loads(line)
        for line in bloomforge("parquet", "filters", out, "--json").stdout.splitlines()
    ]
    indexed = [f for f in listing if f["column"] in ("url", "id")]
    assert len(indexed) == 2 * ROW_GROUPS
    assert all(f["filter_bytes"] is not None and f["est_fp"] <= FP for f in indexed)
    assert all(f["filter_bytes"] is None for f in listing if f["column"] == "score")
    absent = 150
    n = absent * ROW_GROUPS
    limit = n // 20
    assert binomial_upper_tail(limit + 1, n, FP) < 1e-6
    passed_url = sum(
        not e for i in range(absent) for e in probe(con, out, "url", f"https://absent{i}.example/")
    )
    passed_id = sum(not e for i in range(absent) for e in probe(con, out, "id", 10**12 + i))
    assert passed_url <= limit, passed_url
    assert passed_id <= limit, passed_id

    # A query DuckDB can prune still finds its row.
    assert con.execute(
        "SELECT id FROM read_parquet(?) WHERE url = ?", [str(out), url(12345)]
    ).fetchall() == [(12345 * 13 - 1000,)]


def test_duckdb_filters_are_kept_on_other_columns_and_replaced_when_named(bloomforge, tmp_path):
    src = tmp_path / "duck.parquet"
    con = duckdb.connect()
    # DuckDB writes filters only for dictionary-encoded chunks: `cat` (50 values) gets
    # one, `url` (all distinct) none.
    con.execute(
        f"COPY (SELECT 'cat' || (i % 50) AS cat, 'https://x.example/' || i AS url, i AS id "
        f"FROM range({ROW_GROUPS * ROWS_PER_GROUP}) t(i)) TO '{src}' "
        f"(FORMAT parquet, ROW_GROUP_SIZE {ROWS_PER_GROUP})"
    )
    duck_blobs = filter_blobs(con, src, "cat")
    groups = len(duck_blobs)  # DuckDB's row groups are about ROW_GROUP_SIZE rows
    assert groups >= 2 and all(b is not None for b in duck_blobs)
    assert all(b is None for b in filter_blobs(con, src, "url"))

    # Index `url`: DuckDB's filters on `cat` are carried over byte for byte.
    kept = tmp_path / "kept.parquet"
    bloomforge("parquet", "index", src, "-o", kept, "-c", "url", "-q")
    assert filter_blobs(con, kept, "cat") == duck_blobs
    for v in ("cat0", "cat17", "cat49"):
        assert probe(con, kept, "cat", v) == probe(con, src, "cat", v) == [False] * groups
    assert all(probe(con, kept, "cat", "dog")) and all(probe(con, src, "cat", "dog"))
    assert not probe(con, kept, "url", "https://x.example/7")[0]
    assert all(probe(con, kept, "url", "https://y.example/7"))  # absent everywhere (fixed)
    q = "SELECT * FROM read_parquet(?) ORDER BY id"
    assert con.execute(q, [str(kept)]).fetchall() == con.execute(q, [str(src)]).fetchall()

    # Named: replaced by bloomforge's, sized for 50 values at 1 % (128 bytes).
    replaced = tmp_path / "replaced.parquet"
    bloomforge("parquet", "index", src, "-o", replaced, "-c", "cat", "-q")
    new_blobs = filter_blobs(con, replaced, "cat")
    assert all(b is not None and b != d for b, d in zip(new_blobs, duck_blobs))
    listing = [
        json.loads(line)
        for line in bloomforge("parquet", "filters", replaced, "--json").stdout.splitlines()
    ]
    assert {f["filter_bytes"] for f in listing if f["column"] == "cat"} == {128}
    for i in range(50):
        assert probe(con, replaced, "cat", f"cat{i}") == [False] * groups
    assert all(probe(con, replaced, "cat", "dog"))  # fixed value, excluded everywhere
    # ... unless kept with --keep-existing.
    kept_too = tmp_path / "kept-too.parquet"
    bloomforge("parquet", "index", src, "-o", kept_too, "-c", "cat", "--keep-existing", "-q")
    assert filter_blobs(con, kept_too, "cat") == duck_blobs


def test_errors_name_the_file(bloomforge, tmp_path):
    src = tmp_path / "events.parquet"
    write_pyarrow_file(src)
    before = src.read_bytes()
    r = bloomforge("parquet", "index", src, "--in-place", "-c", "nope", check=False)
    assert r.returncode == 1
    assert r.stderr == f'bloomforge: {src}: no column "nope"; the file has: url, id, score\n'
    assert src.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["events.parquet"]
