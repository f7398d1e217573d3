// Package logtest captures hclog output as JSON lines for tests to assert on.
package logtest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// New returns a logger at level that writes JSON lines, without timestamps,
// to buf.
func New(buf *bytes.Buffer, level hclog.Level) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Output: buf, JSONFormat: true, DisableTime: true, Level: level})
}

// Lines decodes every line written to buf, failing t on one that is not JSON.
func Lines(t testing.TB, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		lines = append(lines, m)
	}
	return lines
}
