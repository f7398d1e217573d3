//go:build !toolcap_nomcp

package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
	"github.com/toolcap/toolcap/shape"
	"github.com/toolcap/toolcap/tokens"
)

// reloadPoll is how often the --manifest files are checked for changes: a
// changed limit applies within this, well inside the second promised.
const reloadPoll = 250 * time.Millisecond

// watchManifests re-reads the layers when a --manifest file changes and on
// SIGHUP, until ctx ends, and hands the proxy the new limits (and
// applied, when not nil, the manifest applied). An invalid edit is logged
// (with the file, key and value the error names) and the proxy keeps its
// limits.
//
// The files are read as startup reads them, at most
// settings.MaxManifestBytes of each, and only when they are regular files:
// a FIFO (whose open or read would block the watcher), a device or a
// symlink to one (/dev/zero would never end) is an error, logged once
// while it lasts, and the old limits stay; a later valid edit, or SIGHUP
// once the file is valid, applies as usual.
func (o *options) watchManifests(ctx context.Context, layers *layerFlags, env []string, logger hclog.Logger, proxy *mcpproxy.Proxy, given tokens.Tokenizer, applied func(*manifest.WorkerManifest)) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	seen := readManifests(layers.manifests)
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
			seen = readManifests(layers.manifests)
		case <-poll:
			now := readManifests(layers.manifests)
			if sameReads(seen, now) {
				continue
			}
			seen, why = now, "a manifest changed"
		}
		res, err := resolveRead(seen, env, logger)
		if err == nil {
			// Checked before the tokenizer is opened: an exact one builds
			// its vocabulary on first use.
			err = sameTokenizer(given, tokenizerName(res.Manifest.Limits()))
		}
		if err == nil {
			_, err = o.counterFor(res)
		}
		if err == nil {
			var policies *shape.Policies
			if policies, err = res.Manifest.Policies(); err == nil {
				err = proxy.SetPolicies(o.redacting(policies))
			}
		}
		if err != nil {
			logger.Error("the limits were not reloaded; the previous ones stay", "why", why, "error", oneLine(err.Error()))
			continue
		}
		// Logged before applied is told, so that whoever waits on applied
		// finds the reload in the log.
		logger.Info("limits reloaded", "why", why)
		if applied != nil {
			applied(res.Manifest)
		}
	}
}

// manifestRead is one --manifest file as the watcher read it: its bytes,
// or why it could not be read.
type manifestRead struct {
	path string
	data []byte
	err  error
}

// readManifests reads each file with readManifest.
func readManifests(files []string) []manifestRead {
	out := make([]manifestRead, len(files))
	for i, f := range files {
		data, err := readManifest(f)
		out[i] = manifestRead{path: f, data: data, err: err}
	}
	return out
}

// sameReads reports whether two reads of the files found the same: the
// same bytes, or the same error. A file that stays unreadable for the same
// reason is no change, so its error is logged once, not at every poll.
func sameReads(a, b []manifestRead) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if (a[i].err == nil) != (b[i].err == nil) {
			return false
		}
		if a[i].err != nil {
			if a[i].err.Error() != b[i].err.Error() {
				return false
			}
			continue
		}
		if !bytes.Equal(a[i].data, b[i].data) {
			return false
		}
	}
	return true
}

// readManifest reads the manifest at path as startup does, at most
// settings.MaxManifestBytes + 1 bytes (one over is how a file too large is
// told), and only when it is a regular file, symlinks followed. The file is
// checked before it is opened, so that no device is opened, and again once
// open, opened without blocking, so that a file swapped for a FIFO in
// between neither blocks the open nor the read.
func readManifest(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(path, st); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := regular(path, st); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, settings.MaxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return data, nil
}

// errNotRegular is the error of a manifest path that is no regular file.
var errNotRegular = errors.New("not a regular file")

func regular(path string, st fs.FileInfo) error {
	if st.Mode().IsRegular() {
		return nil
	}
	kind := "a " + st.Mode().Type().String()
	switch t := st.Mode().Type(); {
	case t&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case t&fs.ModeDevice != 0:
		kind = "a device"
	case t&fs.ModeDir != 0:
		kind = "a directory"
	case t&fs.ModeSocket != 0:
		kind = "a socket"
	}
	return fmt.Errorf("manifest: file %q: %w (it is %s)", path, errNotRegular, kind)
}

// resolveRead resolves the layers as layerFlags.resolve does, each file
// from the bytes reads holds for it rather than read again, so that what
// is applied is what was checked.
func resolveRead(reads []manifestRead, env []string, logger hclog.Logger) (*manifest.Resolution, error) {
	opts := make([]manifest.Option, 0, len(reads)+2)
	for _, r := range reads {
		if r.err != nil {
			return nil, r.err
		}
		// Named as manifest.File names a file, so that errors read the same.
		opts = append(opts, manifest.Bytes(fmt.Sprintf("file %q", r.path), r.data))
	}
	opts = append(opts, manifest.Environ(withoutCLIVars(env)), manifest.WithLogger(logger))
	return manifest.Resolve(context.Background(), opts...)
}

// tokenizerName returns the tokenizer l counts its token limits with, ""
// when it sets none.
func tokenizerName(l *manifest.ToolOutputLimits) string {
	if !l.HasTokens() {
		return ""
	}
	return l.TokenizerName()
}
