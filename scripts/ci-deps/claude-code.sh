#!/usr/bin/env bash
# Installs the Claude Code CLI for e2e/claude_test.go into e2e/.cache/claude-code
# (gitignored). Idempotent and quiet; a failure to reach npm is not fatal here:
# the test then skips with a message naming this script.
set -uo pipefail
cd "$(dirname "$0")/../.."
version=${CLAUDE_CODE_VERSION:-2.1.332}
dir=e2e/.cache/claude-code
bin=$dir/node_modules/.bin/claude
if [ -x "$bin" ] && [ "$(cat "$dir/.version" 2>/dev/null)" = "$version" ]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null
  fi
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "claude-code.sh: npm not found; e2e/claude_test.go will skip" >&2
  exit 0
fi
mkdir -p "$dir"
if npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --engine-strict=false \
  "@anthropic-ai/claude-code@$version" >/dev/null; then
  echo "$version" >"$dir/.version"
else
  echo "claude-code.sh: npm install @anthropic-ai/claude-code@$version failed; e2e/claude_test.go will skip" >&2
fi
exit 0
