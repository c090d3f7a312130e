#!/bin/sh
# The build stage of the image (Dockerfile), runnable anywhere Go is:
# builds toolgate as one static binary (no cgo, no libc needed at run time)
# at OUTPUT (default dist/toolgate), stamped with what it was built from.
#
#   scripts/build-release.sh [OUTPUT]
#
# The version, the revision and whether the tree had uncommitted changes
# come from git when the tree is a checkout; TOOLGATE_VERSION and
# TOOLGATE_REVISION set them when it is not (a container build whose
# context leaves .git out passes them as build arguments). `toolgate
# version` prints them, after the Go build info's own VCS stamp when the go
# command could take one. e2e/ops_release_test.go runs this script.
set -eu

out=${1:-dist/toolgate}
case "$out" in /*) ;; *) out="$(pwd)/$out" ;; esac
cd "$(dirname "$0")/.."

version=${TOOLGATE_VERSION:-}
revision=${TOOLGATE_REVISION:-}
modified=${TOOLGATE_MODIFIED:-}
if git rev-parse --git-dir >/dev/null 2>&1; then
	[ -n "$version" ] || version=$(git describe --tags --dirty 2>/dev/null || true)
	[ -n "$revision" ] || revision=$(git rev-parse HEAD)
	if [ -z "$modified" ]; then
		if [ -n "$(git status --porcelain --untracked-files=no)" ]; then modified=true; else modified=false; fi
	fi
fi

mkdir -p "$(dirname "$out")"
# -buildvcs=auto overrides a GOFLAGS=-buildvcs=false: the build info keeps
# the VCS stamp whenever the go command can read the checkout.
CGO_ENABLED=0 go build -buildvcs=auto -trimpath -tags netgo,osusergo \
	-ldflags "-s -w -X main.version=$version -X main.revision=$revision -X main.modified=$modified" \
	-o "$out" ./cmd/toolgate
echo "built $out: $("$out" version)"
