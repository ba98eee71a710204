#!/usr/bin/env bash
# The chart with the real helm CLI: `helm lint`, then `helm template` for five cases (defaults;
# OpenTelemetry on with a ServiceMonitor, runbook base URL and pod templates; plugin-only; the
# Spark Connect server with OpenTelemetry and S3A on, and alone) checked by check_rendered.py,
# and one invalid value that must fail to render.
# helm: $HELM, else build/tools/helm (scripts/install-helm.sh), else PATH; none: exit 77 (skip).
set -euo pipefail
cd "$(dirname "$0")/../.."
helm="${HELM:-}"
[ -z "$helm" ] && [ -x build/tools/helm ] && helm=build/tools/helm
[ -z "$helm" ] && helm=$(command -v helm || true)
if [ -z "$helm" ]; then
  echo "helm_chart_test: no helm (run scripts/install-helm.sh); skipped"
  exit 77
fi
chart=helm/sparkprof
"$helm" lint --strict "$chart"
"$helm" lint --strict "$chart" --set monitoring.openTelemetry.enabled=true,serviceMonitor.enabled=true
"$helm" lint --strict "$chart" --set sparkConnect.enabled=true,monitoring.openTelemetry.enabled=true
render() { "$helm" template t "$chart" --namespace spark-jobs "$@"; }
render | python3 helm/tests/check_rendered.py defaults
render --set monitoring.openTelemetry.enabled=true \
  --set monitoring.openTelemetry.endpoint=http://collector.obs:4318 \
  --set monitoring.openTelemetry.protocol=http \
  --set monitoring.openTelemetry.samplingRatio=0.25 \
  --set monitoring.openTelemetry.serviceName=etl \
  --set serviceMonitor.enabled=true \
  --set prometheusRule.runbookBaseUrl=https://docs.example.com/sparkprof/ \
  --set sparkprof.podTemplateDir=/etc/sparkprof \
  --set sparkprof.agentOptions='interval=20ms\,mode=wall' \
  --set sparkprof.extraJavaOptions=-XX:+UseG1GC \
  | python3 helm/tests/check_rendered.py otel
render --set sparkprof.pluginOnly=true --set installFromImage.enabled=false \
  --set sparkprof.agentOptions=interval=20ms \
  | python3 helm/tests/check_rendered.py plugin-only
render --set sparkConnect.enabled=true --set monitoring.openTelemetry.enabled=true \
  --set monitoring.s3aMetrics.enabled=true \
  --set 'sparkConnect.extraConf.spark\.hadoop\.fs\.s3a\.endpoint=http://minio:9000' \
  --set sparkConnect.env.OTEL_RESOURCE_ATTRIBUTES=team=data \
  | python3 helm/tests/check_rendered.py connect
render --set sparkConnect.enabled=true | python3 helm/tests/check_rendered.py connect-plain
if render --set monitoring.openTelemetry.enabled=true --set monitoring.openTelemetry.protocol=udp \
    >/dev/null 2>&1; then
  echo "helm_chart_test: protocol=udp rendered; expected a failure" >&2
  exit 1
fi
echo "helm_chart_test: lint and 5 rendered cases OK"
