//go:build !linux

package mcpproxy

import "os"

// awaitExit returns at once where no pollable process handle is known:
// os.Process.Wait then waits for the process.
func awaitExit(*os.Process) {}
