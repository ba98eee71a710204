#!/usr/bin/env bash
# `sparkprof analyze DIR` on directories of many applications (issue 15: users point it at
# thousands of logs): the shared corpus (~120 logs of every size), N copies of the NDS q72 log
# (13,504 tasks each) and the same after a small application, with --threads 1 and with every
# CPU; best wall time of N rounds and peak RSS. Usage: bench/analyze_directory.sh [rounds] [copies]
# (SPARKPROF_CLI=path picks another build).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-3}"
copies="${2:-40}"
cli="${SPARKPROF_CLI:-build/cli/sparkprof}"
shared=../shared/eventlogs
qualification=NVIDIA+spark-rapids-tools/core/src/test/resources/spark-events-qualification
q72=$shared/$qualification/nds_q72_dataproc_2_2.zstd
[ -x "$cli" ] || { echo "build first: scripts/build.sh release"; exit 2; }
[ -f "$q72" ] || { echo "no shared event logs at $shared; skipped"; exit 0; }
many=$(mktemp -d)
trap 'rm -rf "$many"' EXIT
for i in $(seq "$copies"); do cp "$q72" "$many/app_$i.zstd"; done
echo "cpus: $(nproc), load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-28s %8s %10s %12s\n" directory threads best_s peak_RSS_KB
# The third directory is the copies after a small application (first in the directory's order,
# so every other report waits for it when the small one is started last).
small_first=$(mktemp -d)
trap 'rm -rf "$many" "$small_first"' EXIT
"$cli" demo-log -o "$small_first/app_0.json" >/dev/null
for i in $(seq "$copies"); do ln -s "$many/app_$i.zstd" "$small_first/app_$i.zstd"; done
for dir in "$shared" "$many" "$small_first"; do
  case "$dir" in
    "$many") label="$copies x q72" ;;
    "$small_first") label="small + $copies x q72" ;;
    *) label="shared corpus" ;;
  esac
  for threads in 1 0; do
    best=""; rss=0
    for _ in $(seq "$rounds"); do
      out=$(/usr/bin/time -f "%e %M" "$cli" analyze -q --threads "$threads" --format json \
        -o /dev/null "$dir" 2>&1 >/dev/null | tail -1)
      wall=${out% *}; kb=${out#* }
      if [ -z "$best" ] || [ "$(echo "$wall < $best" | bc)" = 1 ]; then best=$wall; fi
      [ "$kb" -gt "$rss" ] && rss=$kb
    done
    printf "%-28s %8s %10s %12s\n" "$label" "$([ "$threads" = 0 ] && echo all || echo 1)" \
      "$best" "$rss"
  done
done
