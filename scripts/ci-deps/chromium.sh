#!/usr/bin/env bash
# Headless Chromium for the operator console browser test (e2e/console_test.go,
# driven with chromedp). Idempotent and quiet: does nothing when present.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
