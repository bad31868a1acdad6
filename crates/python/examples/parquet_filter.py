"""Keep the rows of a Parquet file whose `url` may be in a key file, with a filter built
by the command line.

`bloomforge build keys.txt -o keys.bf` hashes each line as its UTF-8 bytes; Python hashes
a `str` the same way, so the filter the command line wrote answers for the strings of a
pyarrow column: `contains_many(table["url"])` reads the Arrow column in place, and
`table.filter(mask)` keeps the rows. Every row whose URL is in the key file is kept; a few
others are kept as false positives (an exact join can follow on the much smaller table).

The command line: $BLOOMFORGE_CLI, else the workspace's target/release/bloomforge or
target/debug/bloomforge (`cargo build -p bloomforge-cli`), else `bloomforge` on PATH.

Run: python crates/python/examples/parquet_filter.py (needs pyarrow).
"""

import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from bloomforge import BloomFilter

KEYS = 20_000  # URLs in the key file
MEMBER_ROWS = 30_000  # rows whose URL is one of them (with repeats)
OTHER_ROWS = 170_000  # rows of distinct URLs not in the key file
FP_RATE = 0.001


def fp_allowance(n: int, rate: float, false_alarm: float = 1e-6) -> int:
    """The most false positives among `n` independent queries of keys never added, each a
    false positive with probability at most `rate`, allowing for chance: more occur with
    probability at most `false_alarm` (Bernstein's inequality)."""
    mu = n * rate
    log = math.log(1 / false_alarm)
    return math.ceil(mu + log / 3 + math.sqrt(log * log / 9 + 2 * log * mu))


def find_cli() -> str:
    """The `bloomforge` command line: $BLOOMFORGE_CLI, the workspace's build, or PATH."""
    env = os.environ.get("BLOOMFORGE_CLI")
    if env:
        return env
    repo = Path(__file__).resolve().parents[3]
    target = Path(os.environ.get("CARGO_TARGET_DIR", repo / "target"))
    built = [target / p / "bloomforge" for p in ("release", "debug")]
    built = [p for p in built if p.is_file()]
    if built:
        return str(max(built, key=lambda p: p.stat().st_mtime))
    on_path = shutil.which("bloomforge")
    if on_path:
        return on_path
    sys.exit(
        "parquet_filter.py: no bloomforge command line: set BLOOMFORGE_CLI, run "
        "`cargo build -p bloomforge-cli` in the workspace, or put bloomforge on PATH"
    )


def main() -> None:
    rng = np.random.default_rng(11)
    keys = [f"https://spam{i}.example/landing?id={i * 7919}" for i in range(KEYS)]

    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        (tmp / "keys.txt").write_text("".join(k + "\n" for k in keys), encoding="utf-8")
        cli = find_cli()
        subprocess.run(
            [cli, "build", "keys.txt", "-o", "keys.bf", "--fp", str(FP_RATE), "-q"],
            cwd=tmp,
            check=True,
        )
        f = BloomFilter.load(tmp / "keys.bf")
        print(f"{Path(cli).name} build keys.txt -o keys.bf: {f}")

        members = [keys[i] for i in rng.integers(0, KEYS, MEMBER_ROWS)]
        others = [f"https://www{i}.example/article/{i}" for i in range(OTHER_ROWS)]
        urls = np.array(members + others, dtype=object)
        rng.shuffle(urls)
        table = pa.table(
            {
                "url": pa.array(urls, pa.string()),
                "bytes": pa.array(rng.integers(200, 90_000, len(urls))),
            }
        )
        pq.write_table(table, tmp / "visits.parquet", row_group_size=50_000)

        visits = pq.read_table(tmp / "visits.parquet")
        mask = f.contains_many(visits["url"])
        kept = visits.filter(mask)

        exact = pc.is_in(visits["url"], value_set=pa.array(keys)).to_numpy(
            zero_copy_only=False
        )
        missed = int((exact & ~mask).sum())
        fp_rows = int((mask & ~exact).sum())
        # The non-member URLs are distinct: each row is a query of its own key never
        # added; one filter's rate differs from the theory's mean by a few percent, hence
        # the 25 % margin. Exceeded with probability <= 1e-6; the data and seed are fixed.
        allowance = fp_allowance(OTHER_ROWS, 1.25 * f.false_positive_rate)
        assert missed == 0, f"{missed} rows of the key file dropped"
        assert fp_rows <= allowance, f"{fp_rows} false positives > {allowance}"
        print(
            f"visits.parquet: {visits.num_rows:,} rows -> {kept.num_rows:,} kept: every "
            f"one of the {int(exact.sum()):,} rows in keys.txt, and {fp_rows} false "
            f"positives (allowance {allowance})"
        )


if __name__ == "__main__":
    main()
