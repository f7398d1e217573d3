#!/usr/bin/env bash
# Builds the Containerfile with podman and runs the team proxy from it, as
# docs/container.md says: a non-root user, a read-only root filesystem, the
# store on a named volume. From the host, a client calls a tool of an MCP
# server (bench/internal/mcpserver, over streamable HTTP) through it; the
# check holds the text it receives to 16384 bytes, finds the rest kept on
# the volume, and parses every line the container logged as JSON with a
# timestamp, a level and a message. Run by .ci/run; by hand:
# bash test/container/check.sh
#
# The CI machine reaches no container registry, so the build stage's image
# (GO_IMAGE) is made here from the host's Go, a busybox shell and the CA
# bundle, and the host's module cache is mounted into the build, read-only,
# with GOPROXY=off. Podman runs with its own containers.conf
# (CONTAINERS_CONF): runc, since crun refuses this machine's hybrid cgroups,
# and ulimits within the host's, which podman's defaults exceed.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

need=()
command -v podman >/dev/null || need+=(podman)
command -v runc >/dev/null || need+=(runc)
# The build stage's shell: a static busybox, which needs no libc there.
if ! [ -x /bin/busybox ] || ldd /bin/busybox >/dev/null 2>&1; then need+=(busybox-static); fi
if [ ${#need[@]} -gt 0 ]; then
	apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
fi
podman --version

tmp=$(mktemp -d)
name=toolcap-check-$$
cleanup() {
	podman rm -f "$name" >/dev/null 2>&1 || true
	podman volume rm -f "$name" >/dev/null 2>&1 || true
	podman rmi -f "localhost/$name" localhost/toolcap-go:check >/dev/null 2>&1 || true
	# The build stage's image, left untagged by the build: only those this
	# run made.
	for id in $(podman images -q --filter dangling=true 2>/dev/null); do
		grep -qx "$id" "$tmp/dangling" 2>/dev/null || podman rmi -f "$id" >/dev/null 2>&1 || true
	done
	[ -n "${upstream:-}" ] && kill "$upstream" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

nofile=$(ulimit -Hn)
[ "$nofile" = unlimited ] && nofile=65536
cat >"$tmp/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=32768:32768"]
[engine]
runtime = "runc"
CONF
export CONTAINERS_CONF="$tmp/containers.conf"

echo "== the build stage's image, from the host's Go"
goroot=$(go env GOROOT)
mkdir -p "$tmp/rootfs/bin" "$tmp/rootfs/usr/local" "$tmp/rootfs/etc/ssl/certs" "$tmp/rootfs/tmp"
cp -a "$goroot" "$tmp/rootfs/usr/local/go"
cp /bin/busybox "$tmp/rootfs/bin/busybox"
for c in sh mkdir ls cat; do ln -s busybox "$tmp/rootfs/bin/$c"; done
cp /etc/ssl/certs/ca-certificates.crt "$tmp/rootfs/etc/ssl/certs/"
tar -C "$tmp/rootfs" -c . | podman import \
	--change 'ENV PATH=/usr/local/go/bin:/bin' --change 'ENV GOPATH=/go' --change 'ENV HOME=/root' \
	--change 'ENV GOPROXY=off' --change 'ENV GOTOOLCHAIN=local' --change 'ENV GOFLAGS=-buildvcs=false' \
	- localhost/toolcap-go:check >/dev/null

echo "== podman build"
podman images -q --filter dangling=true >"$tmp/dangling"
go build -o /dev/null ./cmd/toolcap # every module it needs, in the host's cache
start=$(date +%s)
podman build -q --build-arg GO_IMAGE=localhost/toolcap-go:check \
	-v "$(go env GOMODCACHE):/go/pkg/mod:ro" -t "localhost/$name" -f Containerfile . >/dev/null
echo "built in $(($(date +%s) - start)) s; $(podman image inspect --format '{{.Size}}' "localhost/$name") bytes"
user=$(podman image inspect --format '{{.Config.User}}' "localhost/$name")
if [ "$user" != 65532:65532 ]; then
	echo "container: the image runs as \"$user\"; want 65532:65532" >&2
	exit 1
fi

echo "== an MCP server on the host, over streamable HTTP"
go build -o "$tmp/mcpserver" ./bench/internal/mcpserver
go build -o "$tmp/mcpcall" ./test/container/mcpcall
"$tmp/mcpserver" -http 127.0.0.1:0 2>"$tmp/upstream.log" &
upstream=$!
for _ in $(seq 100); do
	url=$(sed -n 's/^serving \(http:.*\)$/\1/p' "$tmp/upstream.log")
	[ -n "$url" ] && break
	sleep 0.1
done
[ -n "$url" ] || { cat "$tmp/upstream.log"; echo "container: the MCP server did not start" >&2; exit 1; }

echo "== podman run: read-only, non-root, the store on a volume"
podman volume create "$name" >/dev/null
podman run -d --name "$name" --read-only --network host -v "$name:/var/lib/toolcap" \
	"localhost/$name" --listen 127.0.0.1:0 --url "$url" >/dev/null
proxy=""
for _ in $(seq 100); do
	proxy=$(podman logs "$name" 2>&1 | sed -n 's/.*"serving \(http:[^"]*\)".*/\1/p')
	[ -n "$proxy" ] && break
	sleep 0.1
done
if [ -z "$proxy" ]; then
	podman logs "$name" >&2 || true
	echo "container: the proxy did not say where it serves" >&2
	exit 1
fi
podman inspect --format 'read-only root: {{.HostConfig.ReadonlyRootfs}}; user: {{.Config.User}}' "$name"
echo "serving $proxy"

echo "== a tool call from the host, through the container"
out=$("$tmp/mcpcall" -url "$proxy" -bytes 40000) || {
	podman logs "$name" >&2 || true
	exit 1
}
echo "$out"
size=$(head -1 <<<"$out")
if [ "$size" != 16384 ] || ! grep -q 'truncated: ' <<<"$out"; then
	podman logs "$name" >&2 || true
	echo "container: the client received $size bytes; want 16384, cut, with the marker" >&2
	exit 1
fi
kept=$(find "$(podman volume inspect --format '{{.Mountpoint}}' "$name")" -type f | wc -l)
echo "files kept on the volume: $kept"
if [ "$kept" -lt 1 ]; then
	echo "container: the rest of the cut was not kept on the volume" >&2
	exit 1
fi

echo "== its log: JSON lines with a timestamp, a level and a message"
podman stop -t 10 "$name" >/dev/null
podman logs "$name" >"$tmp/proxy.log" 2>&1
cat "$tmp/proxy.log"
go run ./test/container/jsonlog <"$tmp/proxy.log"
echo "== the container: built, ran read-only as 65532, cut to 16384 bytes, kept the rest, logged JSON"
