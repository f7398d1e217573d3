//go:build !toolcap_nomcp

package main

import (
	"github.com/toolcap/toolcap/adapters/redisrest"
	"github.com/toolcap/toolcap/cli"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/otel"
	"github.com/toolcap/toolcap/redact/gitleaks"
	"github.com/toolcap/toolcap/tiktoken"
)

// options are what the full build adds to the core's commands: the exact
// tokenizers, the Redis store, gitleaks' rules for redaction, and toolcap
// mcp's OpenTelemetry traces and metrics (when the OTEL_ environment says
// where to send them).
func options() []cli.Option {
	return []cli.Option{
		cli.WithTokenizers(tiktoken.New),
		cli.WithStoreOpener(openRedis),
		cli.WithRedactor(gitleaks.New()),
		cli.WithTelemetry(otel.SetupProxy),
	}
}

// openRedis opens the Redis store a manifest names, and sends go-redis's
// own log lines to the command's logger.
func openRedis(url string, cfg rest.Config) (rest.Store, error) {
	redisrest.RouteLogs(cfg.Logger)
	s, err := redisrest.Open(url, cfg)
	if err != nil {
		// Not s: a nil *redisrest.Store in a rest.Store is not a nil
		// interface.
		return nil, err
	}
	return s, nil
}
