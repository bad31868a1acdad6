"""The set difference of two lists of strings held by two peers, from two small tables:
an Iblt (invertible Bloom lookup table) whose size depends on the difference, not on the
lists.

Each peer adds its strings to an `Iblt` of the same size and seed; one sends its table's
bytes; the other subtracts and lists the entries: the hashes of the strings only it has
and of those only the sender has (`Iblt.hash_of` maps a peer's own strings to those
hashes). When the difference is larger than the table lists, `list_entries` raises
`ValueError`: both peers build larger tables and try again.

Run: python crates/python/examples/iblt_diff.py
"""

import random

from bloomforge import Iblt

COMMON = 50_000
ONLY_A = 120
ONLY_B = 80


def table(keys: list, expected_diff: int) -> Iblt:
    t = Iblt(expected_diff, seed=42)
    t.add_many(keys)
    return t


def by_hash(t: Iblt, keys: list) -> dict:
    """A peer's own strings by the hash the table stores for them."""
    out = {t.hash_of(k): k for k in keys}
    assert len(out) == len(set(keys)), "two strings share a 64-bit hash"
    return out


def main() -> None:
    rng = random.Random(5)
    common = [f"user-{rng.getrandbits(64):016x}@example.org" for _ in range(COMMON)]
    a = common + [f"a-only-{i}@example.org" for i in range(ONLY_A)]
    b = common + [f"b-only-{i}@example.net" for i in range(ONLY_B)]
    rng.shuffle(a)
    rng.shuffle(b)

    # A first guess: the difference holds at least |len(a) - len(b)| strings.
    expected_diff = max(abs(len(a) - len(b)), 1)
    while True:
        table_a = table(a, expected_diff)
        payload = table(b, expected_diff).to_bytes()  # what peer B sends
        diff = table_a - Iblt.from_bytes(payload)
        try:
            hashes_only_a, hashes_only_b = diff.list_entries()
            break
        except ValueError:
            print(f"expected_diff={expected_diff}: too small, retrying with twice as much")
            expected_diff *= 2

    # Peer A maps its own hashes back; peer B (sent the second list) maps its own.
    a_by_hash = by_hash(table_a, a)
    b_by_hash = by_hash(Iblt(expected_diff, seed=42), b)
    only_a = {a_by_hash[h] for h in hashes_only_a.tolist()}
    only_b = {b_by_hash[h] for h in hashes_only_b.tolist()}

    assert only_a == set(a) - set(b)
    assert only_b == set(b) - set(a)
    list_bytes = sum(len(s.encode()) + 1 for s in b)
    print(
        f"{len(a):,} and {len(b):,} strings: {len(only_a)} only in A, {len(only_b)} only "
        f"in B, from a {len(payload):,}-byte table (expected_diff={expected_diff}; the "
        f"list itself is {list_bytes:,} bytes)"
    )


if __name__ == "__main__":
    main()
