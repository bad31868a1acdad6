#!/usr/bin/env bash
# build and query of LINES generated URLs from a file, on 1 and 2 threads, against
# `wc -l` on the same file (page cache). Usage: tools/bench/build_query.sh LINES [DIR]
# (default 100000000 and /tmp/bfbench-bq, removed at the end; 100M URLs = 6.5 GB).
set -euo pipefail
LINES=${1:-100000000}
DIR=${2:-/tmp/bfbench-bq}
B=${B:-target/release/bloomforge}
mkdir -p "$DIR"
trap 'rm -rf "$DIR"' EXIT
$B gen-urls --lines "$LINES" -o "$DIR/k.txt"
cat "$DIR/k.txt" > /dev/null
t() { /usr/bin/time -f "%e %M" "$@" 2>&1 >/dev/null | tail -1; }
for run in 1 2 3; do
  read -r w _ <<< "$(t wc -l "$DIR/k.txt")"
  printf 'run %d: wc -l %.2f s\n' "$run" "$w"
  for th in 1 2; do
    read -r b rb <<< "$(t $B -q --threads $th build "$DIR/k.txt" -o "$DIR/k.bloom" --expected "$LINES")"
    read -r q rq <<< "$(t $B -q --threads $th query "$DIR/k.bloom" "$DIR/k.txt" --absent)"
    awk -v th=$th -v b=$b -v q=$q -v w=$w -v n=$LINES -v rb=$rb -v rq=$rq 'BEGIN {
      printf "  %d thread(s): build %.2f s (%.1f M keys/s, %.2fx wc -l, RSS %.0f MB)  query %.2f s (%.1f M keys/s, %.2fx wc -l, RSS %.0f MB)\n",
        th, b, n/b/1e6, b/w, rb/1024, q, n/q/1e6, q/w, rq/1024 }'
  done
done
