#!/usr/bin/env bash
# Runs `go test` in every Go module of this repository: the core module at the
# root and each adapter module under adapters/ (each has its own go.mod, so
# that the core gains none of their dependencies). Extra arguments go to every
# `go test` (./test.sh -run Hook -count=1); GOFLAGS passes through as usual
# (CI runs GOFLAGS=-race ./test.sh). The modules are tested together, in the
# workspace go.work makes of them (each requires the others at the release
# they ship with, which go.work replaces by this tree); .ci/run also builds
# each module from a module proxy, on its own go.mod, as its users do.
set -euo pipefail
cd "$(dirname "$0")"
export GOWORK="$PWD/go.work"

modules=$(find . -name go.mod -not -path '*/node_modules/*' -not -path '*/testdata/*' -not -path './.git/*' \
	-exec dirname {} \; | sort)
failed=()
for m in $modules; do
	echo "== go test ./... in ${m#./} ${GOFLAGS:+(GOFLAGS=$GOFLAGS)}"
	# -timeout: the end-to-end tests of package cli (the real Claude Code,
	# the conformance suite's server and client scenarios, three runs each)
	# take longer than go test's default of 10 minutes under -race on two
	# busy cores; an argument -timeout given to test.sh comes later and wins.
	# A module whose dependencies cannot share the root workspace has a
	# go.work of its own (adapters/anthropiccap: the Anthropic SDK and
	# Genkit need different versions of a JSON schema library).
	work=$GOWORK
	if [ -f "$m/go.work" ]; then
		work="$PWD/${m#./}/go.work"
	fi
	if ! (cd "$m" && GOWORK=$work go test -timeout 30m "$@" ./...); then
		failed+=("$m")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "test.sh: tests failed in: ${failed[*]}" >&2
	exit 1
fi
