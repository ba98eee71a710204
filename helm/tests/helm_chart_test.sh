#!/usr/bin/env bash
# The chart with the real helm CLI: `helm lint` (also with the SparkApplication; its manifests are
# validated by validate_manifests.py), then `helm template` for five cases (defaults;
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
"$helm" lint --strict "$chart" --set sparkApplication.enabled=true,sparkApplication.mainClass=x.Main \
  --set-string sparkApplication.sparkVersion=3.5.9,sparkApplication.image=spark:3.5.9 \
  --set-string sparkApplication.mainApplicationFile=local:///app.jar
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
# Hostile values (issue 33): values.schema.json refuses each one, naming the value, before anything
# renders -- a newline that would add a line to spark-defaults.conf (a value, a conf key, an env
# name), shell characters in a path the init container's `sh -c` runs, an unknown pull policy.
nl=$'\n'
refused=0
refuse() {  # NAMED FLAG VALUE: rendering must fail and the message must name NAMED
  local named=$1 out
  shift
  if out=$(render "$@" 2>&1); then
    echo "helm_chart_test: rendered a hostile value ($named); expected a refusal" >&2
    exit 1
  fi
  if ! grep -q -- "$named" <<<"$out"; then
    echo "helm_chart_test: the refusal of $named does not name it: $out" >&2
    exit 1
  fi
  refused=$((refused + 1))
}
refuse plugin.extraConf --set-string "plugin.extraConf.spark\\.app\\.name=x${nl}spark.driver.extraClassPath=/evil.jar"
refuse sparkprof.extraJavaOptions --set-string "sparkprof.extraJavaOptions=-Xss1m${nl}spark.driver.extraClassPath=/evil.jar"
refuse sparkConnect.extraConf --set-string "sparkConnect.extraConf.evil${nl}key=1"
refuse sparkConnect.env --set-string "sparkConnect.env.A${nl}B=1"
refuse sparkprof.installDir --set-string "sparkprof.installDir=/opt/x;touch /tmp/pwned"
refuse installFromImage.sourceDir --set-string 'installFromImage.sourceDir=/src $(id)'
refuse installFromImage.image.pullPolicy --set-string "installFromImage.image.pullPolicy=Always${nl}evil: 1"
refuse sparkConnect.image.pullPolicy --set sparkConnect.image.pullPolicy=Sometimes
refuse plugin.prometheusPort --set plugin.prometheusPort=99999
refuse sparkApplication.name --set sparkApplication.enabled=true --set "sparkApplication.name=Spark App"
# A SparkApplication needs its image, Spark version and application file (no made-up defaults).
refuse sparkApplication.sparkVersion --set sparkApplication.enabled=true
echo "helm_chart_test: lint, 5 rendered cases and $refused hostile values refused OK"
