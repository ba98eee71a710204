#!/usr/bin/env bash
# Installs the object-store emulators the Python package's fsspec tests run against on loopback
# (python/tests/test_cloud_storage.py):
# - fake-gcs-server (Google Cloud Storage's JSON and XML APIs), built from its pinned Go module with
#   the machine's Go into build/tools/fake-gcs-server-<version>/fake-gcs-server;
# - Azurite (Azure Blob Storage), the pinned npm package, into build/tools/azurite-<version>.
# build/tools/fake-gcs-server and build/tools/azurite are symlinks to the current pins. Idempotent
# and quiet when the pins are there; Go's module/build caches and npm's cache make a reinstall
# after `rm -rf build/tools` fast. Usage: scripts/install-storage-emulators.sh
# (FAKE_GCS_VERSION, AZURITE_VERSION, GO and NPM override the pins and tools below.)
# The Go build is niced and runs FAKE_GCS_BUILD_JOBS (default 1) compile jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
gcs_version="${FAKE_GCS_VERSION:-v1.56.1}"
azurite_version="${AZURITE_VERSION:-3.37.0}"
go="${GO:-/usr/local/go/bin/go}"
npm="${NPM:-npm}"
mkdir -p build/tools

gcs_dir="build/tools/fake-gcs-server-$gcs_version"
if [ ! -x "$gcs_dir/fake-gcs-server" ]; then
  if [ ! -x "$go" ]; then
    echo "install-storage-emulators: no Go toolchain at $go; set GO=/path/to/go" >&2
    exit 1
  fi
  echo "install-storage-emulators: building github.com/fsouza/fake-gcs-server@$gcs_version"
  mkdir -p "$gcs_dir"
  GOFLAGS=-mod=mod GOBIN="$PWD/$gcs_dir" nice -n 10 "$go" install \
    -p "${FAKE_GCS_BUILD_JOBS:-1}" -trimpath -ldflags "-s -w" \
    "github.com/fsouza/fake-gcs-server@$gcs_version"
fi
ln -sfn "fake-gcs-server-$gcs_version/fake-gcs-server" build/tools/fake-gcs-server

azurite_dir="build/tools/azurite-$azurite_version"
if [ ! -x "$azurite_dir/node_modules/.bin/azurite-blob" ]; then
  if ! command -v "$npm" >/dev/null; then
    echo "install-storage-emulators: no npm; scripts/install-deps.sh --browser installs it" >&2
    exit 1
  fi
  echo "install-storage-emulators: npm install azurite@$azurite_version"
  mkdir -p "$azurite_dir"
  "$npm" install --silent --no-audit --no-fund --prefix "$azurite_dir" \
    "azurite@$azurite_version" >/dev/null
fi
ln -sfn "azurite-$azurite_version/node_modules/.bin/azurite-blob" build/tools/azurite
