#!/usr/bin/env bash
# The main job: installs what is missing (Debian packages, two pinned Spark releases), builds
# sparkprof, and profiles a real Spark application into out/:
#   a standalone Spark cluster on 127.0.0.1 (a Master and two Workers) runs the demo application
#   (demo/: Java serialization, a skewed key, a shuffle, a Parquet write, a sort that spills, GC
#   churn) with the agent and the plugin, submitted as docs/quickstart-spark.md shows; then
#   out/report.txt|.json|.md|.html   the live end-of-application report the driver wrote
#   out/stage-<id>-attempt-<n>.html  a flame graph per stage; out/profile.sparkprof all samples
#   out/metrics.txt                  the driver's Prometheus /metrics, read just before the end
#   out/eventlog/                    Spark's own event log of the run
#   out/eventlog-report.txt|.json|.html  `sparkprof analyze` of that event log
# Logs of the cluster and the driver stay in build/demo-run/.
#
# scripts/run.sh PATH analyses your own event log (file, directory or zip) instead:
#   out/report.txt|.json|.html
set -euo pipefail
cd "$(dirname "$0")/.."
cli=build/cli/sparkprof
log="${1:-}"

build() {  # quiet unless it fails
  mkdir -p build
  scripts/build.sh release >build/run-build.log 2>&1 ||
    { tail -40 build/run-build.log; echo "run.sh: the build failed (build/run-build.log)" >&2; exit 1; }
}

if [ -n "$log" ]; then
  scripts/install-deps.sh
  build
  mkdir -p out
  status=0
  "$cli" analyze "$log" -o out/report.txt || status=$?
  "$cli" analyze "$log" --format json -o out/report.json || status=$?
  "$cli" analyze "$log" --format html -o out/report.html -q || status=$?
  cat out/report.txt
  echo
  echo "sparkprof: wrote out/report.txt out/report.json out/report.html"
  exit "$status"
fi

scripts/install-deps.sh --prometheus
scripts/install-spark.sh
build
spark_version=$(scripts/spark-versions.sh | sed -n 1p)  # sed reads all: no SIGPIPE under pipefail
plugin_jars=(build/spark-plugin/maven/sparkprof-spark-*.jar)
mkdir -p out
python3 tests/e2e/run_real_spark.py --demo --out out \
  --spark-home "build/spark/$spark_version/home" \
  --agent build/native-agent/libsparkprof.so \
  --plugin-jar "${plugin_jars[0]}" \
  --demo-jar build/demo/sparkprof-demo.jar \
  --sparkprof "$cli" \
  --work-dir build/demo-run
cat out/report.txt
echo
echo "sparkprof: open out/report.html and out/stage-*.html in a browser"
