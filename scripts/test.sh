#!/usr/bin/env bash
# The whole test suite: static checks, every package's tests under the race
# detector (e2e builds and drives the real binary), short fuzz runs, and the
# demo workspace's golden policy cases.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=${GOFLAGS:--mod=mod}

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then echo "gofmt would change:"; echo "$unformatted"; exit 1; fi

echo "== go vet"
go vet ./...

# The analysers, at the versions scripts/ci-deps/go-tools.sh pins.
echo "== staticcheck"
"$(bash scripts/ci-deps/go-tools.sh path staticcheck)" ./...

echo "== deadcode"
dead=$("$(bash scripts/ci-deps/go-tools.sh path deadcode)" -test ./...)
if [ -n "$dead" ]; then
  echo "$dead"
  echo "deadcode: the functions above are reached from no main and no test; delete them"
  exit 1
fi

# The slowest package is e2e (about 5 minutes on an idle 2-core machine);
# the timeout is there to name a hung test, not to be reached.
echo "== go test -race"
go test -race -count=1 -timeout "${TEST_TIMEOUT:-12m}" ./...

# Two fuzz runs at a time: each has its own build, baseline and
# minimisation phases that leave the cores idle, so two overlap well. A
# run's output is printed when it ends; the first failure fails the step.
echo "== fuzz (short)"
fuzzlog=$(mktemp -d)
trap 'rm -rf "$fuzzlog"' EXIT
fuzzjobs=()
fuzzruns=0
fuzz() {
  local log=$fuzzlog/$((fuzzruns += 1))
  if [ ${#fuzzjobs[@]} -ge 2 ]; then fuzzwait; fi
  (go test -run '^$' -fuzz "^$2\$" -fuzztime "${FUZZTIME:-20000x}" "$1" >"$log" 2>&1; echo $? >"$log.rc") &
  fuzzjobs+=("$!:$log:$1 $2")
}
# fuzzwait waits for the oldest run, prints its output and fails on its
# failure.
fuzzwait() {
  local job=${fuzzjobs[0]}
  fuzzjobs=("${fuzzjobs[@]:1}")
  local pid=${job%%:*} rest=${job#*:}
  local log=${rest%%:*} what=${rest#*:}
  wait "$pid" || true
  echo "-- fuzz $what"
  tail -n 3 "$log"
  if [ "$(cat "$log.rc")" != 0 ] || grep -q 'no fuzz tests to fuzz' "$log"; then
    cat "$log"
    echo "fuzz $what failed"
    exit 1
  fi
}
fuzz ./workspace FuzzLoad
fuzz ./grantcheck FuzzParseCapability
fuzz ./grantcheck FuzzNormalize
fuzz ./grantcheck FuzzConstraint
fuzz ./workspace FuzzParseTemplate
fuzz ./strictjson FuzzDifferential
fuzz ./strictjson FuzzDifferentialWithReference
fuzz ./strictjson FuzzAppendUnquote
fuzz ./jsonrpc FuzzParseMessage
fuzz ./mcpserve FuzzEndpointPost
fuzz ./mcpserve FuzzServeStdio
FUZZTIME=${FUZZTIME_AUDIT:-3000x} fuzz ./audit FuzzReader
fuzz ./audit FuzzAppendEvent
fuzz ./packs FuzzRelBeneath
fuzz ./strictjson FuzzCanonicalDecimal
fuzz ./packs FuzzCheckJQ
fuzz ./identity FuzzVerify
fuzz ./pin FuzzCanonical
fuzz ./pin FuzzParse
FUZZTIME=${FUZZTIME_E2E:-2000x} fuzz ./e2e FuzzExactCall
while [ ${#fuzzjobs[@]} -gt 0 ]; do fuzzwait; done

echo "== policy cases of the demo workspace"
go run ./cmd/toolgate policy test -w examples/command-packs/toolgate.yaml examples/command-packs/policy-cases.yaml
