"""bloomforge: Bloom filters and their relatives, from Rust.

Every class is a thin layer over a Rust filter of the bloomforge workspace: the same bits,
the same file format as the ``bloomforge`` command line and the Rust crates. Batch calls
(``add_many``, ``contains_many``) take NumPy integer arrays, Arrow arrays (pyarrow, Polars,
pandas with Arrow dtypes) or any iterable, read them in place and run without the GIL.

Keys mean the same thing everywhere: a ``str`` is hashed as its UTF-8 bytes, exactly as
the command line hashes a line; ``bytes`` as themselves; an ``int`` as the 64-bit integer
of that value (``-2**63 <= k < 2**64``; others raise ``OverflowError``). So a filter
written by ``bloomforge build urls.txt -o urls.bf`` answers ``"https://..." in
BloomFilter.load("urls.bf")`` exactly as ``bloomforge query`` does.

``GuavaBloomFilter`` and ``SparkBloomFilter`` are Guava's and Spark's filters bit for bit:
their keys are hashed as those libraries hash them, and their bytes are those libraries'
``writeTo`` form (``read_foreign_filter`` tells the two apart). ``parquet_index`` adds
split-block Bloom filters to an existing Parquet file without rewriting its data;
``parquet_probe`` and ``parquet_filters`` read any Parquet file's filters.
"""

from ._bloomforge import (
    AtomicBloomFilter,
    BinaryFuseFilter,
    Bitmap,
    BloomFilter,
    BloomierFilter,
    CountingBloomFilter,
    CuckooFilter,
    DLeftCountingBloomFilter,
    FormatError,
    GuavaBloomFilter,
    Iblt,
    ScalableBloomFilter,
    SparkBloomFilter,
    StableBloomFilter,
    TwoBitmap,
    XorFilter,
    parquet_filters,
    parquet_index,
    parquet_probe,
    read_foreign_filter,
)

__all__ = [
    "AtomicBloomFilter",
    "BinaryFuseFilter",
    "Bitmap",
    "BloomFilter",
    "BloomierFilter",
    "CountingBloomFilter",
    "CuckooFilter",
    "DLeftCountingBloomFilter",
    "FormatError",
    "GuavaBloomFilter",
    "Iblt",
    "ScalableBloomFilter",
    "SparkBloomFilter",
    "StableBloomFilter",
    "TwoBitmap",
    "XorFilter",
    "parquet_filters",
    "parquet_index",
    "parquet_probe",
    "read_foreign_filter",
]
