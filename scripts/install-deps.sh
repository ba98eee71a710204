#!/usr/bin/env bash
# Installs what sparkprof needs from Debian's packages. Idempotent; silent when all is present.
# (Spark itself and the plugin's Maven dependencies: scripts/install-spark.sh.)
# Usage: scripts/install-deps.sh [--browser] [--prometheus] [--python] [--image]
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git clang libclang-rt-14-dev
  libsimdjson-dev liblz4-dev libzstd-dev libsnappy-dev zlib1g-dev liblzf-dev libzip-dev
  libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev libflatbuffers-dev flatbuffers-compiler
  prometheus-cpp-dev libxxhash-dev clang-format-14 clang-tidy-14
  flatbuffers-compiler-dev libboost-dev openjdk-17-jdk-headless maven zstd lz4 gzip zip unzip python3
  python3-venv python3-dev
)
pinned=()  # name=version
for arg in "$@"; do
  case "$arg" in
    --browser)
      # What scripts/test.sh needs beyond the build: headless Chromium for the browser tests and
      # a real Prometheus server for the e2e test (tests/e2e/).
      packages+=(chromium prometheus)
      # Node.js may come from elsewhere (a newer build); Debian's npm conflicts with it.
      command -v node >/dev/null || packages+=(nodejs)
      command -v npm >/dev/null || packages+=(npm)
      ;;
    --prometheus) packages+=(prometheus) ;;
    # The Python package's tests (scripts/python-tests.sh): real PostgreSQL (the store) and
    # Prometheus (collect --prometheus) servers; npm for Azurite (install-storage-emulators.sh).
    --python)
      packages+=(postgresql prometheus)
      command -v node >/dev/null || packages+=(nodejs)
      command -v npm >/dev/null || packages+=(npm)
      ;;
    # The files image (scripts/build-image.sh: umoci, skopeo and the static busybox it copies in)
    # and its test (tests/image/: podman runs it as the chart's init container, with runc: crun
    # 1.8 refuses hosts with cgroup v1 beside a v2 hierarchy that has controllers, docs/image.md).
    # Pinned to Debian 12's versions: busybox-static's bytes are in the image, so its version is
    # part of the image's digest (the SBOM names it).
    --image)
      pinned+=(umoci=0.4.7+ds-3+b7 skopeo=1.9.3+ds1-1+b10 busybox-static=1:1.35.0-4+deb12u1+b1
        podman=4.3.1+ds1-8+deb12u1+b3 runc=1.1.5+ds1-1+deb12u1)
      ;;
    *) echo "install-deps: unknown option $arg" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
for p in "${pinned[@]}"; do
  if [ "$(dpkg-query -W -f='${Version}' "${p%%=*}" 2>/dev/null)" != "${p#*=}" ]; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
