#!/usr/bin/env bash
# Installs the pinned Spark releases for the real-Spark tests and the main job: pyspark from PyPI
# (a complete Spark distribution: jars, bin/spark-submit, bin/spark-class, sbin/) in one virtual
# environment per release, and the Maven artifacts the plugin compiles against into ~/.m2.
#   build/spark/<version>/venv   the environment
#   build/spark/<version>/home   symlink to its distribution (SPARK_HOME)
# Spark 4 environments also get the Spark Connect client's libraries (tests/otel pins them).
# Versions come from spark-plugin/pom.xml (scripts/spark-versions.sh). Idempotent, quiet when all
# is present; pip's and Maven's caches make a second install offline-fast.
# Usage: scripts/install-spark.sh [ROOT]   (ROOT defaults to build/spark)
set -euo pipefail
cd "$(dirname "$0")/.."
root="${1:-build/spark}"
python="${PYTHON:-python3}"
for version in $(scripts/spark-versions.sh); do
  dir="$root/$version"
  if [ -x "$dir/home/bin/spark-submit" ] && [ -f "$dir/.installed" ]; then
    continue
  fi
  echo "install-spark: pyspark==$version into $dir"
  rm -rf "$dir"
  mkdir -p "$dir"
  "$python" -m venv "$dir/venv"
  "$dir/venv/bin/pip" install -q --disable-pip-version-check "pyspark==$version"
  home=$("$dir/venv/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')
  ln -sfn "$home" "$dir/home"
  chmod +x "$home"/bin/* "$home"/sbin/* 2>/dev/null || true
  touch "$dir/.installed"
done
# The Spark Connect client's libraries (pinned) for the Spark 4 environments: the OpenTelemetry
# test drives a real Spark Connect server from pyspark's client (tests/otel).
connect_pins=tests/otel/requirements-connect.txt
for version in $(scripts/spark-versions.sh); do
  dir="$root/$version"
  case "$version" in 3.*) continue ;; esac
  if [ -f "$dir/.connect-client" ] && [ ! "$connect_pins" -nt "$dir/.connect-client" ]; then
    continue
  fi
  echo "install-spark: Spark Connect client libraries into $dir/venv"
  "$dir/venv/bin/pip" install -q --disable-pip-version-check -r "$connect_pins"
  touch "$dir/.connect-client"
done

# pandas and pyarrow for the Spark 3 environments (pinned): the profiled workloads' mapInPandas
# (tests/workloads) runs on every release; Spark 4's get them with the Connect client above.
pandas_pins=tests/workloads/requirements-pandas.txt
for version in $(scripts/spark-versions.sh); do
  dir="$root/$version"
  case "$version" in 3.*) ;; *) continue ;; esac
  if [ -f "$dir/.pandas" ] && [ ! "$pandas_pins" -nt "$dir/.pandas" ]; then
    continue
  fi
  echo "install-spark: pandas and pyarrow into $dir/venv"
  "$dir/venv/bin/pip" install -q --disable-pip-version-check -r "$pandas_pins"
  touch "$dir/.pandas"
done

# The plugin's compile-time dependencies (both profiles) and Maven's own plugins, so the CMake
# build that follows runs Maven offline.
stamp=build/spark/.maven-resolved
if [ ! -f "$stamp" ] || [ spark-plugin/pom.xml -nt "$stamp" ]; then
  log=$(mktemp)
  for profile in spark-3.5 spark-4; do
    if ! mvn -B -q -Dstyle.color=never -f spark-plugin/pom.xml -P "$profile" \
        -Dsparkprof.build.dir="$PWD/build/spark/maven-$profile" dependency:go-offline >"$log" 2>&1; then
      cat "$log" >&2
      rm -f "$log"
      echo "install-spark: Maven could not resolve the plugin's dependencies ($profile)" >&2
      exit 1
    fi
  done
  rm -f "$log"
  mkdir -p build/spark && touch "$stamp"
fi
