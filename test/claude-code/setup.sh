#!/usr/bin/env bash
# Installs, at the versions pinned in package-lock.json:
#  - the Claude Agent SDK (whose sdk.d.ts and sdk-tools.d.ts hold the hook and
#    tool output types) and TypeScript, which the tests of
#    `toolcap hook claude-code` type-check its replacements with
#    (cli/hook_types_test.go);
#  - the real Claude Code (@anthropic-ai/claude-code, a native binary that runs
#    offline), which cli/claudecode_e2e_test.go drives headless against
#    a fake Anthropic API (internal/fakeanthropic) to measure what the model
#    receives with and without toolcap.
# Needs Node.js 20 or later and npm (Claude Code's package asks for Node 22 in
# its engines field, but its binary does not use Node; npm only warns). Run
# from anywhere; CI runs it from .ci/run with TOOLCAP_MCP_E2E=1, which turns a
# missing install into a test failure.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "test/claude-code/setup.sh: node and npm are required" >&2
	exit 1
fi
npm ci --no-audit --no-fund --loglevel=error
# Claude Code's postinstall script copies the platform's native binary over
# the bin/claude.exe placeholder. An npm that does not run install scripts
# leaves the placeholder, so run the script ourselves when claude does not
# answer.
if ! node_modules/.bin/claude --version >/dev/null 2>&1; then
	node node_modules/@anthropic-ai/claude-code/install.cjs
fi
claude_version=$(DISABLE_AUTOUPDATER=1 node_modules/.bin/claude --version) || {
	echo "test/claude-code/setup.sh: node_modules/.bin/claude --version failed" >&2
	exit 1
}
echo "test/claude-code: $(node --version), claude-agent-sdk $(node -p 'require("./node_modules/@anthropic-ai/claude-agent-sdk/package.json").version'), tsc $(node_modules/.bin/tsc --version), claude $claude_version"
