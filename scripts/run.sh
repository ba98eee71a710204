#!/usr/bin/env bash
# The main job: installs what is missing, builds sparkprof, and produces a real report and flame
# graph into out/:
#   out/demo-eventlog.zstd   a synthetic Spark event log (skewed join that spills, slow write)
#   out/report.txt|.json|.html  `sparkprof analyze` of it (text, JSON, self-contained HTML page)
#   out/agent-profile.*      the JVMTI agent profiling a real JVM workload: collapsed stacks, JSON,
#                            and the flame graph (HTML) rendered by `sparkprof flamegraph`
# Pass an event log (file, directory or zip) to analyze that instead of the demo log.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release >/dev/null
mkdir -p out
cli=build/cli/sparkprof

log="${1:-}"
if [ -z "$log" ]; then
  log=out/demo-eventlog.zstd
  "$cli" demo-log --codec zstd -o "$log"
fi
status=0
"$cli" analyze "$log" -o out/report.txt || status=$?
"$cli" analyze "$log" --format json -o out/report.json || status=$?
"$cli" analyze "$log" --format html -o out/report.html -q || status=$?
cat out/report.txt

agent=build/native-agent/libsparkprof.so
classes=build/tests/agent/classes
if [ -f "$agent" ] && [ -d "$classes" ]; then
  java -agentpath:"$PWD/$agent=interval=5ms,out=$PWD/out/agent-profile" -cp "$classes" \
    AgentWorkloads serialization 6 >/dev/null
  if [ -f out/agent-profile.collapsed ] && "$cli" flamegraph --help >/dev/null 2>&1; then
    "$cli" flamegraph out/agent-profile.collapsed -o out/agent-flamegraph.html \
      --title "sparkprof agent: serialization workload"
  fi
fi
echo
echo "sparkprof: wrote $(ls out | tr '\n' ' ')"
exit "$status"
