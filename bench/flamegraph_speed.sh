#!/usr/bin/env bash
# `sparkprof flamegraph` end to end on the bench's generated profiles (issue 15): CPU seconds
# (user + sys) and peak RSS per run, best of N, next to `wc -l` on the same file (the floor: every
# byte read and every line end found) and, if given, another build of sparkprof (the previous
# version) timed in the same rounds, interleaved.
#
# Usage: bench/flamegraph_speed.sh [rounds=5] [build dir=build] [other sparkprof binary]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-5}"
build="${2:-build}"
other="${3:-}"
cli="$build/cli/sparkprof"
generator="$build/bench/flamegraph_bench"
for binary in "$cli" "$generator"; do
  [ -x "$binary" ] || { echo "build first: ninja -C $build sparkprof flamegraph_bench"; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# "user+sys maxrss_kb" of one run of "$@".
measure() {
  /usr/bin/time -f "%U %S %M" -o "$work/time" "$@" >/dev/null 2>&1
  awk '{printf "%.3f %d\n", $1 + $2, $3}' "$work/time"
}
# Best (lowest) CPU and lowest peak RSS over the lines "cpu rss" on stdin.
best() { sort -n | awk 'NR == 1 {cpu = $1} {if (rss == "" || $2 < rss) rss = $2} \
                       END {printf "%s %s\n", cpu, rss}'; }

printf "%-12s %6s %8s %6s %7s %6s %7s %7s %8s %8s %8s\n" shape MB nodes wc_s fg_s fg/wc MB/s \
  RSS_MB other_s other/fg other_MB
for shape in java35 callgraph independent; do
  input="$work/$shape.collapsed"
  nodes=$("$generator" 100000 1000000 "$shape" "$work/bench.html" "$input" |
          sed -n 's/.*text, \([0-9]*\) tree nodes/\1/p')
  mb=$(stat -c %s "$input" | awk '{printf "%.1f", $1 / 1e6}')
  : >"$work/floor"; : >"$work/new"; : >"$work/old"
  for _ in $(seq "$rounds"); do
    measure wc -l "$input" >>"$work/floor"
    measure "$cli" flamegraph "$input" -o "$work/new.html" >>"$work/new"
    if [ -n "$other" ]; then
      measure "$other" flamegraph "$input" -o "$work/old.html" >>"$work/old"
    fi
  done
  read -r floor_s _ < <(best <"$work/floor")
  read -r new_s new_kb < <(best <"$work/new")
  old_s=-; old_ratio=-; old_mb=-
  if [ -n "$other" ]; then
    read -r old_s old_kb < <(best <"$work/old")
    old_ratio=$(echo "$old_s / $new_s" | bc -l | xargs printf "%.2fx")
    old_mb=$((old_kb / 1024))
  fi
  floor_ratio=$(awk -v a="$new_s" -v b="$floor_s" 'BEGIN {if (b > 0) printf "%.0fx", a / b;
                                                         else print "-"}')
  printf "%-12s %6s %8s %6s %7s %6s %7.0f %7d %8s %8s %8s\n" "$shape" "$mb" "$nodes" \
    "$floor_s" "$new_s" "$floor_ratio" "$(echo "$mb / $new_s" | bc -l)" $((new_kb / 1024)) \
    "$old_s" "$old_ratio" "$old_mb"
done
echo "(CPU seconds user+sys and peak RSS, best of $rounds;" \
  "load average: $(cut -d' ' -f1-3 /proc/loadavg))"
