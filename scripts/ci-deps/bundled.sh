#!/usr/bin/env bash
# Outside binaries the bundled-pack tests run for real: git, jq and ripgrep.
# gh and the coding-agent CLIs (claude, codex, opencode) need a network and a
# login, so their tests use stand-in binaries built by the tests instead.
# Idempotent and quiet; run as root on a clean machine (CI=true) or once by
# hand.
set -euo pipefail
missing=()
command -v git >/dev/null 2>&1 || missing+=(git)
command -v jq >/dev/null 2>&1 || missing+=(jq)
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
