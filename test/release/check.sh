#!/usr/bin/env bash
# Proves that toolcap installs and imports as its users get it: from a module
# proxy, at the release the working tree is about to be, with no replace
# directive and no workspace. Run by .ci/run; by hand: bash test/release/check.sh
#
#  1. The release version is what every module requires of the core
#     (cmd/toolcap/go.mod says it; every other module must agree).
#  2. A temporary git repository holds the working tree (tracked files and
#     new ones git does not ignore), tagged as the go command expects:
#     vX for the core, DIR/vX for the module in DIR.
#  3. The go command itself makes the proxy: with GOPROXY=direct and git
#     sending github.com/toolcap/toolcap to that repository, `go mod
#     download` writes each module's .info, .mod and .zip into a fresh
#     module cache, whose cache/download is a file module proxy.
#  4. As a user: an empty GOMODCACHE, GOFLAGS=-mod=mod, GOPROXY=that proxy
#     then the real one for every other module, GOWORK=off:
#       - go install github.com/toolcap/toolcap/cmd/toolcap@vX, then the
#         binary's version, cap with tokenizer = "o200k_base" (the output
#         counted by the tiktoken module, fetched the same way), config;
#       - for every other module, a fresh module go gets it at vX and
#         runs its Examples.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

core=github.com/toolcap/toolcap
# requires DIR prints the version of the core DIR/go.mod requires, or nothing.
requires() {
	(cd "$1" && GOWORK=off go mod edit -json) | sed -n "/\"Path\": \"${core//\//\\/}\"/{n;s/.*\"Version\": \"\(.*\)\".*/\1/p;}"
}
version=$(requires cmd/toolcap)
if [ -z "$version" ]; then
	echo "release: cmd/toolcap/go.mod does not require $core" >&2
	exit 1
fi
echo "== release $version"

# Every module but the core: its directory, relative to the root.
mods=$(find . -name go.mod -not -path './go.mod' -not -path '*/node_modules/*' -not -path '*/testdata/*' \
	-not -path './test/*' -not -path './.git/*' -exec dirname {} \; | sed 's|^\./||' | sort)
for d in $mods; do
	if grep -q '^replace\|^\s*replace\b' "$d/go.mod"; then
		echo "release: $d/go.mod has a replace directive; a published go.mod must not" >&2
		exit 1
	fi
	got=$(requires "$d")
	if [ "$got" != "$version" ]; then
		echo "release: $d/go.mod requires $core ${got:-not at all}; want $version" >&2
		exit 1
	fi
done

# The core module, which Go programs import, requires what it required
# when the command moved out (the exact tokenizers, Redis and every SDK
# live in modules of their own): a new requirement is a decision, made here.
core_requires="github.com/google/go-cmp github.com/google/jsonschema-go github.com/hashicorp/go-hclog
github.com/knadh/koanf/parsers/toml/v2 github.com/knadh/koanf/providers/confmap github.com/knadh/koanf/providers/env/v2
github.com/knadh/koanf/v2 github.com/modelcontextprotocol/go-sdk github.com/pelletier/go-toml/v2 golang.org/x/sync"
# Direct requirements: the require lines of go.mod not marked indirect.
direct=$(awk '/^require \(/{b=1;next} b&&/^\)/{b=0} (b||/^require /)&&!/\/\/ indirect/&&!/^[[:space:]]*(\/\/|$)/{print $(b?1:2)}' go.mod)
for p in $direct; do
	if ! grep -qxF -- "$p" <<<"$(tr ' ' '\n' <<<"$core_requires")"; then
		echo "release: the core module's go.mod requires $p, which it did not; put it in a module of its own, or add it to core_requires here with the reason" >&2
		exit 1
	fi
done

tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

echo "== a repository of the working tree, tagged $version"
mkdir "$tmp/repo"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
	[ -e "$f" ] || continue # deleted in the working tree
	mkdir -p "$tmp/repo/$(dirname "$f")"
	cp -p "$f" "$tmp/repo/$f"
done
(
	cd "$tmp/repo"
	# None of the user's git settings (signing, hooks) applies here.
	export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
	git init -q
	git add -A
	git -c user.name=release -c user.email=release@localhost commit -q -m "release $version"
	git tag "$version"
	for d in $mods; do git tag "$d/$version"; done
)

echo "== the module proxy, made by go mod download"
cat >"$tmp/gitconfig" <<CFG
[url "file://$tmp/repo"]
	insteadOf = https://$core
CFG
paths="$core@$version"
for d in $mods; do paths="$paths $core/$d@$version"; done
mkdir "$tmp/empty"
(
	cd "$tmp/empty"
	# shellcheck disable=SC2086 # one argument per module
	if ! GIT_CONFIG_GLOBAL="$tmp/gitconfig" GIT_CONFIG_NOSYSTEM=1 GOMODCACHE="$tmp/proxycache" GOPROXY=direct \
		GONOSUMDB=$core GOFLAGS=-mod=mod GOWORK=off go mod download $paths >"$tmp/download.log" 2>&1; then
		cat "$tmp/download.log"
		echo "release: go mod download of the release failed" >&2
		exit 1
	fi
)
proxy="$tmp/proxycache/cache/download"
for p in $paths; do
	mod=${p%@*}
	if [ ! -f "$proxy/$mod/@v/$version.zip" ]; then
		echo "release: go mod download made no zip for $p" >&2
		exit 1
	fi
	# A list, so that @latest finds the release too.
	echo "$version" >"$proxy/$mod/@v/list"
done

# A user's environment: nothing cached, the release from the proxy, every
# other module from the real one.
export GOMODCACHE="$tmp/usercache" GOPROXY="file://$proxy,https://proxy.golang.org" GONOSUMDB=$core \
	GOFLAGS=-mod=mod GOWORK=off GOBIN="$tmp/bin"
unset GIT_CONFIG_GLOBAL

echo "== go install $core/cmd/toolcap@$version"
(cd "$tmp/empty" && go install "$core/cmd/toolcap@$version")
toolcap="$tmp/bin/toolcap"

echo "== toolcap version"
got=$("$toolcap" version)
echo "$got"
case "$got" in
"toolcap $core/cmd/toolcap $version "*) ;;
*)
	echo "release: toolcap version says \"$got\"; want the module $core/cmd/toolcap at $version" >&2
	exit 1
	;;
esac

echo "== a fresh module: the tiktoken module's count of toolcap cap's output"
mkdir "$tmp/user"
cd "$tmp/user"
go mod init example.com/user 2>/dev/null
go get "$core/tiktoken@$version"
cat >main.go <<'GO'
// Command user prints the o200k_base token count of its standard input.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/toolcap/toolcap/tiktoken"
)

func main() {
	tok, err := tiktoken.New(tiktoken.O200kBase)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	b, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(tok.Count(string(b)))
}
GO
go build -o count .
cat >toolcap.toml <<'TOML'
[worker.tool_output]
default_max_tokens = 1200
tokenizer = "o200k_base"
TOML
for i in $(seq 1 3000); do echo "src/pkg$((i % 97))/file_$i.go: func Handle$i(ctx context.Context) error { return nil }"; done >in.txt
"$toolcap" cap --tool Grep --manifest toolcap.toml <in.txt >out.txt
n=$(./count <out.txt)
echo "toolcap cap: $(wc -c <in.txt) bytes in, $(wc -c <out.txt) bytes out, $n o200k_base tokens (limit 1200)"
if [ "$n" -gt 1200 ] || [ "$n" -lt 1184 ] || ! grep -q '\[truncated: ' out.txt; then
	echo "release: the installed toolcap's cut counts $n tokens; want 1200, or a few under" >&2
	exit 1
fi

echo "== toolcap config"
"$toolcap" config --manifest toolcap.toml --tool Grep

echo "== every other module: go get at $version, then its Examples"
for d in $mods; do
	[ "$d" = cmd/toolcap ] && continue
	# A benchmark's command, not a library: nothing to import, no Example
	# (TestTrajectory runs it in ./test.sh).
	[ "$d" = bench/trajectory ] && continue
	echo "-- $core/$d"
	rm -rf "$tmp/user" && mkdir "$tmp/user" && cd "$tmp/user"
	go mod init example.com/user 2>/dev/null
	go get "$core/$d@$version"
	out=$(go test -count=1 -run '^Example' -v "$core/$d" 2>&1) || {
		echo "$out"
		echo "release: the Examples of $core/$d@$version fail" >&2
		exit 1
	}
	if ! grep -q -- '--- PASS: Example' <<<"$out"; then
		echo "$out"
		echo "release: $core/$d@$version ran no Example" >&2
		exit 1
	fi
	grep -- '--- PASS: Example' <<<"$out"
done
echo "== release $version: installs and imports from a module proxy"
