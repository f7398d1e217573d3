package cli

import (
	"os"
	"syscall"
)

// shutdownSignals are the signals that cancel a command's context: an
// interrupt from a terminal, and SIGTERM from a service manager or a
// container runtime stopping toolcap.
var shutdownSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}
