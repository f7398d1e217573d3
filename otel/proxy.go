package otel

import (
	"context"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/mcpproxy"
)

// SetupProxy is what `toolcap mcp` calls before it builds its proxy (see
// cli.WithTelemetry): the Telemetry env configures ([FromEnv]), set as
// opts' trace hook ([Telemetry.Relay]) when it reports anything. It
// returns the function that sends what is buffered and stops the
// exporters, which the command calls as it ends.
func SetupProxy(ctx context.Context, env []string, logger hclog.Logger, opts *mcpproxy.Options) (stop func(context.Context) error, err error) {
	t, err := FromEnv(ctx, env, logger)
	if err != nil {
		return nil, err
	}
	opts.Trace = t.Relay()
	return t.Shutdown, nil
}
