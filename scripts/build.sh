#!/usr/bin/env bash
# Configures and builds one build tree. Usage: scripts/build.sh [release|asan] [targets...]
#   release: gcc, RelWithDebInfo, into build/
#   asan:    clang, AddressSanitizer + UndefinedBehaviorSanitizer + libFuzzer fuzz targets, into build-asan/
set -euo pipefail
cd "$(dirname "$0")/.."
kind="${1:-release}"
shift || true
jobs="${SPARKPROF_JOBS:-$(nproc)}"
case "$kind" in
  release)
    dir=build
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    ;;
  asan)
    dir=build-asan
    CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
      -DSPARKPROF_SANITIZE=ON -DSPARKPROF_LIBFUZZER=ON -DSPARKPROF_BENCH=OFF \
      -DCMAKE_CXX_FLAGS="-O1" >/dev/null
    ;;
  *) echo "build.sh: unknown build kind '$kind' (release|asan)" >&2; exit 2 ;;
esac
ninja -C "$dir" -j "$jobs" "$@"
