#!/usr/bin/env bash
# Configures and builds one build tree. Usage: scripts/build.sh [release|asan|tsan] [targets...]
#   release: gcc, RelWithDebInfo, into build/
#   asan:    clang, AddressSanitizer + UndefinedBehaviorSanitizer + libFuzzer fuzz targets, into build-asan/
#   tsan:    clang, ThreadSanitizer, into build-tsan/ (name the targets: the threaded parts' tests)
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
  tsan)
    dir=build-tsan
    CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DSPARKPROF_BENCH=OFF -DCMAKE_C_FLAGS="-fsanitize=thread" \
      -DCMAKE_CXX_FLAGS="-fsanitize=thread" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" \
      -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" >/dev/null
    ;;
  *) echo "build.sh: unknown build kind '$kind' (release|asan|tsan)" >&2; exit 2 ;;
esac
ninja -C "$dir" -j "$jobs" "$@"
