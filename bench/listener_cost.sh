#!/usr/bin/env bash
# The plugin's listener bridge at steady state inside real Spark: TASKS x JOBS one-record tasks in
# local mode with the plugin (plugin-only install), and the plugin's own end-of-run line, which
# gives the listener thread's wall and CPU time per event (after the first) and the share spent
# making Spark's JSON lines. Usage: bench/listener_cost.sh [SPARK_VERSION] [TASKS] [JOBS]
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:-$(scripts/spark-versions.sh | sed -n 1p)}"
tasks="${2:-4000}"
jobs="${3:-5}"
home="build/spark/$version/home"
jar=$(ls build/spark-plugin/maven/sparkprof-spark-*.jar | head -1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
javac --release 8 -nowarn -cp "$home/jars/*" -d "$work" bench/listener_cost/ListenerCost.java
(cd "$work" && jar cf listener-cost.jar ListenerCost*.class)
SPARK_LOCAL_IP=127.0.0.1 "$home/bin/spark-submit" --master 'local[2]' --driver-memory 1g \
  --conf spark.ui.enabled=false --conf spark.plugins=io.sparkprof.SparkProfPlugin \
  --conf spark.sparkprof.outputDir="$work/out" --conf spark.sparkprof.prometheus.port=0 \
  --jars "$jar" --class ListenerCost "$work/listener-cost.jar" "$tasks" "$jobs" 2>&1 |
  grep -E "^listener-cost:|sparkprof: listener:"
