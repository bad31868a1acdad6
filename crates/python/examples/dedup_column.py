"""Drop repeated URLs from a pandas column and from a Polars column, keeping the first
occurrence of each, with a BloomFilter instead of a set of every URL seen.

The column is read in chunks. For each chunk: rows whose URL repeats an earlier row of the
same chunk go (an exact test within the chunk), rows whose URL the filter may have seen go
(`contains_many`), then the chunk's URLs are added (`add_many`). Memory is the filter's:
about 1.3 bytes a distinct URL at a 1 % false-positive rate, whatever the URLs' length.

The trade-off: a false positive drops a URL never seen before, with every later
occurrence of it. A row is never kept twice (a URL added is always found again); about
`false_positive_rate` of the distinct URLs are dropped although they are new. The exact
answer (`duplicated()`) checks both.

Run: python crates/python/examples/dedup_column.py (needs pandas, polars and pyarrow).
"""

import math

import numpy as np
import pandas as pd
import polars as pl

from bloomforge import BloomFilter

ROWS = 300_000
DISTINCT = 150_000  # URLs drawn from (about 130,000 of them occur)
CHUNK = 50_000
FP_RATE = 0.01


def fp_allowance(n: int, rate: float, false_alarm: float = 1e-6) -> int:
    """The most false positives among `n` independent queries of keys never added, each a
    false positive with probability at most `rate`, allowing for chance: more occur with
    probability at most `false_alarm` (Bernstein's inequality)."""
    mu = n * rate
    log = math.log(1 / false_alarm)
    return math.ceil(mu + log / 3 + math.sqrt(log * log / 9 + 2 * log * mu))


def urls(seed: int) -> list:
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, DISTINCT, ROWS)
    return [f"https://site{i % 211}.example/page/{i}" for i in ids]


def dedup_pandas(col: pd.Series, f: BloomFilter) -> np.ndarray:
    """Whether to keep each row of `col`."""
    keep = np.empty(len(col), dtype=bool)
    for start in range(0, len(col), CHUNK):
        chunk = col.iloc[start : start + CHUNK]
        first_in_chunk = ~chunk.duplicated().to_numpy()
        keep[start : start + len(chunk)] = first_in_chunk & ~f.contains_many(chunk)
        f.add_many(chunk)
    return keep


def dedup_polars(col: pl.Series, f: BloomFilter) -> np.ndarray:
    """Whether to keep each row of `col`."""
    keep = np.empty(len(col), dtype=bool)
    for start in range(0, len(col), CHUNK):
        chunk = col.slice(start, CHUNK)
        first_in_chunk = chunk.is_first_distinct().to_numpy()
        keep[start : start + len(chunk)] = first_in_chunk & ~f.contains_many(chunk)
        f.add_many(chunk)
    return keep


def check(name: str, keep: np.ndarray, exact: np.ndarray, f: BloomFilter) -> None:
    kept_twice = int((keep & ~exact).sum())
    fp_drops = int((exact & ~keep).sum())
    distinct = int(exact.sum())
    # Each new URL is a query of a key never added, at a rate at most the final one (the
    # filter only fills); one filter's rate differs from the theory's mean by a few
    # percent, hence the 25 % margin. Exceeded with probability <= 1e-6; the data and
    # seeds are fixed.
    allowance = fp_allowance(distinct, 1.25 * f.false_positive_rate)
    assert kept_twice == 0, f"{name}: {kept_twice} repeated rows kept"
    assert fp_drops <= allowance, f"{name}: {fp_drops} new URLs dropped > {allowance}"
    print(
        f"{name}: {len(keep):,} rows -> {int(keep.sum()):,} kept; exact answer "
        f"{distinct:,}; {fp_drops} new URLs dropped as false positives "
        f"(allowance {allowance}); filter {f.size_in_bytes / 1024:.0f} KiB, "
        f"false_positive_rate {f.false_positive_rate:.4f}"
    )


def main() -> None:
    data = urls(seed=7)

    df = pd.DataFrame({"url": data, "row": np.arange(ROWS)})
    f = BloomFilter(DISTINCT, FP_RATE, seed=1)
    keep = dedup_pandas(df["url"], f)
    exact = ~df["url"].duplicated().to_numpy()
    check("pandas", keep, exact, f)
    deduped = df[keep]
    assert deduped["url"].is_unique

    pf = pl.DataFrame({"url": data, "row": np.arange(ROWS)})
    g = BloomFilter(DISTINCT, FP_RATE, seed=1)
    keep_pl = dedup_polars(pf["url"], g)
    exact_pl = pf["url"].is_first_distinct().to_numpy()
    check("polars", keep_pl, exact_pl, g)
    deduped_pl = pf.filter(pl.Series(keep_pl))
    assert deduped_pl["url"].n_unique() == deduped_pl.height

    # The same keys, the same hashes: pandas and Polars keep the same rows.
    assert (keep == keep_pl).all()
    print("pandas and polars keep the same rows")


if __name__ == "__main__":
    main()
