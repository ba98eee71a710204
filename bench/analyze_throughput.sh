#!/usr/bin/env bash
# End-to-end `sparkprof analyze` throughput on the largest shared logs, as MB/s of decompressed
# JSON and as a ratio to decompression alone (`zstd -dc > /dev/null`), both timed in this run,
# interleaved, median of N rounds; plus peak RSS. Usage: bench/analyze_throughput.sh [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-7}"
cli=build/cli/sparkprof
logs=../shared/eventlogs/NVIDIA+spark-rapids-tools/core/src/test/resources/spark-events-qualification
[ -x "$cli" ] || { echo "build first: scripts/build.sh release"; exit 2; }
[ -d "$logs" ] || { echo "no shared event logs at $logs; skipped"; exit 0; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
now() { date +%s.%N; }
printf "%-28s %9s %10s %10s %8s %9s %10s\n" log MB analyze_s zstd_s ratio MB/s peak_RSS
for name in nds_q72_dataproc_2_2 nds_q88_photon_db_13_3; do
  file="$logs/$name.zstd"
  bytes=$(zstd -dc "$file" | wc -c)
  a=(); z=()
  for _ in $(seq "$rounds"); do
    t0=$(now); zstd -dc "$file" >/dev/null; t1=$(now)
    "$cli" analyze -q "$file" >/dev/null; t2=$(now)
    z+=("$(echo "$t1 - $t0" | bc)"); a+=("$(echo "$t2 - $t1" | bc)")
  done
  am=$(printf "%s\n" "${a[@]}" | median); zm=$(printf "%s\n" "${z[@]}" | median)
  rss=$(/usr/bin/time -f %M "$cli" analyze -q "$file" 2>&1 >/dev/null | tail -1)
  printf "%-28s %9.1f %10.3f %10.3f %8.2f %9.0f %7d KB\n" "$name" "$(echo "$bytes/1000000" | bc -l)" \
    "$am" "$zm" "$(echo "$am/$zm" | bc -l)" "$(echo "$bytes/1000000/$am" | bc -l)" "$rss"
done
