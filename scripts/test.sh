#!/usr/bin/env bash
# Every test: unit, engine (real shared event logs when ../shared/eventlogs exists), JVM agent,
# the plugin inside real Spark releases (local mode and a standalone cluster), browser; then the
# same C++ tests under AddressSanitizer + UndefinedBehaviorSanitizer (clang), the threaded parts'
# tests under ThreadSanitizer, then each fuzz target for a bounded time. Exits non-zero on any
# failure.
# SPARKPROF_FUZZ_SECONDS (default 20) bounds each fuzz target.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage's banner says how long the run has taken so far (CI must stay well under an hour).
stage() { echo "== $* ($((SECONDS / 60)) min $((SECONDS % 60)) s in)"; }
# A clean clone's run leaves about 14 GiB (release, ASan and TSan builds, two Spark releases, the
# S3A jars, the real-cluster tests' outputs); a disk that fills mid-run fails a link step with a
# message far from its cause, so say it first.
free_gib=$(df -Pk . | awk 'NR == 2 {print int($4 / 1048576)}')
echo "test.sh: ${free_gib} GiB free on $(df -P . | awk 'NR == 2 {print $6}') (a clean run needs about 16)"
if [ "${free_gib:-0}" -lt 16 ]; then
  echo "test.sh: WARNING: under 16 GiB free; the run may fail with 'no space left on device'" >&2
fi
scripts/install-deps.sh --browser --image
scripts/install-spark.sh
scripts/install-jdks.sh
scripts/install-s3a.sh
scripts/install-helm.sh
scripts/install-kubeconform.sh
scripts/install-otelcol.sh
[ -x tests/browser/setup.sh ] && tests/browser/setup.sh >/dev/null 2>&1 || true

stage "release build and tests"
scripts/build.sh release
# Spark on YARN (label yarn: a MiniYARNCluster per test, 3 to 3.7 minutes each on 2 busy cores,
# 4 tests) runs on demand: ctest --test-dir build -L yarn. So does Spark with the files the image's
# init container copied (label image_spark, one real-Spark run per release, the same checks as
# e2e_real_spark_* on the same bytes: ctest --test-dir build -L image_spark); the image's build,
# reproducibility and init-container copy (label image, about a minute) run here.
(cd build && ctest --output-on-failure -j "$(nproc)" --timeout 900 -LE "nightly|yarn|image_spark")

stage "ASan + UBSan build and tests (C++ only: JVM and browser tests need the release build)"
scripts/build.sh asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd build-asan && ctest --output-on-failure -j "$(nproc)" --timeout 900 -LE jvm -E "agent_jvm_|plugin_jvm_|plugin_listener|e2e_|browser")

stage "TSan build and the threaded parts' tests (read-ahead, parsing, ingest queue, what-if)"
tsan_tests="common/common_test analyzer/eventlog/eventlog_test"
tsan_tests+=" driver-aggregator/ingest_queue_test analyzer/whatif/whatif_test"
scripts/build.sh tsan $(for t in $tsan_tests; do basename "$t"; done)
for t in $tsan_tests; do
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp" \
    "build-tsan/$t" --gtest_brief=1
done

stage "fuzz targets"
seconds="${SPARKPROF_FUZZ_SECONDS:-20}"
fuzzers=$(find build-asan -maxdepth 4 -type f -executable -name 'fuzz_*' | sort)
failed=0
passed=0
for fuzzer in $fuzzers; do
  name=$(basename "$fuzzer")
  corpus=$(find . -path ./build -prune -o -path ./build-asan -prune -o -type d -path "*/fuzz/corpus/${name#fuzz_}" -print -o -type d -path "*/fuzz/corpus/$name" -print | head -1)
  # Every target starts from its seeds: without them a short run rarely gets past the format's
  # first checks (the zip and flame-graph targets once ran seedless for want of this layout).
  if [ -z "$corpus" ] || [ -z "$(ls -A "$corpus")" ]; then
    failed=$((failed + 1))
    echo "fuzz $name: FAILED: no seed corpus in <component>/fuzz/corpus/${name#fuzz_} (or /$name)"
    continue
  fi
  work=$(mktemp -d)
  cp -r "$corpus"/. "$work"/
  seeds=$(find "$work" -type f | wc -l)
  if "$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 "$work" >"$work.log" 2>&1; then
    passed=$((passed + 1))
    echo "fuzz $name: ok ($(grep -o 'stat::number_of_executed_units: [0-9]*' "$work.log" | awk '{print $2}') runs from $seeds seeds)"
  else
    failed=$((failed + 1))
    echo "fuzz $name: FAILED"; tail -40 "$work.log"
  fi
  rm -rf "$work" "$work.log"
done
echo "fuzz: $passed passed, $failed failed"
stage "done"
[ "$failed" -eq 0 ]
