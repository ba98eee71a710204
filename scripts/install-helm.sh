#!/usr/bin/env bash
# Builds the pinned helm CLI from its Go module with the machine's Go, for the chart's tests
# (helm/tests/), and installs the pinned Grafana dashboard model (grafana-foundation-sdk). The binary lands in build/tools/helm-<version>/helm, with build/tools/helm as a
# symlink to it. Idempotent and quiet when the pinned version is already there; the Go module and
# build caches make a rebuild after `rm -rf build/tools` fast.
# Usage: scripts/install-helm.sh            (HELM_VERSION and GO may override the pins below)
# The build is niced and runs one compile job at a time (-p 1) so it can share a busy machine.
set -euo pipefail
cd "$(dirname "$0")/.."
version="${HELM_VERSION:-v3.16.4}"
go="${GO:-/usr/local/go/bin/go}"
dir="build/tools/helm-$version"

# The Grafana dashboard model the generated dashboards are checked against
# (helm/tests/dashboards_model_test.py): grafana-foundation-sdk from PyPI, pinned to its build for
# Grafana 11.6, in build/tools/grafana-sdk-venv (pip's cache makes a reinstall offline-fast).
sdk_pin="grafana-foundation-sdk==1769699379!11.6.0"
scripts/pinned-venv.sh build/tools/grafana-sdk-venv "$sdk_pin"

if [ -x "$dir/helm" ] && "$dir/helm" version --short 2>/dev/null | grep -q "^$version"; then
  ln -sfn "helm-$version/helm" build/tools/helm
  exit 0
fi
if [ ! -x "$go" ]; then
  echo "install-helm: no Go toolchain at $go; set GO=/path/to/go" >&2
  exit 1
fi
echo "install-helm: building helm.sh/helm/v3/cmd/helm@$version into $dir"
mkdir -p "$dir"
# -ldflags sets the version `helm version` prints (helm's Makefile does the same).
GOFLAGS=-mod=mod GOBIN="$PWD/$dir" nice -n 10 "$go" install -p "${HELM_BUILD_JOBS:-1}" \
  -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$version" \
  "helm.sh/helm/v3/cmd/helm@$version"
ln -sfn "helm-$version/helm" build/tools/helm
"$dir/helm" version --short
