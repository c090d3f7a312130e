#!/usr/bin/env bash
# Installs the Cline CLI for e2e/harness_cline_test.go into e2e/.cache/cline
# (gitignored). Idempotent and quiet. Under CI=true a failed install is an
# error (the test would fail anyway); elsewhere the test skips naming this
# script.
set -uo pipefail
cd "$(dirname "$0")/../.."
pkg=cline
version=${CLINE_VERSION:-3.0.65}
dir=e2e/.cache/cline
bin=$dir/node_modules/.bin/cline
if [ -x "$bin" ] && [ "$(cat "$dir/.version" 2>/dev/null)" = "$version" ]; then
  exit 0
fi
fail() {
  echo "cline.sh: $*" >&2
  if [ "${CI:-}" = "true" ]; then exit 1; fi
  exit 0
}
if ! command -v npm >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null
fi
command -v npm >/dev/null 2>&1 || fail "npm not found; e2e/harness_cline_test.go cannot run"
mkdir -p "$dir"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --engine-strict=false "$pkg@$version" >/dev/null ||
  fail "npm install $pkg@$version failed"
"$bin" --version >/dev/null 2>&1 || fail "$bin does not run after installing $pkg@$version"
echo "$version" >"$dir/.version"
