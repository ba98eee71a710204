#!/usr/bin/env bash
# Everything the engine answers for the real logs, written to a folder so that two builds can be
# compared byte for byte (issue 31: a refactoring must not change one byte of any report or what-if
# answer). Usage:
#   tests/identity/snapshot.sh SPARKPROF_BINARY OUT_DIR [EVENTLOG_DIR]
#   diff -r BEFORE_DIR AFTER_DIR && echo identical
# EVENTLOG_DIR defaults to ../shared/eventlogs. Written: the several-application report of the
# folder in json, text, md and html; each what-if scenario's JSON over the folder; the report of every
# generated workload with its profile when it has one (tests/workloads/fixtures), in json.
set -euo pipefail
binary=$(realpath "$1")
out=$(mkdir -p "$2" && realpath "$2")
repo=$(cd "$(dirname "$0")/../.." && pwd)
logs=${3:-$repo/../shared/eventlogs}
[[ -d $logs ]] || { echo "snapshot: no event logs at $logs" >&2; exit 2; }
mkdir -p "$out"
for format in json text md html; do
  "$binary" analyze "$logs" --format "$format" -q -o "$out/analyze.$format" || true
done
scenarios=(
  "none|"
  "executors4|--set spark.executor.instances=4"
  "cores2|--set spark.executor.cores=2"
  "memory8g|--set spark.executor.memory=8g"
  "partitions400|--set spark.sql.shuffle.partitions=400"
  "maxpartition64m|--set spark.sql.files.maxPartitionBytes=64m"
  "dynamic|--set spark.dynamicAllocation.enabled=true"
  "speculation|--set spark.speculation=true"
  "skew|--fix skew"
  "broadcast|--fix broadcast"
)
for scenario in "${scenarios[@]}"; do
  name=${scenario%%|*}
  read -r -a args <<<"${scenario#*|}"
  "$binary" whatif "$logs" "${args[@]}" --format json -o "$out/whatif.$name.json" \
    2>"$out/whatif.$name.stderr" || echo "exit $?" >>"$out/whatif.$name.stderr"
done
fixtures=$repo/tests/workloads/fixtures
temp=$(mktemp -d)
trap 'rm -rf "$temp"' EXIT
for log in "$fixtures"/*/*.zstd; do
  [[ $log == *.sparkprof.zstd ]] && continue
  version=$(basename "$(dirname "$log")")
  name=$(basename "$log" .zstd)
  mkdir -p "$out/workloads/$version"
  args=()
  if [[ -f ${log%.zstd}.sparkprof.zstd ]]; then
    zstd -dqf "${log%.zstd}.sparkprof.zstd" -o "$temp/profile.sparkprof"
    args=(--profile profile.sparkprof)  # relative: the report names it, the same in every run
  fi
  (cd "$temp" && "$binary" analyze "$log" "${args[@]}" --format json -q \
    -o "$out/workloads/$version/$name.json") || true
done
