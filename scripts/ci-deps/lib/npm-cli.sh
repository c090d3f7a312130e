#!/usr/bin/env bash
# Installs one harness CLI from npm into e2e/.cache/NAME (gitignored), for
# the e2e test that drives it: lib/npm-cli.sh NAME PACKAGE VERSION BIN
# TEST. Idempotent and quiet: the version is stamped in .version and the
# install skipped when it matches. Under CI=true a failed install is an
# error (the test would fail anyway); elsewhere the test skips naming the
# calling script. It lives below lib/ so that .ci/run, which runs every
# scripts/ci-deps/*.sh, runs only the callers.
set -uo pipefail
name=$1 pkg=$2 version=$3 binname=$4 test=$5
cd "$(dirname "$0")/../../.."
dir=e2e/.cache/$name
bin=$dir/node_modules/.bin/$binname
if [ -x "$bin" ] && [ "$(cat "$dir/.version" 2>/dev/null)" = "$version" ]; then
  exit 0
fi
fail() {
  echo "$name.sh: $*" >&2
  if [ "${CI:-}" = "true" ]; then exit 1; fi
  exit 0
}
if ! command -v npm >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null
fi
command -v npm >/dev/null 2>&1 || fail "npm not found; $test cannot run"
mkdir -p "$dir"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --engine-strict=false "$pkg@$version" >/dev/null ||
  fail "npm install $pkg@$version failed"
"$bin" --version >/dev/null 2>&1 || fail "$bin does not run after installing $pkg@$version"
echo "$version" >"$dir/.version"
