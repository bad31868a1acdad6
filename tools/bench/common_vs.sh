#!/usr/bin/env bash
# Side by side: `bloomforge common --exact` vs `sort -u | comm -12` vs DuckDB INTERSECT on
# two generated URL files. Usage: tools/bench/common_vs.sh LINES [DIR]
# (DIR: where the data goes, default /tmp/bfbench; removed at the end). Needs a release
# build (cargo build --release -p bloomforge-cli), GNU time and `pip install duckdb`.
set -euo pipefail
LINES=${1:-5000000}
DIR=${2:-/tmp/bfbench}
B=${B:-target/release/bloomforge}
mkdir -p "$DIR"
trap 'rm -rf "$DIR"' EXIT
$B gen-urls --lines "$LINES" --file 0 -o "$DIR/a.txt"
$B gen-urls --lines "$LINES" --file 1 -o "$DIR/b.txt"
cat "$DIR/a.txt" "$DIR/b.txt" > /dev/null   # into the page cache
measure() { # name, command...
  local name=$1; shift
  /usr/bin/time -v "$@" 2> "$DIR/time.txt" > /dev/null || { echo "$name: FAILED: $(grep -m1 -i 'error' "$DIR/time.txt")"; return; }
  printf '%-40s wall %6.2f s  peak RSS %7.1f MB\n' "$name" \
    "$(awk -F': ' '/Elapsed/ {n=split($2,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; print s}' "$DIR/time.txt")" \
    "$(awk -F': ' '/Maximum resident/ {print $2/1024}' "$DIR/time.txt")"
}
for run in 1 2 3; do
  echo "# run $run"
  # Output to a plain file as for sort and comm (-o would add an fsync).
  measure "bloomforge common --exact --memory 64M" bash -c \
    "$B -q common --exact --memory 64M '$DIR/a.txt' '$DIR/b.txt' --temp-dir '$DIR' > '$DIR/c1.txt'"
  measure "sort -u -S 64M --parallel=2 + comm -12" bash -c "
    LC_ALL=C sort -u -S 64M --parallel=2 -T '$DIR' '$DIR/a.txt' > '$DIR/as.txt' &&
    LC_ALL=C sort -u -S 64M --parallel=2 -T '$DIR' '$DIR/b.txt' > '$DIR/bs.txt' &&
    LC_ALL=C comm -12 '$DIR/as.txt' '$DIR/bs.txt' > '$DIR/c2.txt'"
  for mem in 64MB 256MB 1GB; do
    measure "duckdb INTERSECT, 2 threads, $mem" python3 -c "
import duckdb
c = duckdb.connect(config={'threads': 2, 'memory_limit': '$mem', 'temp_directory': '$DIR/duck'})
c.execute(\"CREATE VIEW a AS SELECT column0 AS url FROM read_csv('$DIR/a.txt', header=false, delim='\\t', quote='', escape='', columns={'column0': 'VARCHAR'})\")
c.execute(\"CREATE VIEW b AS SELECT column0 AS url FROM read_csv('$DIR/b.txt', header=false, delim='\\t', quote='', escape='', columns={'column0': 'VARCHAR'})\")
c.execute(\"COPY (SELECT url FROM a INTERSECT SELECT url FROM b) TO '$DIR/c3.txt' (HEADER false, QUOTE '')\")
"
  done
done
LC_ALL=C sort "$DIR/c1.txt" | cmp - "$DIR/c2.txt" && echo "bloomforge and sort+comm agree: $(wc -l < "$DIR/c2.txt") common lines"
if [ -f "$DIR/c3.txt" ]; then LC_ALL=C sort "$DIR/c3.txt" | cmp - "$DIR/c2.txt" && echo "duckdb agrees"; fi
