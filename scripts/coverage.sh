#!/usr/bin/env bash
# Statement coverage of every package of the module, from all the tests:
# the test binaries (each instruments every package of the module,
# -coverpkg=./..., so a package is also counted where another package's
# tests reach it) and the runs of the toolgate binary that e2e builds with
# -cover (TOOLGATE_E2E_COVER: the CLI, the daemon, the supervisor, which
# only e2e drives). The raw profiles go into DIR (default: a new temporary
# folder), are merged with `go tool covdata`, and a table per package is
# printed: the test binaries alone, the e2e runs of the binary alone, and
# both. DIR/coverage.out is the merged profile for `go tool cover -html`.
# Without -race: it measures what runs, not how it races (scripts/test.sh).
#
#   bash scripts/coverage.sh [DIR]
#
# COVER_PKGS (default ./...) and COVER_RUN (a -run pattern) narrow the
# tests, for a quick look at one area.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=${GOFLAGS:--mod=mod}
dir=${1:-$(mktemp -d -t toolgate-coverage-XXXXXX)}
dir=$(cd "$(dirname "$dir")" && pwd)/$(basename "$dir")
rm -rf "$dir/unit" "$dir/e2e" "$dir/merged"
mkdir -p "$dir/unit" "$dir/e2e" "$dir/merged"

echo "== go test -cover (profiles in $dir)"
# A failing test is reported, and the coverage of what ran still printed.
status=0
# shellcheck disable=SC2086 # COVER_PKGS is a list of patterns
TOOLGATE_E2E_COVER=$dir/e2e go test -count=1 -timeout "${TEST_TIMEOUT:-30m}" ${COVER_RUN:+-run "$COVER_RUN"} \
  -cover -coverpkg=./... ${COVER_PKGS:-./...} \
  -args -test.gocoverdir="$dir/unit" >"$dir/test.log" 2>&1 || status=$?
grep -E '^(ok|FAIL|---|panic)' "$dir/test.log" || true
if ! ls "$dir/e2e" | grep -q '^covmeta\.'; then
  echo "coverage.sh: the e2e runs of the binary wrote no profile into $dir/e2e" >&2
  exit 1
fi

go tool covdata merge -i="$dir/unit,$dir/e2e" -o "$dir/merged"
go tool covdata textfmt -i="$dir/merged" -o "$dir/coverage.out"

# percent DIR prints "package percent" lines.
percent() {
  # (a package without statements prints no newline: match, not split)
  go tool covdata percent -i="$1" | grep -oE '[^[:space:]]+[[:space:]]+coverage: [0-9.]+%' |
    awk '{ sub(/%/, "", $3); print $1, $3 }' | LC_ALL=C sort
}
percent "$dir/unit" >"$dir/unit.txt"
percent "$dir/e2e" >"$dir/e2e.txt"
percent "$dir/merged" >"$dir/merged.txt"
echo "== coverage per package (% of statements)"
printf '%-52s %7s %7s %7s\n' package tests e2e-bin merged
# merged, tests, e2e-bin, joined on the package.
LC_ALL=C join -a1 -e - -o 0,1.2,2.2 "$dir/merged.txt" "$dir/unit.txt" |
  LC_ALL=C join -a1 -e - -o 0,1.2,1.3,2.2 - "$dir/e2e.txt" |
  awk '{ p = $1; sub(/^github.com\/toolgate\/toolgate\/?/, "", p); if (p == "") p = "."; printf "%-52s %7s %7s %7s\n", p, $3, $4, $2 }'
total=$(go tool cover -func="$dir/coverage.out" | awk '/^total:/ { print $3 }')
echo "total (merged): $total"
if [ "$status" != 0 ]; then
  echo "coverage.sh: some tests failed (exit $status); see $dir/test.log" >&2
  exit "$status"
fi
