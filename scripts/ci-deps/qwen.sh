#!/usr/bin/env bash
# Installs Qwen Code for e2e/harness_qwen_test.go (see lib/npm-cli.sh).
exec bash "$(dirname "$0")/lib/npm-cli.sh" qwen @qwen-code/qwen-code "${QWEN_CODE_VERSION:-0.24.4}" qwen e2e/harness_qwen_test.go
