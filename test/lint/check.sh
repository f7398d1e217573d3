#!/usr/bin/env bash
# The habits that keep the code as it is, for every module of the
# repository: staticcheck clean; `go mod tidy` leaving go.mod and go.sum as
# they are; govulncheck finding no vulnerability the code reaches in a
# module it requires (test/vulncheck judges its findings; the standard
# library's are listed, fixed by the Go release a binary is built with).
# Run by .ci/run; by hand: bash test/lint/check.sh
#
# staticcheck and govulncheck come from the Go module proxy, pinned here.
# govulncheck's database comes from the module proxy too (the vulndb
# module's OSV files, indexed by its own indexdb), since the machine CI
# runs on reaches no vuln.go.dev; it is as new as the pinned version.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

staticcheck_version=v0.8.2
govulncheck_version=v1.9.0
vulndb_version=v0.0.0-20261105234957-e22db6528018

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GOBIN="$tmp/bin"
(cd "$tmp" && GOFLAGS= go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version" &&
	GOFLAGS= go install "golang.org/x/vuln/cmd/govulncheck@$govulncheck_version")

core=github.com/toolcap/toolcap
modules=$(find . -name go.mod -not -path '*/node_modules/*' -not -path '*/testdata/*' -not -path './.git/*' \
	-exec dirname {} \; | sort)
failed=()

echo "== staticcheck $staticcheck_version"
for m in $modules; do
	if ! (cd "$m" && "$GOBIN/staticcheck" ./...); then
		failed+=("staticcheck in $m")
	fi
done

echo "== go mod tidy leaves every go.mod and go.sum as it is"
for m in $modules; do
	cp "$m/go.mod" "$tmp/go.mod" && cp "$m/go.sum" "$tmp/go.sum"
	# The modules of this repository a module requires are not on the
	# proxy until the release is tagged: tidy sees them in the tree.
	self=$(cd "$m" && GOWORK=off go list -m)
	deps=$(cd "$m" && GOWORK=off go mod edit -json | grep -o "\"Path\": \"$core[^\"]*\"" | cut -d'"' -f4 |
		grep -vxF "$self" | sort -u || true)
	for d in $deps; do
		dir=${d#"$core"}
		(cd "$m" && go mod edit -replace "$d=$root${dir:-/}")
	done
	if ! (cd "$m" && GOWORK=off GOFLAGS=-mod=mod go mod tidy); then
		failed+=("go mod tidy in $m")
	fi
	for d in $deps; do (cd "$m" && go mod edit -dropreplace "$d"); done
	if ! diff -u "$tmp/go.mod" "$m/go.mod" || ! diff -u "$tmp/go.sum" "$m/go.sum"; then
		failed+=("go mod tidy changes $m/go.mod or go.sum")
	fi
	cp "$tmp/go.mod" "$m/go.mod" && cp "$tmp/go.sum" "$m/go.sum"
done

echo "== govulncheck $govulncheck_version, database $vulndb_version"
(cd "$tmp" && GOFLAGS= go mod download "golang.org/x/vulndb@$vulndb_version")
osv="$(GOFLAGS= go env GOMODCACHE)/golang.org/x/vulndb@$vulndb_version/data/osv"
(cd "$tmp" && GOFLAGS= go run "golang.org/x/vulndb/cmd/indexdb@$vulndb_version" -vulns "$osv" -out "$tmp/vulndb")
go build -o "$tmp/vulncheck" ./test/vulncheck
for m in $modules; do
	echo "-- $m"
	# govulncheck exits 3 when it finds any; vulncheck judges them.
	(cd "$m" && "$GOBIN/govulncheck" -db "file://$tmp/vulndb" -format json ./...) >"$tmp/vuln.json" || true
	if ! "$tmp/vulncheck" <"$tmp/vuln.json"; then
		failed+=("govulncheck in $m")
	fi
done

if [ ${#failed[@]} -gt 0 ]; then
	printf 'lint: %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "== lint: clean"
