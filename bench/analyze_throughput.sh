#!/usr/bin/env bash
# End-to-end `sparkprof analyze` throughput on the largest shared logs: wall time of the default
# (all CPUs) and of --threads 1, against decompression alone (`zstd -dc > /dev/null`), all timed
# in this run, interleaved, best of N rounds (issue 15's measure) and the median ratio (what a
# user sees run to run: thread placement made some runs much slower); MB/s of decompressed JSON on
# the compressed log and on the same log decompressed to a plain file first; peak RSS; CPU time.
# Usage: bench/analyze_throughput.sh [rounds]   (SPARKPROF_CLI=path picks another build)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-5}"
cli="${SPARKPROF_CLI:-build/cli/sparkprof}"
logs=../shared/eventlogs/NVIDIA+spark-rapids-tools/core/src/test/resources/spark-events-qualification
[ -x "$cli" ] || { echo "build first: scripts/build.sh release"; exit 2; }
[ -d "$logs" ] || { echo "no shared event logs at $logs; skipped"; exit 0; }
plain_dir=$(mktemp -d)
trap 'rm -rf "$plain_dir"' EXIT
best() { sort -n | head -1; }
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
now() { date +%s.%N; }
elapsed() { local t0; t0=$(now); "$@" >/dev/null 2>&1; echo "$(now) - $t0" | bc; }
echo "cpus: $(nproc), load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-24s %6s %8s %8s %7s %7s %7s %7s %9s %9s %8s %8s\n" log MB zstd_s all_s ratio \
  med_rat t1_s t1_ratio MB/s plainMB/s RSS_KB cpu_s
for name in nds_q72_dataproc_2_2 nds_q88_photon_db_13_3; do
  file="$logs/$name.zstd"
  plain="$plain_dir/$name.json"
  zstd -dc "$file" >"$plain"
  bytes=$(stat -c %s "$plain")
  z=(); a=(); s=(); p=()
  for _ in $(seq "$rounds"); do
    z+=("$(elapsed zstd -dc "$file")")
    a+=("$(elapsed "$cli" analyze -q "$file")")
    s+=("$(elapsed "$cli" analyze -q --threads 1 "$file")")
    p+=("$(elapsed "$cli" analyze -q "$plain")")
  done
  zb=$(printf "%s\n" "${z[@]}" | best); ab=$(printf "%s\n" "${a[@]}" | best)
  sb=$(printf "%s\n" "${s[@]}" | best); pb=$(printf "%s\n" "${p[@]}" | best)
  zm=$(printf "%s\n" "${z[@]}" | median); am=$(printf "%s\n" "${a[@]}" | median)
  usage=$(/usr/bin/time -f "%M %U %S" "$cli" analyze -q "$file" 2>&1 >/dev/null | tail -1)
  rss=${usage%% *}; cpu=$(echo "$usage" | awk '{print $2 + $3}')
  printf "%-24s %6.1f %8.3f %8.3f %7.2f %7.2f %7.3f %7.2f %9.0f %9.0f %8d %8.2f\n" "$name" \
    "$(echo "$bytes/1000000" | bc -l)" "$zb" "$ab" "$(echo "$ab/$zb" | bc -l)" \
    "$(echo "$am/$zm" | bc -l)" "$sb" \
    "$(echo "$sb/$zb" | bc -l)" "$(echo "$bytes/1000000/$ab" | bc -l)" \
    "$(echo "$bytes/1000000/$pb" | bc -l)" "$rss" "$cpu"
done
