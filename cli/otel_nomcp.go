//go:build toolcap_nomcp

package cli

// telemetrySetup is nothing in a build without toolcap mcp, the one
// command that reports telemetry.
type telemetrySetup = func()
