#!/usr/bin/env bash
# Installs the pinned MCP servers (filesystem, everything, memory) and the
# TypeScript SDK that the end-to-end tests of `toolcap mcp` run against
# (cli/mcp_test.go and mcp_relay_e2e_test.go).
# Needs Node.js 20 or later and npm. Run from anywhere; CI runs it from .ci/run
# with TOOLCAP_MCP_E2E=1, which turns a missing install into a test failure.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "test/mcp/setup.sh: node and npm are required" >&2
	exit 1
fi
if [ -f package-lock.json ]; then
	npm ci --no-audit --no-fund --loglevel=error
else
	npm install --no-audit --no-fund --loglevel=error
fi
echo "test/mcp: $(node --version), $(ls node_modules/@modelcontextprotocol | tr '\n' ' ')"
