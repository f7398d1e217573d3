package mcpproxy_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/mcpproxy"
)

// recorder is a byte stream that keeps what is written to it, each write
// apart.
type recorder struct {
	io.Reader
	writes [][]byte
	closed bool
}

func (r *recorder) Write(p []byte) (int, error) {
	r.writes = append(r.writes, bytes.Clone(p))
	return len(p), nil
}

func (r *recorder) Close() error {
	r.closed = true
	return nil
}

func TestStreamConnFramesEachMessage(t *testing.T) {
	big := `{"jsonrpc":"2.0","method":"x","params":{"pad":"` + strings.Repeat("a", 100_000) + `"}}`
	tests := []struct {
		name string
		msgs []string
	}{
		{"one", []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`}},
		{"several, in order", []string{`{"jsonrpc":"2.0","id":1,"result":{}}`, `[{"jsonrpc":"2.0","method":"a"}]`, `{"jsonrpc":"2.0","method":"b"}`}},
		{"larger than a joined write", []string{big, `{"jsonrpc":"2.0","id":2,"method":"ping"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{Reader: strings.NewReader("from the peer\n")}
			c := mcpproxy.StreamConn(rec)
			var want strings.Builder
			for _, m := range tt.msgs {
				if err := c.WriteMessage([]byte(m)); err != nil {
					t.Fatalf("WriteMessage: %v", err)
				}
				want.WriteString(m + "\n")
			}
			if diff := cmp.Diff(want.String(), string(bytes.Join(rec.writes, nil))); diff != "" {
				t.Errorf("the stream (-want +got):\n%.500s", diff)
			}
			// A message that fits one write goes out with its newline:
			// a reader of the stream never sees it without its end.
			for _, w := range rec.writes {
				if len(w) <= 64<<10 && w[len(w)-1] != '\n' {
					t.Errorf("a write of %d bytes without its newline: %.60q", len(w), w)
				}
			}
			got, err := io.ReadAll(c)
			if err != nil || string(got) != "from the peer\n" {
				t.Errorf("Read gave %q, %v; want the peer's stream as it is", got, err)
			}
			if err := c.Close(); err != nil || !rec.closed {
				t.Errorf("Close = %v, stream closed %v; want nil, true", err, rec.closed)
			}
		})
	}
}

// failing is a stream whose writes fail.
type failing struct{ io.Reader }

var errBroken = errors.New("broken pipe")

func (failing) Write([]byte) (int, error) { return 0, errBroken }
func (failing) Close() error              { return nil }

func TestStreamConnReportsWriteErrors(t *testing.T) {
	c := mcpproxy.StreamConn(failing{strings.NewReader("")})
	if err := c.WriteMessage([]byte(`{"jsonrpc":"2.0","method":"x"}`)); !errors.Is(err, errBroken) {
		t.Errorf("WriteMessage = %v, want %v", err, errBroken)
	}
}
