#!/usr/bin/env bash
# Installs the pinned Claude Agent SDK (whose sdk.d.ts and sdk-tools.d.ts hold
# the hook and tool output types) and TypeScript, which the tests of
# `toolcap hook claude-code` type-check its replacements with
# (cmd/toolcap/hook_types_test.go). Needs Node.js 20 or later and npm. Run
# from anywhere; CI runs it from .ci/run with TOOLCAP_MCP_E2E=1, which turns a
# missing install into a test failure.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "test/claude-code/setup.sh: node and npm are required" >&2
	exit 1
fi
npm ci --no-audit --no-fund --loglevel=error
echo "test/claude-code: $(node --version), claude-agent-sdk $(node -p 'require("./node_modules/@anthropic-ai/claude-agent-sdk/package.json").version'), tsc $(node_modules/.bin/tsc --version)"
