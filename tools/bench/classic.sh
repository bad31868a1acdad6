#!/usr/bin/env bash
# The classic problem scaled down: two files of LINES generated URLs (~65 bytes; half the
# ids shared, every 7th line repeated) and a memory of MEM (the classic ratio: 4 GB for
# 2 x 320 GB is 1/160 of the input; 16M for 2 x 1.3 GB). Exact and approximate `common`:
# wall time, peak RSS, temp space, and the approximate answer's FP measured against the
# exact one. Usage: tools/bench/classic.sh [LINES] [MEM] [DIR]
set -euo pipefail
LINES=${1:-20000000}
MEM=${2:-16M}
DIR=${3:-/tmp/bfbench-classic}
B=${B:-target/release/bloomforge}
mkdir -p "$DIR/tmp"
trap 'rm -rf "$DIR"' EXIT
$B gen-urls --lines "$LINES" --file 0 -o "$DIR/a.txt"
$B gen-urls --lines "$LINES" --file 1 -o "$DIR/b.txt"
cat "$DIR/a.txt" "$DIR/b.txt" > /dev/null
tv() { # OUT, command...: runs the command into OUT, prints its stderr, wall time and RSS
  local out=$1; shift
  /usr/bin/time -v "$@" 2> "$DIR/time.txt" > "$out" || echo "    FAILED"; { grep -v '^\s' "$DIR/time.txt" || true; } | sed 's/^/    /';
  awk -F': ' '/Elapsed/ {n=split($2,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; w=s}
              /Maximum resident/ {r=$2/1024} END {printf "    wall %.2f s, peak RSS %.1f MB\n", w, r}' "$DIR/time.txt"; }
echo "exact, --memory $MEM:"
tv "$DIR/exact.txt" $B -v common --exact --memory "$MEM" --temp-dir "$DIR/tmp" "$DIR/a.txt" "$DIR/b.txt"
echo "approximate, --memory $MEM:"
tv "$DIR/approx.txt" $B common --memory "$MEM" "$DIR/a.txt" "$DIR/b.txt"
echo "sort -u -S $MEM --parallel=2 + comm -12 (reference):"
tv /dev/null bash -c "LC_ALL=C sort -u -S $MEM --parallel=2 -T '$DIR/tmp' '$DIR/a.txt' > '$DIR/as.txt' &&
  LC_ALL=C sort -u -S $MEM --parallel=2 -T '$DIR/tmp' '$DIR/b.txt' > '$DIR/bs.txt' &&
  LC_ALL=C comm -12 '$DIR/as.txt' '$DIR/bs.txt' > '$DIR/comm.txt'"
LC_ALL=C sort -S 1G "$DIR/exact.txt" | cmp - "$DIR/comm.txt" && echo "exact == sort+comm: $(wc -l < "$DIR/comm.txt") lines"
LC_ALL=C sort -u -S 1G "$DIR/approx.txt" > "$DIR/approx_u.txt"
false_pos=$(LC_ALL=C comm -23 "$DIR/approx_u.txt" "$DIR/comm.txt" | wc -l)
missed=$(LC_ALL=C comm -13 "$DIR/approx_u.txt" "$DIR/comm.txt" | wc -l)
distinct_b=$(wc -l < "$DIR/bs.txt"); common=$(wc -l < "$DIR/comm.txt")
awk -v f="$false_pos" -v m="$missed" -v d="$distinct_b" -v c="$common" 'BEGIN {
  printf "approximate: %d false lines of %d distinct non-common lines of b: FP %.4f; missed %d\n", f, d-c, f/(d-c), m }'
