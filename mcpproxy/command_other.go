//go:build !unix

package mcpproxy

import "os/exec"

// Without process groups, stopping the server stops its own process only.
func newGroup(cmd *exec.Cmd) {}

func terminateGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
