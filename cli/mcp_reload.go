package cli

import (
	"bytes"
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/mcpproxy"
)

// reloadPoll is how often the --manifest files are checked for changes: a
// changed limit applies within this, well inside the second promised.
const reloadPoll = 250 * time.Millisecond

// watchManifests re-reads the layers when a --manifest file changes and on
// SIGHUP, until ctx ends, and hands the proxy the new limits. An invalid
// edit is logged (with the file, key and value the error names) and the
// proxy keeps its limits.
func watchManifests(ctx context.Context, layers *layerFlags, env []string, logger hclog.Logger, proxy *mcpproxy.Proxy) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	seen := readAll(layers.manifests)
	var poll <-chan time.Time // nil without files: only SIGHUP reloads
	if len(layers.manifests) > 0 {
		tick := time.NewTicker(reloadPoll)
		defer tick.Stop()
		poll = tick.C
	}
	for {
		why := ""
		select {
		case <-ctx.Done():
			return
		case <-hup:
			why = "SIGHUP"
			seen = readAll(layers.manifests)
		case <-poll:
			now := readAll(layers.manifests)
			if equalAll(seen, now) {
				continue
			}
			seen, why = now, "a manifest changed"
		}
		res, err := layers.resolve(ctx, env, logger)
		if err == nil {
			_, err = counterFor(res)
		}
		if err != nil {
			logger.Error("the limits were not reloaded; the previous ones stay", "why", why, "error", oneLine(err.Error()))
			continue
		}
		if err := proxy.SetManifest(res.Manifest); err != nil {
			logger.Error("the limits were not reloaded; the previous ones stay", "why", why, "error", oneLine(err.Error()))
			continue
		}
		logger.Info("limits reloaded", "why", why)
	}
}

// readAll reads the files; a file that cannot be read reads as nil, so
// that its coming back counts as a change.
func readAll(files []string) [][]byte {
	out := make([][]byte, len(files))
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err == nil {
			out[i] = b
		}
	}
	return out
}

func equalAll(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) || (a[i] == nil) != (b[i] == nil) {
			return false
		}
	}
	return true
}
