package cli

import (
	"os"
	"strings"
)

// cleanEnv is the test's environment without TOOLCAP_ settings, so that
// only the flags of each test configure the proxy.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TOOLCAP_") {
			env = append(env, kv)
		}
	}
	return env
}
