#!/usr/bin/env bash
# The exported API of every module, checked: api/NAME.txt holds what
# internal/apidump lists for the module (NAME is its directory, with "/" as
# "_"; "toolcap" for the core), and this fails when the code's API differs
# from the file, so that every change to the API is made on purpose, in the
# file too. After such a change: bash test/api/check.sh -update
# Run by .ci/run.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

update=false
[ "${1:-}" = "-update" ] && update=true
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/apidump" ./internal/apidump

modules=$(find . -name go.mod -not -path '*/node_modules/*' -not -path '*/testdata/*' -not -path './.git/*' \
	-exec dirname {} \; | sed 's|^\./||' | sort)
failed=()
for m in $modules; do
	name=toolcap
	[ "$m" != . ] && name=${m//\//_}
	"$tmp/apidump" "$m" >"$tmp/$name.txt"
	if $update; then
		cp "$tmp/$name.txt" "api/$name.txt"
	elif ! diff -u "api/$name.txt" "$tmp/$name.txt"; then
		failed+=("$m")
	fi
	echo "$m: $(tail -1 "$tmp/$name.txt" | sed 's/^# //')"
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "api: the API of ${failed[*]} is not what api/ says (+ in the code, - in the file); if the change is meant, run bash test/api/check.sh -update" >&2
	exit 1
fi
