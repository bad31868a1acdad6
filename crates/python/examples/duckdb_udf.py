"""A DuckDB query that calls a bloomforge filter: `maybe_spam(url)`, a vectorised Python
function over Arrow, filters a table by membership in a list of spam URLs.

DuckDB hands an Arrow UDF (`create_function(..., type="arrow")`) each vector of the
column as a pyarrow array; `contains_many` reads it in place, without the GIL, and the
answers go back as a pyarrow boolean array. No URL becomes a Python object.

`maybe_spam` is true for every spam URL and, for another URL, false except with
probability about the filter's `false_positive_rate`: the count is the exact one plus a
few false positives. `url IN (SELECT url FROM spam)` gives the exact count to compare.

Run: python crates/python/examples/duckdb_udf.py (needs duckdb and pyarrow).
"""

import math

import duckdb
import numpy as np
import pyarrow as pa

from bloomforge import BloomFilter

SPAM = 5_000  # spam URLs in the list
SPAM_ROWS = 20_000  # rows whose URL is spam (with repeats)
OTHER_ROWS = 180_000  # rows of distinct URLs not in the list
FP_RATE = 0.001


def fp_allowance(n: int, rate: float, false_alarm: float = 1e-6) -> int:
    """The most false positives among `n` independent queries of keys never added, each a
    false positive with probability at most `rate`, allowing for chance: more occur with
    probability at most `false_alarm` (Bernstein's inequality)."""
    mu = n * rate
    log = math.log(1 / false_alarm)
    return math.ceil(mu + log / 3 + math.sqrt(log * log / 9 + 2 * log * mu))


def main() -> None:
    rng = np.random.default_rng(3)
    spam = [f"http://win-a-prize{i}.example/claim" for i in range(SPAM)]
    rows = [spam[i] for i in rng.integers(0, SPAM, SPAM_ROWS)]
    rows += [f"https://news{i % 997}.example/story/{i}" for i in range(OTHER_ROWS)]
    rng.shuffle(rows)

    f = BloomFilter(SPAM, FP_RATE)
    f.add_many(spam)

    def maybe_spam(urls: pa.ChunkedArray) -> pa.Array:
        return pa.array(f.contains_many(urls))

    con = duckdb.connect()
    con.create_function("maybe_spam", maybe_spam, ["VARCHAR"], "BOOLEAN", type="arrow")
    urls_arrow = pa.table({"url": rows})
    spam_arrow = pa.table({"url": spam})
    con.register("urls_arrow", urls_arrow)
    con.register("spam_arrow", spam_arrow)
    con.execute("CREATE TABLE urls AS SELECT url FROM urls_arrow")
    con.execute("CREATE TABLE spam AS SELECT url FROM spam_arrow")

    (maybe,) = con.execute("SELECT count(*) FROM urls WHERE maybe_spam(url)").fetchone()
    (exact,) = con.execute(
        "SELECT count(*) FROM urls WHERE url IN (SELECT url FROM spam)"
    ).fetchone()
    (false_pos,) = con.execute(
        "SELECT count(*) FROM urls WHERE maybe_spam(url) "
        "AND url NOT IN (SELECT url FROM spam)"
    ).fetchone()

    # The other URLs are distinct: each row is a query of its own key never added; one
    # filter's rate differs from the theory's mean by a few percent, hence the 25 %
    # margin. Exceeded with probability <= 1e-6; the data and seed are fixed.
    allowance = fp_allowance(OTHER_ROWS, 1.25 * f.false_positive_rate)
    assert exact == SPAM_ROWS
    assert maybe == exact + false_pos
    assert exact <= maybe <= exact + allowance, (maybe, exact, allowance)
    print(
        f"SELECT count(*) FROM urls WHERE maybe_spam(url): {maybe:,} of {len(rows):,} "
        f"rows; exact {exact:,}; {false_pos} false positives (allowance {allowance}); "
        f"filter {f.size_in_bytes / 1024:.1f} KiB"
    )


if __name__ == "__main__":
    main()
