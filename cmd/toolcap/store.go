package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/rest"
)

// restStore is the store of what cuts drop, as the manifest's
// [worker.tool_output.rest] table configures it, and where it lives, for
// messages and toolcap config.
type restStore struct {
	store rest.Store
	where string // "memory" or the directory
}

// defaultRestDir returns the directory store's default place: toolcap's
// directory under the user cache directory ($XDG_CACHE_HOME or
// ~/.cache on Linux).
func defaultRestDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("keep_rest: no directory for the store: %w; set [worker.tool_output.rest] dir or %s", err, manifest.EnvRestDir)
	}
	return filepath.Join(cache, "toolcap", "rest"), nil
}

// restConfig returns the bounds of the store the manifest configures.
func restConfig(c manifest.RestConfig, logger hclog.Logger) rest.Config {
	return rest.Config{MaxBytes: c.MaxBytes, MaxEntryBytes: c.MaxEntryBytes, TTL: c.TTL, Logger: logger}
}

// restWhere returns where the store the manifest configures lives, without
// opening it: "memory", or its directory.
func restWhere(c manifest.RestConfig) (string, error) {
	if manifest.IsRedisStore(c.Store) {
		return "", fmt.Errorf("keep_rest: store %s: this toolcap binary keeps the rest in a directory or in memory; "+
			"a Redis store is for a Go program built with github.com/toolcap/toolcap/adapters/redisrest (redisrest.Open)",
			manifest.RedactStore(c.Store))
	}
	if c.Store == manifest.RestStoreMemory {
		return manifest.RestStoreMemory, nil
	}
	if c.Dir != "" {
		return c.Dir, nil
	}
	return defaultRestDir()
}

// openRestStore opens the store the manifest's limits configure: a
// directory (the default, under the user cache directory) or, with
// store = "memory", one in memory, which lives as long as the process.
func openRestStore(l *manifest.ToolOutputLimits, logger hclog.Logger) (restStore, error) {
	c := l.RestConfig()
	where, err := restWhere(c)
	if err != nil {
		return restStore{}, err
	}
	cfg := restConfig(c, logger)
	if where == manifest.RestStoreMemory {
		return restStore{store: rest.NewMemory(cfg), where: where}, nil
	}
	d, err := rest.OpenDir(where, cfg)
	if err != nil {
		return restStore{}, fmt.Errorf("keep_rest: %w", err)
	}
	return restStore{store: d, where: where}, nil
}
