#!/usr/bin/env bash
# Installs the GitHub Copilot CLI for e2e/harness_copilot_test.go (see
# lib/npm-cli.sh).
exec bash "$(dirname "$0")/lib/npm-cli.sh" copilot @github/copilot "${COPILOT_CLI_VERSION:-1.0.102}" copilot e2e/harness_copilot_test.go
