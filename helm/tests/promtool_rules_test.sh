#!/usr/bin/env bash
# `promtool check rules` on the generated alert rules and `promtool test rules` on their unit tests
# (alerts_test.yaml, synthetic series). No promtool (Debian package prometheus): exit 77 (skip).
set -euo pipefail
cd "$(dirname "$0")/../.."
promtool="${PROMTOOL:-$(command -v promtool || true)}"
if [ -z "$promtool" ]; then
  echo "promtool_rules_test: no promtool (apt-get install prometheus); skipped"
  exit 77
fi
"$promtool" check rules helm/sparkprof/files/sparkprof-alerts.rules.yaml
"$promtool" test rules helm/tests/alerts_test.yaml
