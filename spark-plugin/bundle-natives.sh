#!/usr/bin/env bash
# Stages the native libraries the plugin jar carries (plugin-only install) into OUT_DIR:
# libsparkprof.so and libsparkprof_driver.so without debug sections, and the shared libraries the
# driver library needs that a Spark node's image may lack (everything but glibc, libstdc++ and
# libgcc: today libsimdjson and libprometheus-cpp-core), listed in load order in
# driver-dependencies.txt.
# Usage: bundle-natives.sh AGENT_SO DRIVER_SO OUT_DIR
set -euo pipefail
agent="$1" driver="$2" out="$3"
rm -rf "$out"
mkdir -p "$out"
strip_or_copy() {
  if command -v strip >/dev/null; then strip --strip-debug -o "$2" "$1"; else cp "$1" "$2"; fi
}
strip_or_copy "$agent" "$out/libsparkprof.so"
strip_or_copy "$driver" "$out/libsparkprof_driver.so"
: >"$out/driver-dependencies.txt"
ldd "$driver" | while read -r name arrow path _; do
  [ "$arrow" = "=>" ] || continue
  case "$name" in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*|libstdc++.so.*|libgcc_s.so.*) continue ;;
  esac
  [ -f "$path" ] || { echo "bundle-natives: $name not found ($path)" >&2; exit 1; }
  strip_or_copy "$path" "$out/$name"
  echo "$name" >>"$out/driver-dependencies.txt"
done
