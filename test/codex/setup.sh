#!/usr/bin/env bash
# Installs, at the version pinned in package-lock.json, the real OpenAI Codex
# CLI (@openai/codex: a Node launcher and, in the optional dependency of this
# platform, @openai/codex-linux-x64 and the like, a native binary that runs
# offline). cli/codex_e2e_test.go drives `codex exec` headless against a fake
# OpenAI Responses API (internal/fakeresponses), with `toolcap mcp` in front
# of an MCP server, to measure what the model receives.
# Needs Node.js 20 or later and npm (the launcher asks for Node 16; the binary
# does not use Node). Run from anywhere; CI runs it from .ci/run with
# TOOLCAP_MCP_E2E=1, which turns a missing install into a test failure.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "test/codex/setup.sh: node and npm are required" >&2
	exit 1
fi
# npm ci installs only this platform's binary package of the lock file's
# optional dependencies; one that skips optional dependencies (omit=optional
# in an npmrc) leaves the launcher without a binary, so ask for them.
npm ci --no-audit --no-fund --loglevel=error --include=optional
codex_version=$(node_modules/.bin/codex --version) || {
	echo "test/codex/setup.sh: node_modules/.bin/codex --version failed (is this platform's @openai/codex-* package installed?)" >&2
	exit 1
}
echo "test/codex: $(node --version), $codex_version"
