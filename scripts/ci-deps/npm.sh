#!/usr/bin/env bash
# npm, for the scripts that install Node components (conformance.sh,
# claude-code.sh, codex.sh, gemini.sh, opencode.sh). .ci/run runs it with
# the other apt installs, before those scripts when npm is missing.
# Idempotent and quiet.
set -euo pipefail
command -v npm >/dev/null 2>&1 && exit 0
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null
