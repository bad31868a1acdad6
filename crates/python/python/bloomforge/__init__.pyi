"""Type stubs of the package ``bloomforge`` (the classes live in the compiled module
``bloomforge._bloomforge`` and are re-exported here).

``Key`` and ``Keys`` exist for type checkers only: import them under
``typing.TYPE_CHECKING`` (``if TYPE_CHECKING: from bloomforge import Keys``). So do
``ForeignKey`` and ``ForeignKeys`` (the keys of the Guava and Spark filters) and the dict
types of the Parquet functions (``ParquetIndexReport``, ``ParquetProbeAnswer``,
``ParquetFilterInfo``).

Each class has its own section below, which ends by adding the class to ``__all__``; a
new class appends its section at the end of the file.
"""

import os
from typing import (
    Any,
    Callable,
    ClassVar,
    Iterable,
    Iterator,
    List,
    Literal,
    Mapping,
    Optional,
    Protocol,
    Tuple,
    TypedDict,
    Union,
    final,
)

import numpy
import numpy.typing

__all__ = ["FormatError"]

# ---------------------------------------------------------------------------------------
# Shared types
# ---------------------------------------------------------------------------------------

Key = Union[str, bytes, int]
"""One key: a ``str`` (hashed as its UTF-8 bytes, as the command line hashes a line),
``bytes`` (as themselves) or an ``int`` with ``-2**63 <= k < 2**64`` (as that 64-bit
integer; negative ones as the ``int64`` of the same bits)."""

class _ArrowArray(Protocol):
    """An Arrow array through the PyCapsule interface (``pyarrow.Array``, ...)."""

    def __arrow_c_array__(self, requested_schema: Any = ..., /) -> Tuple[Any, Any]: ...

class _ArrowStream(Protocol):
    """A stream of Arrow arrays through the PyCapsule interface (``pyarrow.ChunkedArray``,
    ``polars.Series``, ``pandas.Series``, ...)."""

    def __arrow_c_stream__(self, requested_schema: Any = ..., /) -> Any: ...

Keys = Union[
    numpy.typing.NDArray[numpy.int64],
    numpy.typing.NDArray[numpy.uint64],
    numpy.typing.NDArray[numpy.int32],
    numpy.typing.NDArray[numpy.uint32],
    _ArrowArray,
    _ArrowStream,
    Iterable[Key],
]
"""A batch of keys: a 1-d NumPy array of int64, uint64, int32 or uint32 (read in place);
an Arrow array or stream of strings, binary or 32/64-bit integers without nulls (read in
place); or any iterable of ``Key`` (hashed as it is read). Every form hashes a key the
same way: ``f.contains_many(numpy.array([7]))``, ``f.contains_many(pyarrow.array([7]))``
and ``f.contains_many([7])`` agree."""

_StrPath = Union[str, os.PathLike[str]]
"""A file path."""

_BoolArray = numpy.typing.NDArray[numpy.bool_]
"""One ``bool`` per key of a batch, in the batch's order."""

class FormatError(ValueError):
    """Bytes or a file that are not a filter of the expected kind: truncated, corrupt, of
    another kind, or from a newer bloomforge."""

# ---------------------------------------------------------------------------------------
# BloomFilter
# ---------------------------------------------------------------------------------------

_BloomKind = Literal["split-block", "blocked", "standard"]

@final
class BloomFilter:
    """A Bloom filter: ``key in f`` is ``True`` for every key added and, for a key never
    added, ``False`` except with probability about ``false_positive_rate``."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    def __new__(
        cls,
        expected_items: int,
        false_positive_rate: float = 0.01,
        *,
        kind: Literal["split-block", "split", "blocked", "standard"] = "split-block",
        seed: int = 0,
    ) -> BloomFilter: ...
    def add(self, key: Key) -> None:
        """Adds one key."""
    def __contains__(self, key: Key, /) -> bool:
        """``False``: never added; ``True``: added, or a false positive."""
    def add_many(self, keys: Keys, *, threads: Optional[int] = None) -> None:
        """Adds every key of ``keys``, without the GIL for arrays; from a million keys on,
        on ``threads`` threads (default: every core)."""
    def update(self, keys: Keys) -> None:
        """As ``add_many``."""
    def contains_many(self, keys: Keys, *, threads: Optional[int] = None) -> _BoolArray:
        """Whether each key of ``keys`` may be in the filter."""
    def approx_len(self) -> float:
        """An estimate of the distinct keys added (from the bits set)."""
    @property
    def false_positive_rate(self) -> float:
        """The false-positive rate for the keys added so far."""
    @property
    def kind(self) -> _BloomKind: ...
    @property
    def num_bits(self) -> int: ...
    @property
    def num_hashes(self) -> int:
        """Probes (bits set) per key."""
    @property
    def seed(self) -> int: ...
    @property
    def size_in_bytes(self) -> int: ...
    @property
    def fill(self) -> float:
        """Fraction of the bits that are set."""
    def clear(self) -> None: ...
    def copy(self) -> BloomFilter: ...
    def __copy__(self) -> BloomFilter: ...
    def __deepcopy__(self, memo: Any, /) -> BloomFilter: ...
    def __or__(self, other: BloomFilter, /) -> BloomFilter:
        """Union (same kind, size and seed, else ``ValueError``)."""
    def __and__(self, other: BloomFilter, /) -> BloomFilter:
        """Intersection (same kind, size and seed, else ``ValueError``)."""
    def __ior__(self, other: BloomFilter, /) -> BloomFilter: ...
    def __iand__(self, other: BloomFilter, /) -> BloomFilter: ...
    def __eq__(self, other: object, /) -> bool: ...
    def bits(self) -> memoryview:
        """A read-only snapshot of the bit array (``to_bytes()`` after its 64-byte header)."""
    def to_bytes(self) -> bytes:
        """The filter in bloomforge's format (the bytes ``bloomforge build`` writes)."""
    @classmethod
    def from_bytes(cls, data: bytes) -> BloomFilter:
        """Reads bytes of any of the three kinds; ``FormatError`` for anything else."""
    def save(self, path: _StrPath) -> None: ...
    @classmethod
    def load(cls, path: _StrPath) -> BloomFilter:
        """Reads a file written by ``save``, Rust or ``bloomforge build``."""
    def __reduce__(self) -> Tuple[Callable[[bytes], BloomFilter], Tuple[bytes]]: ...

__all__ += ["BloomFilter"]

# ---------------------------------------------------------------------------------------
# CountingBloomFilter
# ---------------------------------------------------------------------------------------

@final
class CountingBloomFilter:
    """A Bloom filter of 4-bit counters: ``add``, ``remove`` and ``count`` keys; ``len``
    is exact (adds minus removes)."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    def __new__(
        cls,
        expected_items: int,
        false_positive_rate: float = 0.01,
        *,
        seed: int = 0,
    ) -> CountingBloomFilter: ...
    def add(self, key: Key) -> None: ...
    def remove(self, key: Key) -> Literal["removed", "saturated"]:
        """Removes one occurrence; ``KeyError`` when the key is not in the filter."""
    def discard(self, key: Key) -> bool:
        """Removes one occurrence if present; whether it was."""
    def count(self, key: Key) -> int: ...
    def __contains__(self, key: Key, /) -> bool: ...
    def add_many(self, keys: Keys) -> None: ...
    def update(self, keys: Keys) -> None: ...
    def contains_many(self, keys: Keys) -> _BoolArray: ...
    def count_many(self, keys: Keys) -> numpy.typing.NDArray[numpy.uint8]: ...
    def remove_many(self, keys: Keys) -> _BoolArray:
        """Removes one occurrence of each key; whether each was present."""
    def __len__(self) -> int: ...
    @property
    def false_positive_rate(self) -> float: ...
    @property
    def size_in_bytes(self) -> int: ...
    @property
    def num_counters(self) -> int: ...
    @property
    def num_hashes(self) -> int: ...
    def clear(self) -> None: ...
    def copy(self) -> CountingBloomFilter: ...
    def __copy__(self) -> CountingBloomFilter: ...
    def __deepcopy__(self, memo: Any, /) -> CountingBloomFilter: ...
    def __or__(self, other: CountingBloomFilter, /) -> CountingBloomFilter:
        """Counters added (same size and seed, else ``ValueError``)."""
    def __ior__(self, other: CountingBloomFilter, /) -> CountingBloomFilter: ...
    def __eq__(self, other: object, /) -> bool: ...
    def to_bytes(self) -> bytes: ...
    @classmethod
    def from_bytes(cls, data: bytes) -> CountingBloomFilter: ...
    def save(self, path: _StrPath) -> None: ...
    @classmethod
    def load(cls, path: _StrPath) -> CountingBloomFilter: ...
    def __reduce__(
        self,
    ) -> Tuple[Callable[[bytes], CountingBloomFilter], Tuple[bytes]]: ...

__all__ += ["CountingBloomFilter"]

# ---------------------------------------------------------------------------------------
# CuckooFilter
# ---------------------------------------------------------------------------------------

@final
class CuckooFilter:
    """A cuckoo filter: ``add``, ``remove``, ``key in f``, with an exact ``len``."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    def __new__(
        cls,
        expected_items: int,
        false_positive_rate: float = 0.01,
        *,
        seed: int = 0,
    ) -> CuckooFilter: ...
    def add(self, key: Key) -> None:
        """Adds one key; ``ValueError`` when the table is full (nothing changes)."""
    def remove(self, key: Key) -> None:
        """Removes one occurrence; ``KeyError`` when the key is not there."""
    def discard(self, key: Key) -> bool: ...
    def __contains__(self, key: Key, /) -> bool: ...
    def add_many(self, keys: Keys) -> None:
        """All or nothing: ``ValueError`` when the table fills, the filter unchanged."""
    def update(self, keys: Keys) -> None: ...
    def contains_many(self, keys: Keys) -> _BoolArray: ...
    def __len__(self) -> int: ...
    @property
    def load_factor(self) -> float: ...
    @property
    def false_positive_rate(self) -> float: ...
    @property
    def size_in_bytes(self) -> int: ...
    def clear(self) -> None: ...
    def copy(self) -> CuckooFilter: ...
    def __copy__(self) -> CuckooFilter: ...
    def __deepcopy__(self, memo: Any, /) -> CuckooFilter: ...
    def __eq__(self, other: object, /) -> bool: ...
    def to_bytes(self) -> bytes: ...
    @classmethod
    def from_bytes(cls, data: bytes) -> CuckooFilter: ...
    def save(self, path: _StrPath) -> None: ...
    @classmethod
    def load(cls, path: _StrPath) -> CuckooFilter: ...
    def __reduce__(self) -> Tuple[Callable[[bytes], CuckooFilter], Tuple[bytes]]: ...

__all__ += ["CuckooFilter"]

# ---------------------------------------------------------------------------------------
# Iblt
# ---------------------------------------------------------------------------------------

@final
class Iblt:
    """An invertible Bloom lookup table: the set difference of two peers' sets from two
    small tables."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    def __new__(
        cls, expected_diff: int, *, seed: int = 0
    ) -> Iblt: ...
    def hash_of(self, key: Key) -> int:
        """The 64-bit hash this table stores for ``key`` (what ``list_entries`` returns)."""
    def add(self, key: Key) -> None: ...
    def remove(self, key: Key) -> None: ...
    def add_many(self, keys: Keys) -> None: ...
    def update(self, keys: Keys) -> None: ...
    def subtract(self, other: Iblt) -> Iblt:
        """``self - other``; ``ValueError`` when the sizes or seeds differ."""
    def __sub__(self, other: Iblt, /) -> Iblt: ...
    def list_entries(
        self,
    ) -> Tuple[numpy.typing.NDArray[numpy.uint64], numpy.typing.NDArray[numpy.uint64]]:
        """``(only_self, only_other)`` key hashes; ``ValueError`` when the difference is
        too large for the table."""
    def is_empty(self) -> bool: ...
    @property
    def cells(self) -> int: ...
    @property
    def size_in_bytes(self) -> int: ...
    def copy(self) -> Iblt: ...
    def __copy__(self) -> Iblt: ...
    def __deepcopy__(self, memo: Any, /) -> Iblt: ...
    def __eq__(self, other: object, /) -> bool: ...
    def to_bytes(self) -> bytes: ...
    @classmethod
    def from_bytes(cls, data: bytes) -> Iblt: ...
    def save(self, path: _StrPath) -> None: ...
    @classmethod
    def load(cls, path: _StrPath) -> Iblt: ...
    def __reduce__(self) -> Tuple[Callable[[bytes], Iblt], Tuple[bytes]]: ...

__all__ += ["Iblt"]

# ---------------------------------------------------------------------------------------
# DLeftCountingBloomFilter
# ---------------------------------------------------------------------------------------

@final
class DLeftCountingBloomFilter:
    """A d-left counting Bloom filter: ``add``, ``remove`` and ``count`` keys in about half
    the space of a counting Bloom filter; ``len`` is exact (adds minus removes)."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    def __new__(
        cls,
        expected_items: int,
        false_positive_rate: float = 0.01,
        *,
        counter_bits: int = 4,
        seed: int = 0,
    ) -> DLeftCountingBloomFilter: ...
    def add(self, key: Key) -> None:
        """Adds one key; ``ValueError`` when its buckets are full (nothing changes)."""
    def remove(self, key: Key) -> Literal["removed", "saturated"]:
        """Removes one occurrence; ``KeyError`` when the key is not in the filter."""
    def discard(self, key: Key) -> bool:
        """Removes one occurrence if present; whether it was."""
    def count(self, key: Key) -> int: ...
    def __contains__(self, key: Key, /) -> bool: ...
    def add_many(self, keys: Keys) -> None:
        """All or nothing: ``ValueError`` when some key's buckets are full, the filter
        unchanged."""
    def update(self, keys: Keys) -> None: ...
    def contains_many(self, keys: Keys) -> _BoolArray: ...
    def count_many(self, keys: Keys) -> numpy.typing.NDArray[numpy.uint8]: ...
    def remove_many(self, keys: Keys) -> _BoolArray:
        """Removes one occurrence of each key; whether each was present."""
    def __len__(self) -> int: ...
    @property
    def false_positive_rate(self) -> float:
        """Exact for the current contents: stored fingerprints over possible ones."""
    @property
    def size_in_bytes(self) -> int: ...
    @property
    def fill(self) -> float:
        """Fraction of the cells in use."""
    @property
    def occupied_cells(self) -> int: ...
    @property
    def total_cells(self) -> int: ...
    @property
    def counter_bits(self) -> int: ...
    @property
    def remainder_bits(self) -> int: ...
    @property
    def seed(self) -> int: ...
    def clear(self) -> None: ...
    def copy(self) -> DLeftCountingBloomFilter: ...
    def __copy__(self) -> DLeftCountingBloomFilter: ...
    def __deepcopy__(self, memo: Any, /) -> DLeftCountingBloomFilter: ...
    def __eq__(self, other: object, /) -> bool: ...
    def to_bytes(self) -> bytes: ...
    @classmethod
    def from_bytes(cls, data: bytes) -> DLeftCountingBloomFilter: ...
    def save(self, path: _StrPath) -> None: ...
    @classmethod
    def load(cls, path: _StrPath) -> DLeftCountingBloomFilter: ...
    def __reduce__(
        self,
    ) -> Tuple[Callable[[bytes], DLeftCountingBloomFilter], Tuple[bytes]]: ...

__all__ += ["DLeftCountingBloomFilter"]

# ---------------------------------------------------------------------------------------
# ScalableBloomFilter
# ---------------------------------------------------------------------------------------

@final
class ScalableBloomFilter:
    """A Bloom filter that grows (a stack of slices): no item count, only the size of its
    first slice; the compound false-positive rate stays below ``false_positive_rate``."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    def __new__(
        cls,
        initial_capacity: int,
        false_positive_rate: float = 0.01,
        *,
        growth_factor: float = 2.0,
        tightening_ratio: float = 0.85,
        max_slices: int = 32,
        layout: Literal["blocked", "standard"] = "blocked",
        seed: int = 0,
    ) -> ScalableBloomFilter: ...
    def add(self, key: Key) -> None:
        """``ValueError`` at the slice limit (nothing changes)."""
    def __contains__(self, key: Key, /) -> bool: ...
    def add_many(self, keys: Keys) -> None:
        """``ValueError`` at the slice limit; the keys before the one that failed stay
        added."""
    def update(self, keys: Keys) -> None: ...
    def contains_many(self, keys: Keys) -> _BoolArray: ...
    def approx_len(self) -> float:
        """The adds that were not reported present (an estimate)."""
    @property
    def false_positive_rate(self) -> float: ...
    @property
    def target_false_positive_rate(self) -> float: ...
    @property
    def num_slices(self) -> int: ...
    @property
    def capacity(self) -> int: ...
    @property
    def layout(self) -> Literal["blocked", "standard"]: ...
    @property
    def seed(self) -> int: ...
    @property
    def size_in_bytes(self) -> int: ...
    @property
    def fill(self) -> float: ...
    def clear(self) -> None: ...
    def copy(self) -> ScalableBloomFilter: ...
    def __copy__(self) -> ScalableBloomFilter: ...
    def __deepcopy__(self, memo: Any, /) -> ScalableBloomFilter: ...
    def __or__(self, other: ScalableBloomFilter, /) -> ScalableBloomFilter:
        """Union (same parameters and seed, else ``ValueError``)."""
    def __ior__(self, other: ScalableBloomFilter, /) -> ScalableBloomFilter: ...
    def __eq__(self, other: object, /) -> bool: ...
    def to_bytes(self) -> bytes: ...
    @classmethod
    def from_bytes(cls, data: bytes) -> ScalableBloomFilter: ...
    def save(self, path: _StrPath) -> None: ...
    @classmethod
    def load(cls, path: _StrPath) -> ScalableBloomFilter: ...
    def __reduce__(
        self,
    ) -> Tuple[Callable[[bytes], ScalableBloomFilter], Tuple[bytes]]: ...

__all__ += ["ScalableBloomFilter"]

# ---------------------------------------------------------------------------------------
# StableBloomFilter
# ---------------------------------------------------------------------------------------

@final
class StableBloomFilter:
    """A stable Bloom filter: "seen recently?" over an unbounded stream in fixed memory
    (old keys are forgotten)."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    def __new__(
        cls,
        cells: int,
        false_positive_rate: float = 0.01,
        *,
        cell_bits: int = 3,
        seed: int = 0,
        rng_seed: int = 0,
    ) -> StableBloomFilter: ...
    def add(self, key: Key) -> None: ...
    def check_and_add(self, key: Key) -> bool:
        """Whether ``key`` was seen recently, then adds it."""
    def __contains__(self, key: Key, /) -> bool: ...
    def add_many(self, keys: Keys) -> None: ...
    def update(self, keys: Keys) -> None: ...
    def check_and_add_many(self, keys: Keys) -> _BoolArray:
        """``check_and_add`` of every key, in order."""
    def contains_many(self, keys: Keys) -> _BoolArray: ...
    def approx_len(self) -> float:
        """An estimate of the distinct keys still remembered."""
    @property
    def inserts(self) -> int: ...
    @property
    def false_positive_rate(self) -> float: ...
    @property
    def stable_false_positive_rate(self) -> float: ...
    @property
    def cells(self) -> int: ...
    @property
    def cell_bits(self) -> int: ...
    @property
    def num_hashes(self) -> int: ...
    @property
    def decrements(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def size_in_bytes(self) -> int: ...
    @property
    def fill(self) -> float: ...
    def clear(self) -> None: ...
    def copy(self) -> StableBloomFilter: ...
    def __copy__(self) -> StableBloomFilter: ...
    def __deepcopy__(self, memo: Any, /) -> StableBloomFilter: ...
    def __eq__(self, other: object, /) -> bool: ...
    def to_bytes(self) -> bytes: ...
    @classmethod
    def from_bytes(cls, data: bytes) -> StableBloomFilter: ...
    def save(self, path: _StrPath) -> None: ...
    @classmethod
    def load(cls, path: _StrPath) -> StableBloomFilter: ...
    def __reduce__(
        self,
    ) -> Tuple[Callable[[bytes], StableBloomFilter], Tuple[bytes]]: ...

__all__ += ["StableBloomFilter"]

# ---------------------------------------------------------------------------------------
# Bitmap, TwoBitmap
# ---------------------------------------------------------------------------------------

_Values = Union[
    numpy.typing.NDArray[numpy.uint32],
    numpy.typing.NDArray[numpy.int32],
    numpy.typing.NDArray[numpy.uint64],
    numpy.typing.NDArray[numpy.int64],
    _ArrowArray,
    _ArrowStream,
    Iterable[int],
]
"""A batch of integer values (not hashed): a 1-d NumPy array of uint32 (read in place),
int32, uint64 or int64; an Arrow integer array or stream without nulls; or any iterable of
``int``."""

@final
class Bitmap:
    """An exact set of the integers ``0 <= x < universe``: one bit per value."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    def __new__(cls, universe: int = 2**32) -> Bitmap: ...
    def add(self, x: int) -> None:
        """``ValueError`` when ``x`` is outside the universe."""
    def remove(self, x: int) -> None:
        """``KeyError`` when ``x`` is not in the set."""
    def discard(self, x: int) -> bool: ...
    def __contains__(self, x: int, /) -> bool: ...
    def add_many(self, values: _Values) -> None:
        """All or nothing: ``ValueError`` for a value outside the universe."""
    def update(self, values: _Values) -> None: ...
    def contains_many(self, values: _Values) -> _BoolArray: ...
    def to_numpy(self) -> numpy.typing.NDArray[numpy.uint32]:
        """The values, ascending."""
    def __iter__(self) -> Iterator[int]: ...
    def __len__(self) -> int: ...
    def rank(self, x: int) -> int:
        """Number of values below ``x``."""
    def select(self, k: int) -> int:
        """The ``k``-th smallest value; ``IndexError`` past the end."""
    @property
    def universe(self) -> int: ...
    @property
    def false_positive_rate(self) -> float:
        """0: the set is exact."""
    @property
    def size_in_bytes(self) -> int: ...
    @property
    def fill(self) -> float: ...
    def clear(self) -> None: ...
    def copy(self) -> Bitmap: ...
    def __copy__(self) -> Bitmap: ...
    def __deepcopy__(self, memo: Any, /) -> Bitmap: ...
    def __or__(self, other: Bitmap, /) -> Bitmap: ...
    def __and__(self, other: Bitmap, /) -> Bitmap: ...
    def __sub__(self, other: Bitmap, /) -> Bitmap: ...
    def __xor__(self, other: Bitmap, /) -> Bitmap: ...
    def __ior__(self, other: Bitmap, /) -> Bitmap: ...
    def __iand__(self, other: Bitmap, /) -> Bitmap: ...
    def __isub__(self, other: Bitmap, /) -> Bitmap: ...
    def __ixor__(self, other: Bitmap, /) -> Bitmap: ...
    def __eq__(self, other: object, /) -> bool: ...
    def to_bytes(self) -> bytes: ...
    @classmethod
    def from_bytes(cls, data: bytes) -> Bitmap: ...
    def save(self, path: _StrPath) -> None: ...
    @classmethod
    def load(cls, path: _StrPath) -> Bitmap: ...
    def __reduce__(self) -> Tuple[Callable[[bytes], Bitmap], Tuple[bytes]]: ...

@final
class TwoBitmap:
    """How often each integer ``0 <= x < universe`` was added, up to "many": two bits per
    value."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    def __new__(cls, universe: int = 2**32) -> TwoBitmap: ...
    def add(self, x: int) -> None:
        """``ValueError`` when ``x`` is outside the universe."""
    def seen(self, x: int) -> Literal[0, 1, 2]:
        """0 never added, 1 once, 2 twice or more."""
    def __contains__(self, x: int, /) -> bool: ...
    def add_many(self, values: _Values) -> None:
        """All or nothing: ``ValueError`` for a value outside the universe."""
    def update(self, values: _Values) -> None: ...
    def contains_many(self, values: _Values) -> _BoolArray: ...
    def seen_many(self, values: _Values) -> numpy.typing.NDArray[numpy.uint8]: ...
    def once(self) -> numpy.typing.NDArray[numpy.uint32]:
        """The values added exactly once, ascending."""
    def many(self) -> numpy.typing.NDArray[numpy.uint32]:
        """The values added twice or more, ascending."""
    @property
    def count_once(self) -> int: ...
    @property
    def count_many(self) -> int: ...
    def __len__(self) -> int:
        """Distinct values added."""
    @property
    def universe(self) -> int: ...
    @property
    def false_positive_rate(self) -> float: ...
    @property
    def size_in_bytes(self) -> int: ...
    @property
    def fill(self) -> float: ...
    def clear(self) -> None: ...
    def copy(self) -> TwoBitmap: ...
    def __copy__(self) -> TwoBitmap: ...
    def __deepcopy__(self, memo: Any, /) -> TwoBitmap: ...
    def merge(self, other: TwoBitmap) -> None:
        """Adds the counts of ``other`` (same universe, else ``ValueError``)."""
    def __add__(self, other: TwoBitmap, /) -> TwoBitmap: ...
    def __iadd__(self, other: TwoBitmap, /) -> TwoBitmap: ...
    def __eq__(self, other: object, /) -> bool: ...
    def to_bytes(self) -> bytes: ...
    @classmethod
    def from_bytes(cls, data: bytes) -> TwoBitmap: ...
    def save(self, path: _StrPath) -> None: ...
    @classmethod
    def load(cls, path: _StrPath) -> TwoBitmap: ...
    def __reduce__(self) -> Tuple[Callable[[bytes], TwoBitmap], Tuple[bytes]]: ...

__all__ += ["Bitmap", "TwoBitmap"]

# ---------------------------------------------------------------------------------------
# BinaryFuseFilter, XorFilter, BloomierFilter
# ---------------------------------------------------------------------------------------

@final
class BinaryFuseFilter:
    """A static set built once from all its keys: no ``add``; ``key in f`` is ``True`` for
    every key and, for another key, ``False`` except with probability
    ``2**-fingerprint_bits``."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    def __new__(
        cls,
        keys: Keys,
        *,
        fingerprint_bits: Literal[8, 16] = 8,
        seed: int = 0,
        threads: Optional[int] = None,
    ) -> BinaryFuseFilter: ...
    def __contains__(self, key: Key, /) -> bool: ...
    def contains_many(self, keys: Keys) -> _BoolArray: ...
    def __len__(self) -> int: ...
    @property
    def false_positive_rate(self) -> float: ...
    @property
    def fingerprint_bits(self) -> Literal[8, 16]: ...
    @property
    def seed(self) -> int: ...
    @property
    def size_in_bytes(self) -> int: ...
    @property
    def num_cells(self) -> int: ...
    def copy(self) -> BinaryFuseFilter: ...
    def __copy__(self) -> BinaryFuseFilter: ...
    def __deepcopy__(self, memo: Any, /) -> BinaryFuseFilter: ...
    def __eq__(self, other: object, /) -> bool: ...
    def to_bytes(self) -> bytes: ...
    @classmethod
    def from_bytes(cls, data: bytes) -> BinaryFuseFilter: ...
    def save(self, path: _StrPath) -> None: ...
    @classmethod
    def load(cls, path: _StrPath) -> BinaryFuseFilter: ...
    def __reduce__(
        self,
    ) -> Tuple[Callable[[bytes], BinaryFuseFilter], Tuple[bytes]]: ...

@final
class XorFilter:
    """A static set built once from all its keys (as ``BinaryFuseFilter``, another
    layout)."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    def __new__(
        cls,
        keys: Keys,
        *,
        fingerprint_bits: Literal[8, 16] = 8,
        seed: int = 0,
        threads: Optional[int] = None,
    ) -> XorFilter: ...
    def __contains__(self, key: Key, /) -> bool: ...
    def contains_many(self, keys: Keys) -> _BoolArray: ...
    def __len__(self) -> int: ...
    @property
    def false_positive_rate(self) -> float: ...
    @property
    def fingerprint_bits(self) -> Literal[8, 16]: ...
    @property
    def seed(self) -> int: ...
    @property
    def size_in_bytes(self) -> int: ...
    @property
    def num_cells(self) -> int: ...
    def copy(self) -> XorFilter: ...
    def __copy__(self) -> XorFilter: ...
    def __deepcopy__(self, memo: Any, /) -> XorFilter: ...
    def __eq__(self, other: object, /) -> bool: ...
    def to_bytes(self) -> bytes: ...
    @classmethod
    def from_bytes(cls, data: bytes) -> XorFilter: ...
    def save(self, path: _StrPath) -> None: ...
    @classmethod
    def load(cls, path: _StrPath) -> XorFilter: ...
    def __reduce__(self) -> Tuple[Callable[[bytes], XorFilter], Tuple[bytes]]: ...

@final
class BloomierFilter:
    """A static function from keys to small ints, built once from a mapping, without
    storing the keys. A key not in the mapping gets ``None`` / ``KeyError`` only when its
    fingerprint mismatches: with probability ``false_positive_rate`` it gets an arbitrary
    value instead."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    def __new__(
        cls,
        mapping: Union[
            Mapping[str, int],
            Mapping[bytes, int],
            Mapping[int, int],
            Mapping[Key, int],
            Iterable[Tuple[Key, int]],
        ],
        *,
        value_bits: Optional[int] = None,
        fingerprint_bits: Optional[int] = None,
        false_positive_rate: float = 0.01,
        seed: int = 0,
        threads: Optional[int] = None,
    ) -> BloomierFilter: ...
    def get(self, key: Key, default: Any = None) -> Any:
        """The key's value (exact for keys of the mapping), else ``default``."""
    def __getitem__(self, key: Key, /) -> int: ...
    def __contains__(self, key: Key, /) -> bool: ...
    def get_many(
        self, keys: Keys
    ) -> Tuple[numpy.typing.NDArray[numpy.uint32], _BoolArray]:
        """``(values, found)``: each key's value (0 where not found) and whether one was
        found."""
    def contains_many(self, keys: Keys) -> _BoolArray: ...
    def __len__(self) -> int: ...
    @property
    def false_positive_rate(self) -> float: ...
    @property
    def value_bits(self) -> int: ...
    @property
    def fingerprint_bits(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def size_in_bytes(self) -> int: ...
    def copy(self) -> BloomierFilter: ...
    def __copy__(self) -> BloomierFilter: ...
    def __deepcopy__(self, memo: Any, /) -> BloomierFilter: ...
    def __eq__(self, other: object, /) -> bool: ...
    def to_bytes(self) -> bytes: ...
    @classmethod
    def from_bytes(cls, data: bytes) -> BloomierFilter: ...
    def save(self, path: _StrPath) -> None: ...
    @classmethod
    def load(cls, path: _StrPath) -> BloomierFilter: ...
    def __reduce__(
        self,
    ) -> Tuple[Callable[[bytes], BloomierFilter], Tuple[bytes]]: ...

__all__ += ["BinaryFuseFilter", "XorFilter", "BloomierFilter"]

# ---------------------------------------------------------------------------------------
# AtomicBloomFilter
# ---------------------------------------------------------------------------------------

@final
class AtomicBloomFilter:
    """A Bloom filter that many threads add into at once (no lock; ``add_many`` without
    the GIL); the bits and bytes of ``BloomFilter``."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    def __new__(
        cls,
        expected_items: int,
        false_positive_rate: float = 0.01,
        *,
        kind: Literal["split-block", "split", "blocked", "standard"] = "split-block",
        seed: int = 0,
    ) -> AtomicBloomFilter: ...
    def add(self, key: Key) -> None: ...
    def __contains__(self, key: Key, /) -> bool: ...
    def add_many(self, keys: Keys, *, threads: Optional[int] = None) -> None: ...
    def update(self, keys: Keys) -> None: ...
    def contains_many(self, keys: Keys, *, threads: Optional[int] = None) -> _BoolArray: ...
    def approx_len(self) -> float: ...
    @property
    def false_positive_rate(self) -> float: ...
    @property
    def kind(self) -> _BloomKind: ...
    @property
    def num_bits(self) -> int: ...
    @property
    def num_hashes(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def size_in_bytes(self) -> int: ...
    @property
    def fill(self) -> float: ...
    def clear(self) -> None:
        """``RuntimeError`` while another thread is inside a call on the filter."""
    def to_bloom_filter(self) -> BloomFilter:
        """A ``BloomFilter`` with the bits now (a copy)."""
    def copy(self) -> AtomicBloomFilter: ...
    def __copy__(self) -> AtomicBloomFilter: ...
    def __deepcopy__(self, memo: Any, /) -> AtomicBloomFilter: ...
    def __eq__(self, other: object, /) -> bool: ...
    def to_bytes(self) -> bytes: ...
    @classmethod
    def from_bytes(cls, data: bytes) -> AtomicBloomFilter: ...
    def save(self, path: _StrPath) -> None: ...
    @classmethod
    def load(cls, path: _StrPath) -> AtomicBloomFilter: ...
    def __reduce__(
        self,
    ) -> Tuple[Callable[[bytes], AtomicBloomFilter], Tuple[bytes]]: ...

__all__ += ["AtomicBloomFilter"]

# ---------------------------------------------------------------------------------------
# GuavaBloomFilter, SparkBloomFilter, read_foreign_filter
# ---------------------------------------------------------------------------------------

ForeignKey = Union[str, bytes, bytearray, memoryview, int]
"""One key of ``GuavaBloomFilter`` / ``SparkBloomFilter``, funnelled as Guava and Spark
funnel it: a ``str`` as its UTF-8 bytes (``Funnels.stringFunnel(UTF_8)``, ``putString``),
bytes-like as they are (``Funnels.byteArrayFunnel()``, ``putBinary``), an ``int`` as a Java
``long`` (``Funnels.longFunnel()``, ``putLong``; ``-2**63 <= k < 2**64``, from ``2**63`` on
the ``long`` of the same bits)."""

ForeignKeys = Union[Keys, Iterable[ForeignKey]]
"""A batch of ``ForeignKey``: NumPy integer arrays and Arrow arrays as in ``Keys`` (integers
as longs), or any iterable of keys."""

_GuavaStrategy = Literal["MURMUR128_MITZ_64", "MURMUR128_MITZ_32"]

@final
class GuavaBloomFilter:
    """Guava's ``BloomFilter``, bit for bit: built with the same parameters and keys it has
    the same bits, and ``to_bytes`` / ``from_bytes`` are Guava's ``writeTo`` / ``readFrom``.
    A Guava filter is typed by its funnel: query it with keys of the kind it was built
    from."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    def __new__(
        cls,
        expected_items: int,
        false_positive_rate: float = 0.03,
        *,
        strategy: _GuavaStrategy = "MURMUR128_MITZ_64",
    ) -> GuavaBloomFilter:
        """Java's ``BloomFilter.create(funnel, expected_items, false_positive_rate)``
        (0.03 is Guava's default rate); ``"MURMUR128_MITZ_32"`` is the strategy of Guava's
        filters before release 13."""
    def add(self, key: ForeignKey) -> None:
        """Adds one key (Guava's ``put``)."""
    def __contains__(self, key: ForeignKey, /) -> bool:
        """Guava's ``mightContain``: ``False``: never added; ``True``: added, or a false
        positive."""
    def add_many(self, keys: ForeignKeys, *, threads: Optional[int] = None) -> None:
        """Adds every key of ``keys``, without the GIL for arrays; from a million keys on,
        ``threads=t`` (t > 1) inserts on ``t`` threads (default: one)."""
    def update(self, keys: ForeignKeys) -> None:
        """As ``add_many``."""
    def contains_many(
        self, keys: ForeignKeys, *, threads: Optional[int] = None
    ) -> _BoolArray:
        """Whether each key of ``keys`` may be in the filter."""
    def approx_len(self) -> float:
        """Guava's ``approximateElementCount()`` before rounding: an estimate of the
        distinct keys added."""
    @property
    def false_positive_rate(self) -> float:
        """Guava's ``expectedFpp()``: ``(set bits / bits) ** num_hashes``."""
    @property
    def expected_false_pos(self) -> float:
        """The same as ``false_positive_rate``."""
    @property
    def strategy(self) -> _GuavaStrategy: ...
    @property
    def num_bits(self) -> int:
        """Bits in the filter, a multiple of 64 (Guava's ``bitSize()``)."""
    @property
    def num_hashes(self) -> int: ...
    @property
    def size_in_bytes(self) -> int: ...
    @property
    def fill(self) -> float:
        """Fraction of the bits that are set."""
    def clear(self) -> None: ...
    def copy(self) -> GuavaBloomFilter: ...
    def __copy__(self) -> GuavaBloomFilter: ...
    def __deepcopy__(self, memo: Any, /) -> GuavaBloomFilter: ...
    def __or__(self, other: GuavaBloomFilter, /) -> GuavaBloomFilter:
        """Union, Guava's ``putAll`` (same bits, hash count and strategy, else
        ``ValueError``)."""
    def __and__(self, other: GuavaBloomFilter, /) -> GuavaBloomFilter:
        """Intersection (same bits, hash count and strategy, else ``ValueError``)."""
    def __ior__(self, other: GuavaBloomFilter, /) -> GuavaBloomFilter: ...
    def __iand__(self, other: GuavaBloomFilter, /) -> GuavaBloomFilter: ...
    def __eq__(self, other: object, /) -> bool: ...
    def to_bytes(self) -> bytes:
        """Exactly the bytes of Guava's ``writeTo``."""
    @classmethod
    def from_bytes(cls, data: bytes) -> GuavaBloomFilter:
        """Reads Guava's ``writeTo`` bytes; ``FormatError`` for anything else."""
    def save(self, path: _StrPath) -> None: ...
    @classmethod
    def load(cls, path: _StrPath) -> GuavaBloomFilter: ...
    def __reduce__(
        self,
    ) -> Tuple[Callable[[bytes], GuavaBloomFilter], Tuple[bytes]]: ...

@final
class SparkBloomFilter:
    """Spark's ``BloomFilter`` (``org.apache.spark.util.sketch``), versions 1 and 2, bit
    for bit: built with the same parameters and keys it has the same bits, and
    ``to_bytes`` / ``from_bytes`` are Spark's ``writeTo`` / ``BloomFilter.readFrom``."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    def __new__(
        cls,
        expected_items: int,
        false_positive_rate: float = 0.03,
        *,
        version: Literal[1, 2] = 2,
        seed: int = 0,
    ) -> SparkBloomFilter:
        """Spark's ``BloomFilter.create(expected_items, false_positive_rate)`` (version 2);
        ``version=1`` is the format before Spark 4.1, which has no seed. ``seed`` is a Java
        ``int``."""
    def add(self, key: ForeignKey) -> None:
        """Adds one key (Spark's ``put``)."""
    def __contains__(self, key: ForeignKey, /) -> bool:
        """Spark's ``mightContain``."""
    def add_many(self, keys: ForeignKeys, *, threads: Optional[int] = None) -> None:
        """Adds every key of ``keys``, without the GIL for arrays; from a million keys on,
        ``threads=t`` (t > 1) inserts on ``t`` threads (default: one)."""
    def update(self, keys: ForeignKeys) -> None:
        """As ``add_many``."""
    def contains_many(
        self, keys: ForeignKeys, *, threads: Optional[int] = None
    ) -> _BoolArray:
        """Whether each key of ``keys`` may be in the filter."""
    def approx_len(self) -> float:
        """An estimate of the distinct keys added (from the bits set)."""
    @property
    def false_positive_rate(self) -> float:
        """Spark's ``expectedFpp()``: ``(set bits / bits) ** num_hashes``."""
    @property
    def expected_false_pos(self) -> float:
        """The same as ``false_positive_rate``."""
    @property
    def version(self) -> Literal[1, 2]: ...
    @property
    def seed(self) -> int:
        """The hash seed (0 for version 1)."""
    @property
    def num_bits(self) -> int:
        """Bits in the filter, a multiple of 64 (Spark's ``bitSize()``)."""
    @property
    def num_hashes(self) -> int: ...
    @property
    def size_in_bytes(self) -> int: ...
    @property
    def fill(self) -> float:
        """Fraction of the bits that are set."""
    def clear(self) -> None: ...
    def copy(self) -> SparkBloomFilter: ...
    def __copy__(self) -> SparkBloomFilter: ...
    def __deepcopy__(self, memo: Any, /) -> SparkBloomFilter: ...
    def __or__(self, other: SparkBloomFilter, /) -> SparkBloomFilter:
        """Union, Spark's ``mergeInPlace`` (same version, bits, hash count and seed, else
        ``ValueError``)."""
    def __and__(self, other: SparkBloomFilter, /) -> SparkBloomFilter:
        """Intersection, Spark's ``intersectInPlace`` (same parameters, else
        ``ValueError``)."""
    def __ior__(self, other: SparkBloomFilter, /) -> SparkBloomFilter: ...
    def __iand__(self, other: SparkBloomFilter, /) -> SparkBloomFilter: ...
    def __eq__(self, other: object, /) -> bool: ...
    def to_bytes(self) -> bytes:
        """Exactly the bytes of Spark's ``writeTo``."""
    @classmethod
    def from_bytes(cls, data: bytes) -> SparkBloomFilter:
        """Reads Spark's ``writeTo`` bytes (either version); ``FormatError`` for anything
        else."""
    def save(self, path: _StrPath) -> None: ...
    @classmethod
    def load(cls, path: _StrPath) -> SparkBloomFilter: ...
    def __reduce__(
        self,
    ) -> Tuple[Callable[[bytes], SparkBloomFilter], Tuple[bytes]]: ...

def read_foreign_filter(data: bytes) -> Union[GuavaBloomFilter, SparkBloomFilter]:
    """A Guava or Spark filter's ``writeTo`` bytes, told apart by their first bytes;
    ``FormatError`` for anything else."""

__all__ += ["GuavaBloomFilter", "SparkBloomFilter", "read_foreign_filter"]

# ---------------------------------------------------------------------------------------
# Parquet
# ---------------------------------------------------------------------------------------

class _ParquetColumnReport(TypedDict):
    column: str
    row_groups_indexed: int
    row_groups_kept: int
    distinct_values: int
    filter_bytes: int
    false_positive_rate: float
    max_false_positive_rate: float

class ParquetIndexReport(TypedDict):
    """What ``parquet_index`` did."""

    row_groups: int
    rows: int
    columns: List[_ParquetColumnReport]
    filters_kept: int
    output_bytes: int

class ParquetProbeAnswer(TypedDict):
    """One row group's answer of ``parquet_probe``."""

    row_group: int
    rows: int
    answer: Literal["may_contain", "absent", "no_filter"]

class _ParquetFilterSummary(TypedDict):
    bitset_bytes: int
    estimated_distinct: float
    false_positive_rate: float

class ParquetFilterInfo(TypedDict):
    """One column chunk of ``parquet_filters``."""

    row_group: int
    column: str
    physical_type: str
    rows: int
    filter: Optional[_ParquetFilterSummary]

def parquet_index(
    input: _StrPath,
    output: Optional[_StrPath] = None,
    *,
    columns: Union[str, Iterable[str]],
    false_positive_rate: float = 0.01,
    keep_existing: bool = False,
) -> ParquetIndexReport:
    """Rewrites the Parquet file ``input`` as ``output`` (default: ``input``, replaced
    when the new file is complete) with a split-block Bloom filter per row group for each
    column of ``columns``; the data pages are copied byte for byte."""

def parquet_probe(
    path: _StrPath, column: str, value: Union[str, bytes, bytearray, memoryview, int, float]
) -> List[ParquetProbeAnswer]:
    """Which row groups of ``path`` may hold ``value`` in ``column``, by their stored
    split-block filters (any writer's)."""

def parquet_filters(path: _StrPath) -> List[ParquetFilterInfo]:
    """Every column chunk of ``path`` with the split-block filter stored for it, if any."""

__all__ += ["parquet_index", "parquet_probe", "parquet_filters"]
