//go:build !toolcap_nomcp

package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/mcpproxy"
)

// telemetrySetup is what WithTelemetry gives toolcap mcp.
type telemetrySetup = func(ctx context.Context, env []string, logger hclog.Logger, opts *mcpproxy.Options) (stop func(context.Context) error, err error)

// WithTelemetry makes toolcap mcp report what it relays as setup
// configures it from the command's environment (OpenTelemetry's OTEL_
// variables): setup is called once, with env and the command's logger,
// before the proxy is built, and may set opts.Trace and add to
// opts.Middleware; the stop it returns sends what is still buffered and is
// called as the command ends, given a few seconds. An error of setup is a
// configuration error (exit status 2). Without it, toolcap mcp reports
// nothing. Module github.com/toolcap/toolcap/otel has the setup
// cmd/toolcap gives it (otel.SetupProxy), which reports OpenTelemetry
// spans and metrics.
func WithTelemetry(setup func(ctx context.Context, env []string, logger hclog.Logger, opts *mcpproxy.Options) (stop func(context.Context) error, err error)) Option {
	return func(o *options) { o.telemetry = setup }
}

// telemetryStopWait is how long the telemetry has to send what it holds
// as toolcap mcp ends.
const telemetryStopWait = 5 * time.Second

// startTelemetry calls the program's telemetry setup, if it has one, for
// opts. It returns the function to defer, which stops it, or false after
// writing the configuration error to stderr.
func (o *options) startTelemetry(ctx context.Context, env []string, logger hclog.Logger, opts *mcpproxy.Options, stderr io.Writer) (func(), bool) {
	if o.telemetry == nil {
		return func() {}, true
	}
	stop, err := o.telemetry(ctx, env, logger, opts)
	if err != nil {
		fmt.Fprintf(stderr, "toolcap mcp: %s\n", oneLine(err.Error()))
		return nil, false
	}
	if stop == nil {
		return func() {}, true
	}
	return func() {
		// The command's context may be cancelled already (a signal):
		// what is buffered still goes, within the wait.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), telemetryStopWait)
		defer cancel()
		if err := stop(ctx); err != nil {
			logger.Warn("otel: stopping the exporters", "error", oneLine(err.Error()))
		}
	}, true
}
