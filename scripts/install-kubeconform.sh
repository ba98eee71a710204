#!/usr/bin/env bash
# Installs the validators of what the project deploys, each pinned, into build/tools: those of the
# Kubernetes manifest test (helm/tests/validate_manifests.py) and the SPDX validator of the files
# image's SBOM (tests/image/image_build_test.py):
#   kubeconform-<version>/kubeconform   the validator, built from its Go module with the machine's Go
#   k8s-schemas-venv/                   Python with the JSON schemas: kubernetes-validate (the
#                                       Kubernetes API's strict JSON schemas, per Kubernetes release)
#                                       and kubeflow-spark-api (the Spark Operator's SparkApplication
#                                       API models, from which the test derives its schema)
#   spdx-venv/                          spdx-tools (pyspdxtools), the SPDX project's validator
#   k8s-crds/                           the Prometheus Operator's CRDs (PodMonitor, ServiceMonitor,
#                                       PrometheusRule) from its Go module's example/
# The Spark Operator's own Go module and Helm chart are not served here (the Go module proxy
# answers 403 for github.com/kubeflow/spark-operator), hence its API models from PyPI.
# Idempotent and quiet when the pins are in place. Usage: scripts/install-kubeconform.sh
# (GO may override the Go toolchain; the build is niced, one compile job at a time).
set -euo pipefail
cd "$(dirname "$0")/.."
kubeconform_version=v0.7.0
prometheus_operator_version=v0.85.0
python_pins=(kubernetes-validate==1.34.1 kubeflow-spark-api==2.4.0 pydantic==2.12.5 PyYAML==6.0.3)
go="${GO:-/usr/local/go/bin/go}"
tools=build/tools
mkdir -p "$tools"

dir="$tools/kubeconform-$kubeconform_version"
if ! [ -x "$dir/kubeconform" ]; then
  [ -x "$go" ] || { echo "install-kubeconform: no Go toolchain at $go; set GO=/path/to/go" >&2; exit 1; }
  echo "install-kubeconform: building github.com/yannh/kubeconform/cmd/kubeconform@$kubeconform_version"
  mkdir -p "$dir"
  GOFLAGS=-mod=mod GOBIN="$PWD/$dir" nice -n 10 "$go" install -p "${KUBECONFORM_BUILD_JOBS:-1}" \
    -ldflags "-s -w" "github.com/yannh/kubeconform/cmd/kubeconform@$kubeconform_version"
fi
ln -sfn "kubeconform-$kubeconform_version/kubeconform" "$tools/kubeconform"

scripts/pinned-venv.sh "$tools/k8s-schemas-venv" "${python_pins[@]}"
scripts/pinned-venv.sh "$tools/spdx-venv" spdx-tools==0.8.5

crds="$tools/k8s-crds"
module="github.com/prometheus-operator/prometheus-operator@$prometheus_operator_version"
if [ "$(cat "$crds/.pin" 2>/dev/null)" != "$module" ]; then
  [ -x "$go" ] || { echo "install-kubeconform: no Go toolchain at $go; set GO=/path/to/go" >&2; exit 1; }
  echo "install-kubeconform: the Prometheus Operator's CRDs from $module"
  source_dir=$("$go" mod download -json "$module" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  rm -rf "$crds"
  mkdir -p "$crds"
  for kind in podmonitors servicemonitors prometheusrules; do
    cp "$source_dir/example/prometheus-operator-crd/monitoring.coreos.com_$kind.yaml" "$crds/"
  done
  echo "$module" >"$crds/.pin"
fi
