#!/usr/bin/env bash
# Installs the browser test's node modules (playwright-core only; it uses Debian's Chromium,
# installed by scripts/install-deps.sh --browser, and never downloads a browser).
set -euo pipefail
cd "$(dirname "$0")"
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund
