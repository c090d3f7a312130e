#!/usr/bin/env bash
# Installs the Cline CLI for e2e/harness_cline_test.go (see
# lib/npm-cli.sh).
exec bash "$(dirname "$0")/lib/npm-cli.sh" cline cline "${CLINE_VERSION:-3.0.65}" cline e2e/harness_cline_test.go
