#!/usr/bin/env bash
# Prints the pinned Spark releases, one per line, from spark-plugin/pom.xml (the one place every
# downloaded version is pinned): the Spark 3.5 (Scala 2.12) release, then the Spark 4 (Scala 2.13).
set -euo pipefail
pom="$(dirname "$0")/../spark-plugin/pom.xml"
for key in spark35.version spark4.version; do
  value=$(sed -n "s:.*<$key>\\([^<]*\\)</$key>.*:\\1:p" "$pom" | head -1)
  [ -n "$value" ] || { echo "spark-versions: <$key> missing in $pom" >&2; exit 2; }
  echo "$value"
done
