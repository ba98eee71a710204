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
want="$(cat "$manifest" scripts/otelcol/go.mod scripts/otelcol/go.sum | sha256sum | cut -d' ' -f1)"
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
# ocb generates the sources; the module files are ours (scripts/otelcol/go.{mod,sum}: every
# module version and hash pinned), not its `go mod tidy`, which also resolves the components'
# test-only modules, one of which the module proxy does not serve. Then a plain `go build`.
(cd "$dir" && PATH="$(dirname "$go"):$PATH" nice -n 10 ./builder \
  --config=builder-config.yaml --skip-get-modules --skip-compilation >/dev/null)
cp scripts/otelcol/go.mod scripts/otelcol/go.sum "$dir/otelcol-sparkprof/"
(cd "$dir/otelcol-sparkprof" && GOFLAGS=-mod=mod nice -n 10 "$go" build \
  -p "${OTELCOL_BUILD_JOBS:-$(nproc)}" -trimpath -ldflags="-s -w" -o otelcol-sparkprof .)
echo "$want" > "$stamp"
ln -sfn "otelcol-$version/otelcol-sparkprof/otelcol-sparkprof" build/tools/otelcol
count="$(build/tools/otelcol components 2>/dev/null | grep -c "name:")"
echo "install-otelcol: $count components in build/tools/otelcol"
