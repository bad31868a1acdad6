#!/usr/bin/env bash
# `bloomforge parquet index` (filters added, data pages copied) against PyArrow reading and
# rewriting the same file without filters (`read_table` + `write_table`), and against
# PyArrow rewriting it with its own filters (`bloom_filter_options`), on a Parquet file
# written by PyArrow. One run each, page cache warm.
# Usage: tools/bench/parquet_index.sh [ROWS] [DIR]
# (ROWS default 28000000, about 1 GB; DIR: where the data goes, default /tmp/bfparquet,
# removed at the end). Needs a release build (cargo build --release -p bloomforge-cli),
# GNU time and a Python with pyarrow (PY=path/to/python, default python3).
set -euo pipefail
ROWS=${1:-28000000}
DIR=${2:-/tmp/bfparquet}
B=${B:-target/release/bloomforge}
PY=${PY:-python3}
mkdir -p "$DIR"
trap 'rm -rf "$DIR"' EXIT

# 1M-row row groups (PyArrow's default) of: a URL (nearly all distinct), a unique int64 id,
# a timestamp, a user id (1M values), a score and a country (200 values), snappy.
"$PY" - "$ROWS" "$DIR/events.parquet" <<'EOF'
import sys
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

rows, path = int(sys.argv[1]), sys.argv[2]
batch = 1 << 20
writer = None
for start in range(0, rows, batch):
    i = np.arange(start, min(start + batch, rows), dtype=np.int64)
    h = (i * 2654435761) % (1 << 32)
    url = pc.binary_join_element_wise(
        "https://site", pa.array(h % 50000).cast(pa.string()),
        ".example.com/p/", pa.array(h).cast(pa.string()),
        "?id=", pa.array(i).cast(pa.string()), "")
    table = pa.table({
        "url": url,
        "id": pa.array(i * 7 + 1000),
        "ts": pa.array(1_700_000_000_000 + i * 37, pa.int64()),
        "user": pa.array((h % 1_000_000).astype(np.int32)),
        "score": pa.array((h % 10_000) / 100.0),
        "country": pc.binary_join_element_wise("c", pa.array(h % 200).cast(pa.string()), ""),
    })
    if writer is None:
        writer = pq.ParquetWriter(path, table.schema)
    writer.write_table(table, row_group_size=batch)
writer.close()
EOF
cat "$DIR/events.parquet" > /dev/null
echo "input: $(du -m "$DIR/events.parquet" | cut -f1) MB, $ROWS rows"

measure() { # tag, name, command...
  local tag=$1 name=$2; shift 2
  /usr/bin/time -v "$@" 2> "$DIR/time.txt" > /dev/null || { echo "$name: FAILED: $(tail -3 "$DIR/time.txt")"; return; }
  local wall
  wall=$(awk -F': ' '/Elapsed/ {n=split($2,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; print s}' "$DIR/time.txt")
  printf '%-58s wall %7.2f s  peak RSS %8.1f MB\n' "$name" "$wall" \
    "$(awk -F': ' '/Maximum resident/ {print $2/1024}' "$DIR/time.txt")"
  echo "$wall" > "$DIR/wall-$tag"
}

measure index "bloomforge parquet index -c url -c id" \
  "$B" -q parquet index "$DIR/events.parquet" -o "$DIR/indexed.parquet" -c url -c id
measure rewrite "pyarrow read_table + write_table (no filters)" \
  "$PY" -c "import pyarrow.parquet as pq; pq.write_table(pq.read_table('$DIR/events.parquet'), '$DIR/rewritten.parquet')"
measure pyfilters "pyarrow read_table + write_table (filters url, id)" \
  "$PY" -c "
import pyarrow.parquet as pq
t = pq.read_table('$DIR/events.parquet')
pq.write_table(t, '$DIR/pyarrow-filters.parquet',
               bloom_filter_options={'url': {'ndv': 1 << 20, 'fpp': 0.01}, 'id': {'ndv': 1 << 20, 'fpp': 0.01}})"

echo "index / rewrite: $(awk -v a="$(cat "$DIR/wall-index")" -v b="$(cat "$DIR/wall-rewrite")" 'BEGIN {printf "%.3f", a / b}')"
echo "sizes (MB): input $(du -m "$DIR/events.parquet" | cut -f1), indexed $(du -m "$DIR/indexed.parquet" | cut -f1), rewritten $(du -m "$DIR/rewritten.parquet" | cut -f1), pyarrow with filters $(du -m "$DIR/pyarrow-filters.parquet" | cut -f1)"
# The answers: the indexed file reads back equal, and every row group has its filters.
"$PY" - "$DIR" <<'EOF'
import sys
import pyarrow.parquet as pq
d = sys.argv[1]
a, b = pq.ParquetFile(f"{d}/events.parquet"), pq.ParquetFile(f"{d}/indexed.parquet")
assert a.metadata.num_row_groups == b.metadata.num_row_groups
for g in range(a.metadata.num_row_groups):
    assert a.read_row_group(g).equals(b.read_row_group(g)), g
print(f"indexed file reads back equal ({a.metadata.num_row_groups} row groups)")
EOF
"$B" parquet filters "$DIR/indexed.parquet" --json | "$PY" -c "
import json, sys
rows = [json.loads(l) for l in sys.stdin]
f = [r for r in rows if r['column'] in ('url', 'id')]
assert all(r['filter_bytes'] for r in f)
print(f'{len(f)} filters, {sum(r[\"filter_bytes\"] for r in f) / 1e6:.1f} MB, est. FP max {max(r[\"est_fp\"] for r in f):.2e}')"
