#!/usr/bin/env bash
# `sparkprof analyze -q FILE` with several builds, interleaved run by run, N rounds: each build's
# median and sorted wall times in ms (`date +%s%N` around each run: ~2 ms of `date` included).
# Medians and spreads, not only the best run: thread placement makes some runs much slower.
# Usage: bench/analyze_interleaved.sh ROUNDS FILE BINARY...
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 ROUNDS FILE BINARY..." >&2; exit 2; }
rounds=$1
file=$2
shift 2
declare -A times
for _ in $(seq "$rounds"); do
  for binary in "$@"; do
    start=$(date +%s%N)
    "$binary" analyze -q "$file" >/dev/null 2>&1
    end=$(date +%s%N)
    times[$binary]+="$(((end - start) / 100000)) "
  done
done
for binary in "$@"; do
  sorted=$(tr ' ' '\n' <<<"${times[$binary]}" | grep . | sort -n | awk '{printf "%.1f ", $1 / 10}')
  median=$(tr ' ' '\n' <<<"$sorted" | grep . | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
  echo "$binary: median $median ms | $sorted"
done
