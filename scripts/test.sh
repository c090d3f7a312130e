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

echo "== go test -race"
go test -race -count=1 ./...

echo "== fuzz (short)"
fuzz() { go test -run '^$' -fuzz "^$2\$" -fuzztime "${FUZZTIME:-20000x}" "$1"; }
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

echo "== policy cases of the demo workspace"
go run ./cmd/toolgate policy test -w examples/command-packs/toolgate.yaml examples/command-packs/policy-cases.yaml
