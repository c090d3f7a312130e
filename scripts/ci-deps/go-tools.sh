#!/usr/bin/env bash
# The Go analysers scripts/test.sh runs, at the versions pinned here (the
# one place they are named): staticcheck and deadcode. Each is built with
# `go install module@version` from the Go module proxy into its own folder
# of a cache outside the clone (TOOLGATE_TOOLS_DIR, default
# ~/.cache/toolgate-tools), so a fresh clone on the same machine reuses it.
# Idempotent and quiet.
#
#   bash scripts/ci-deps/go-tools.sh             install them all
#   bash scripts/ci-deps/go-tools.sh path NAME   install NAME, print its path
set -euo pipefail

tools=(
  "staticcheck honnef.co/go/tools/cmd/staticcheck@v0.8.2"
  "deadcode golang.org/x/tools/cmd/deadcode@v0.52.0"
)
dir=${TOOLGATE_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/toolgate-tools}

# install NAME MODULE@VERSION puts NAME into $dir/NAME@VERSION/ unless it is
# there, and prints its path.
install() {
  local name=$1 pkg=$2
  local bin=$dir/$name@${pkg##*@}/$name
  if [ ! -x "$bin" ]; then
    mkdir -p "$(dirname "$bin")"
    # The module's own go.mod decides its build, not this repository's
    # GOFLAGS (-mod=mod is refused for module@version).
    (cd / && GOFLAGS= GOBIN=$(dirname "$bin") go install "$pkg")
  fi
  echo "$bin"
}

case ${1:-} in
path)
  for t in "${tools[@]}"; do
    read -r name pkg <<<"$t"
    if [ "$name" = "${2:-}" ]; then
      install "$name" "$pkg"
      exit 0
    fi
  done
  echo "go-tools.sh: no tool named ${2:-}; known: staticcheck, deadcode" >&2
  exit 2
  ;;
"")
  for t in "${tools[@]}"; do
    read -r name pkg <<<"$t"
    install "$name" "$pkg" >/dev/null
  done
  ;;
*)
  echo "usage: go-tools.sh [path NAME]" >&2
  exit 2
  ;;
esac
