"""Every script of crates/python/examples runs to completion (each asserts its own result).

An example is skipped, with the reason, only when a third-party module it imports is not
installed.
"""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# The third-party modules each example imports (besides bloomforge and numpy).
NEEDS = {
    "dedup_column.py": ["pandas", "polars", "pyarrow"],
    "parquet_filter.py": ["pyarrow"],
    "duckdb_udf.py": ["duckdb", "pyarrow"],
    "iblt_diff.py": [],
}


def test_every_example_is_listed():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(NEEDS)


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_example_runs(name):
    missing = [m for m in NEEDS[name] if importlib.util.find_spec(m) is None]
    if missing:
        reason = f"{name} needs {', '.join(missing)}, not installed"
        print(reason)
        pytest.skip(reason)
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, (
        f"{name} exited with {run.returncode}\n"
        f"stdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    )
    assert run.stdout.strip(), f"{name} printed no summary"
