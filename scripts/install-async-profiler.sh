#!/usr/bin/env bash
# Installs async-profiler, the reference the agent's fidelity is measured against side by side
# (bench/agent_overhead/run_overhead.py --async-profiler, issue 16): the linux-x64 jar of
# tools.profiler:async-profiler from Maven Central (pinned, sha256-checked), whose
# libasyncProfiler.so is extracted to <root>/4.5/libasyncProfiler.so. Only the benchmark
# uses it; no test does. Idempotent and quiet when present.
# Usage: scripts/install-async-profiler.sh [ROOT]   (ROOT defaults to build/async-profiler)
set -euo pipefail
cd "$(dirname "$0")/.."
root="${1:-build/async-profiler}"
version=4.5
jar=async-profiler-$version-linux-x64.jar
sha256=9c1045baf2ff2a79729d0f09fa1a4e86dce7c9fd15c9caf5ebb8d96102b51e72
url=https://repo1.maven.org/maven2/tools/profiler/async-profiler/$version/$jar

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "install-async-profiler: only the linux-x64 build is pinned, not $(uname -s)-$(uname -m)" >&2
  exit 1
fi
dir="$root/$version"
[ -f "$dir/.installed" ] && [ -f "$dir/libasyncProfiler.so" ] && exit 0

echo "install-async-profiler: $jar into $dir"
mkdir -p "$dir"
curl -fsSL --retry 3 -o "$dir/$jar.part" "$url"
got=$(sha256sum "$dir/$jar.part" | cut -d' ' -f1)
if [ "$got" != "$sha256" ]; then
  rm -f "$dir/$jar.part"
  echo "install-async-profiler: $jar has sha256 $got, expected $sha256" >&2
  exit 1
fi
unzip -q -o -j "$dir/$jar.part" linux-x64/libasyncProfiler.so -d "$dir"
rm -f "$dir/$jar.part"
touch "$dir/.installed"
