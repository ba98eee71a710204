#!/usr/bin/env bash
# Builds the pinned OpenTelemetry Collector for the OTel tests (tests/otel/) from its Go modules
# with the machine's Go: first the OpenTelemetry Collector Builder (ocb), then the distribution
# scripts/otelcol/builder-config.yaml describes (OTLP receiver + file exporter). The binary lands
# in build/tools/otelcol-<version>/otelcol-sparkprof, with build/tools/otelcol as a symlink to it.
# Idempotent and quiet when the pinned build is there; the Go module and build caches make a
# rebuild after `rm -rf build/tools` fast.
# Usage: scripts/install-otelcol.sh         (OTELCOL_VERSION and GO may override the pins below)
# The build is niced; OTELCOL_BUILD_JOBS (default: every core) bounds its compile jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
version="${OTELCOL_VERSION:-v0.165.0}"
go="${GO:-/usr/local/go/bin/go}"
manifest="scripts/otelcol/builder-config.yaml"
dir="build/tools/otelcol-$version"
binary="$dir/otelcol-sparkprof/otelcol-sparkprof"
stamp="$dir/manifest.sha256"
want="$(sha256sum "$manifest" | cut -d' ' -f1)"
if [ -x "$binary" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  ln -sfn "otelcol-$version/otelcol-sparkprof/otelcol-sparkprof" build/tools/otelcol
  exit 0
fi
if [ ! -x "$go" ]; then
  echo "install-otelcol: no Go toolchain at $go; set GO=/path/to/go" >&2
  exit 1
fi
mkdir -p "$dir"
if [ ! -x "$dir/builder" ]; then
  echo "install-otelcol: building go.opentelemetry.io/collector/cmd/builder@$version"
  GOFLAGS=-mod=mod GOBIN="$PWD/$dir" nice -n 10 "$go" install -p "${OTELCOL_BUILD_JOBS:-$(nproc)}" \
    "go.opentelemetry.io/collector/cmd/builder@$version"
fi
echo "install-otelcol: building the collector of $manifest into $dir"
cp "$manifest" "$dir/builder-config.yaml"
# ocb generates the sources and runs `go build` there, with the Go it finds on PATH. Not its
# `go mod tidy`: that also resolves the components' test-only modules, one of which the module
# proxy does not serve; -mod=mod resolves what the build imports (the pins above decide it).
(cd "$dir" && PATH="$(dirname "$go"):$PATH" \
  GOFLAGS="-mod=mod -p=${OTELCOL_BUILD_JOBS:-$(nproc)}" nice -n 10 ./builder \
  --config=builder-config.yaml --skip-get-modules)
echo "$want" > "$stamp"
ln -sfn "otelcol-$version/otelcol-sparkprof/otelcol-sparkprof" build/tools/otelcol
echo "install-otelcol: $(build/tools/otelcol components 2>/dev/null | grep -c "name:") components in build/tools/otelcol"
