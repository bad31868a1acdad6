"""Real keys: the paths under /usr (up to 200 000), as str and as bytes. No false
negatives, and on a disjoint probe set (the same paths with a suffix) a false-positive
count within a binomial bound of the filter's own ``false_positive_rate``."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest

from conftest import MEMBERSHIP, binomial_upper_bound

LIMIT = 200_000
SUFFIX = "\u2192probe"  # not in any real path: the probes are disjoint from the keys
ALPHA = 1e-6  # false-alarm probability of each bound below


@pytest.fixture(scope="module")
def paths():
    out = []
    for root, dirs, files in os.walk("/usr"):
        dirs.sort()
        for name in sorted(files) + dirs:
            out.append(os.path.join(root, name))
        if len(out) >= LIMIT:
            break
    out = out[:LIMIT]
    if len(out) < 10_000:
        pytest.skip(f"only {len(out)} paths under /usr: too few for the FP bound")
    # Paths that are not UTF-8 (surrogate escapes) have no str form the CLI would share.
    out = [p for p in out if _utf8(p)]
    return out


def _utf8(s):
    try:
        s.encode()
        return True
    except UnicodeEncodeError:
        return False


@pytest.mark.parametrize("name", sorted(MEMBERSHIP))
def test_usr_paths(paths, name):
    keys = paths
    f = MEMBERSHIP[name](len(keys), 0.01, 0)
    f.add_many(keys)
    assert f.contains_many(keys).all(), "false negative"

    # The same keys as bytes (os.fsencode) and as an Arrow array: the same filter.
    as_bytes = [os.fsencode(k) for k in keys]
    g = MEMBERSHIP[name](len(keys), 0.01, 0)
    g.add_many(as_bytes)
    assert g == f
    h = MEMBERSHIP[name](len(keys), 0.01, 0)
    h.add_many(pa.array(keys, pa.large_string()))
    assert h == f

    probes = [k + SUFFIX for k in keys]
    assert not set(probes) & set(keys)
    hits = f.contains_many(probes)
    assert (f.contains_many([os.fsencode(p) for p in probes]) == hits).all()
    assert (f.contains_many(pa.array(probes)) == hits).all()
    fp = int(np.count_nonzero(hits))
    p = f.false_positive_rate
    bound = binomial_upper_bound(len(probes), p, ALPHA)
    # P[FP count >= bound] <= 1e-6 when each probe is a false positive with probability
    # p (the filter's own rate at this load, from its layout's theory).
    assert fp < bound, f"{fp} false positives of {len(probes)} probes, p={p:.3g}, bound {bound}"
    # Nor far below it (a filter answering "absent" to everything would pass the bound):
    # Chernoff, P[X <= mean / 4] <= exp(-(3/4)**2 * mean / 2) < 1e-12 for mean >= 100.
    mean = len(probes) * p
    if mean >= 100:
        assert fp > mean / 4, (fp, mean)


def _new_builders():
    import bloomforge

    def dynamic(name, sizes, **kw):
        def build(keys):
            f = getattr(bloomforge, name)(*sizes(len(keys)), **kw)
            f.add_many(keys)
            return f
        return build

    return {
        "dleft": ("DLeftCountingBloomFilter", dynamic("DLeftCountingBloomFilter",
                                                      lambda n: (n, 0.01))),
        "scalable": ("ScalableBloomFilter", dynamic("ScalableBloomFilter",
                                                    lambda n: (n // 16, 0.01))),
        "atomic": ("AtomicBloomFilter", dynamic("AtomicBloomFilter", lambda n: (n, 0.01))),
        "stable": ("StableBloomFilter", dynamic("StableBloomFilter", lambda n: (20 * n, 0.01))),
        "xor": ("XorFilter", lambda keys: bloomforge.XorFilter(keys)),
        "binary-fuse": ("BinaryFuseFilter", lambda keys: bloomforge.BinaryFuseFilter(keys)),
        "bloomier": ("BloomierFilter",
                     lambda keys: bloomforge.BloomierFilter({k: i % 16 for i, k in enumerate(keys)})),
    }


NEW = _new_builders()


@pytest.mark.parametrize("name", sorted(NEW))
def test_usr_paths_new_classes(paths, name):
    import bloomforge

    cname, build = NEW[name]
    if not hasattr(bloomforge, cname):
        pytest.skip(f"bloomforge.{cname} is not in this build")
    keys = paths
    f = build(keys)
    present = f.contains_many(keys)
    if name == "stable":
        # A stable filter forgets: only the FP bound below applies to it.
        pass
    else:
        assert present.all(), "false negative"
    assert build([os.fsencode(k) for k in keys]) == f
    probes = [k + SUFFIX for k in keys]
    hits = f.contains_many(probes)
    assert (f.contains_many(pa.array(probes)) == hits).all()
    fp = int(np.count_nonzero(hits))
    p = f.false_positive_rate
    bound = binomial_upper_bound(len(probes), p, ALPHA)
    # P[FP count >= bound] <= 1e-6 at the filter's own rate p.
    assert fp < bound, f"{fp} false positives of {len(probes)} probes, p={p:.3g}, bound {bound}"
