package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/redact"
	"github.com/toolcap/toolcap/tokens"
)

// An Option adds to what [Run] and [Main] can do.
type Option func(*options)

// options are what a program's Options set.
type options struct {
	openURL   StoreOpener
	tokenizer TokenizerOpener
	redactor  redact.Detector // see WithRedactor
	telemetry telemetrySetup  // toolcap mcp's (WithTelemetry); nil: none
}

// A StoreOpener opens the store of what cuts drop that a manifest names by
// URL in [worker.tool_output.rest] store, such as "redis://host:6379/0"
// (see [settings.IsRedisStore]), with the bounds cfg the manifest gives. The
// store it returns is closed as the command
// ends; one that has a Where() string method names where it lives in
// messages (without credentials).
type StoreOpener func(url string, cfg rest.Config) (rest.Store, error)

// WithStoreOpener makes the manifest's store URLs open through open. Without
// it, a manifest that names a store by URL is a configuration error that
// says how to build a toolcap that has one.
func WithStoreOpener(open StoreOpener) Option {
	return func(o *options) { o.openURL = open }
}

// A TokenizerOpener returns the exact tokenizer a manifest names in
// [worker.tool_output] tokenizer, such as "o200k_base" (see
// github.com/toolcap/toolcap/tiktoken, whose New is one). It is called
// only for names other than "calibrated", which toolcap always has.
type TokenizerOpener func(name string) (tokens.Tokenizer, error)

// WithTokenizers makes the manifest's exact tokenizers open through open,
// in cap, read, hook and mcp. Without it, a manifest that sets a token
// limit and names one is a configuration error that says how to install
// the toolcap that has them.
func WithTokenizers(open TokenizerOpener) Option {
	return func(o *options) { o.tokenizer = open }
}

// restStore is the store of what cuts drop, as the manifest's
// [worker.tool_output.rest] table configures it, and where it lives, for
// messages and toolcap config.
type restStore struct {
	store rest.Store
	where string // "memory", the directory, or the URL without credentials
}

// Close closes the store: a Redis store's connection pool; the memory and
// directory stores' timer of the next expiry, after deleting what has
// expired.
func (s restStore) Close() error {
	if s.store == nil {
		return nil
	}
	return s.store.Close()
}

// defaultRestDir returns the directory store's default place: toolcap's
// directory under the user cache directory ($XDG_CACHE_HOME or
// ~/.cache on Linux).
func defaultRestDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("keep_rest: no directory for the store: %w; set [worker.tool_output.rest] dir or %s", err, settings.EnvRestDir)
	}
	return filepath.Join(cache, "toolcap", "rest"), nil
}

// restConfig returns the bounds of the store the manifest configures.
func restConfig(c manifest.RestConfig, logger hclog.Logger) rest.Config {
	return rest.Config{MaxBytes: c.MaxBytes, MaxEntryBytes: c.MaxEntryBytes, TTL: c.TTL, Logger: logger}
}

// errNoURLStore is the error for a store URL this program cannot open.
var errNoURLStore = errors.New("this toolcap binary keeps the rest in a directory or in memory; " +
	"for a Redis store install the full toolcap: " + installFull)

// installFull is the command that installs the toolcap with everything,
// for messages of a build that lacks some of it.
const installFull = "go install github.com/toolcap/toolcap/cmd/toolcap@latest"

// restWhere returns where the store the manifest configures lives, without
// opening it: "memory", its directory, or its URL without credentials.
func (o *options) restWhere(c manifest.RestConfig) (string, error) {
	if settings.IsRedisStore(c.Store) {
		if o == nil || o.openURL == nil {
			return "", fmt.Errorf("keep_rest: store %s: %w", settings.RedactStore(c.Store), errNoURLStore)
		}
		return settings.RedactStore(c.Store), nil
	}
	if c.Store == settings.RestStoreMemory {
		return settings.RestStoreMemory, nil
	}
	if c.Dir != "" {
		return c.Dir, nil
	}
	return defaultRestDir()
}

// openRestStore opens the store the manifest's limits configure: a
// directory (the default, under the user cache directory), with
// store = "memory" one in memory, which lives as long as the process, or
// one named by URL through the program's StoreOpener. The caller closes it.
func (o *options) openRestStore(l *manifest.ToolOutputLimits, logger hclog.Logger) (restStore, error) {
	c := l.RestConfig()
	where, err := o.restWhere(c)
	if err != nil {
		return restStore{}, err
	}
	cfg := restConfig(c, logger)
	switch {
	case settings.IsRedisStore(c.Store):
		st, err := o.openURL(c.Store, cfg)
		if err != nil {
			return restStore{}, fmt.Errorf("keep_rest: store %s: %w", where, err)
		}
		if w, ok := st.(interface{ Where() string }); ok {
			where = w.Where()
		}
		return restStore{store: st, where: where}, nil
	case where == settings.RestStoreMemory:
		return restStore{store: rest.NewMemory(cfg), where: where}, nil
	}
	d, err := rest.OpenDir(where, cfg)
	if err != nil {
		return restStore{}, fmt.Errorf("keep_rest: %w", err)
	}
	return restStore{store: d, where: where}, nil
}
