package mcpproxy_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/mcpproxy"
)

// syncBuffer is a log sink the proxy's goroutines and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// reply is what the client decodes of one frame: its id, and the error's
// code and message when it is one.
type reply struct {
	ID      string
	Code    int
	Message string
}

// Responses no request of the client's waits for, and responses with more
// than one "id" member, never reach the client, whatever their size: the
// client never asked for them, and forwarding them would let them past the
// cap. A pending request one of them names still gets exactly one answer.
func TestRelayDropsStrayResponses(t *testing.T) {
	big, _ := json.Marshal(bigText(3 << 20))
	bigResult := `{"content":[{"type":"text","text":` + string(big) + `}]}`
	const done = `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"done"}}`
	// The error a pending request gets for a response with more than one
	// id that names it; the size counts the frame's newline, as the
	// proxy's other bounds do.
	dupErr := func(id, frame string) reply {
		return reply{ID: id, Code: -32603, Message: fmt.Sprintf(`toolcap: the server's response (%d bytes) had more than one "id" member, so which request it answers is ambiguous; it was dropped`, len(frame)+1)}
	}
	dupFirst := `{"jsonrpc":"2.0","id":3,"result":` + bigResult + `,"id":"other"}`
	dupLast := `{"jsonrpc":"2.0","id":"other","result":` + bigResult + `,"id":3}`
	dupBoth := `{"jsonrpc":"2.0","id":3,"id":"p","result":` + bigResult + `,"id":3}`
	for _, tc := range []struct {
		name     string
		requests []string // from the client, each forwarded before the server answers
		answers  []string // from the server
		want     []reply  // what reaches the client, before done
		log      string   // a warning the proxy logs
	}{
		{
			name:    "an id nobody sent",
			answers: []string{`{"jsonrpc":"2.0","id":42,"result":` + bigResult + `}`},
			log:     "dropped a response from the server to no pending request",
		},
		{
			name:     "a second answer to a tools/call",
			requests: []string{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t"}}`},
			answers: []string{
				`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"ok"}]}}`,
				`{"jsonrpc":"2.0","id":3,"result":` + bigResult + `}`,
			},
			want: []reply{{ID: "3"}},
			log:  `id=3`,
		},
		{
			name:     "a second answer to another request",
			requests: []string{`{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"x://y"}}`},
			answers: []string{
				`{"jsonrpc":"2.0","id":"r","result":{"contents":[]}}`,
				`{"jsonrpc":"2.0","id":"r","result":` + bigResult + `}`,
			},
			want: []reply{{ID: `"r"`}},
			log:  `id="\"r\""`,
		},
		{
			name:     "a second error to a tools/call",
			requests: []string{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t"}}`},
			answers: []string{
				`{"jsonrpc":"2.0","id":4,"error":{"code":-32000,"message":"no"}}`,
				`{"jsonrpc":"2.0","id":4,"error":{"code":-32000,"message":` + string(big) + `}}`,
			},
			want: []reply{{ID: "4", Code: -32000, Message: "no"}},
			log:  "dropped a response from the server to no pending request",
		},
		{
			name:     "duplicate ids, the first pending",
			requests: []string{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t"}}`},
			answers:  []string{dupFirst},
			want:     []reply{dupErr("3", dupFirst)},
			log:      `it has more than one "id" member`,
		},
		{
			name:     "duplicate ids, the last pending",
			requests: []string{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t"}}`},
			answers:  []string{dupLast},
			want:     []reply{dupErr("3", dupLast)},
			log:      `it has more than one "id" member`,
		},
		{
			name: "duplicate ids, both pending, one repeated",
			requests: []string{
				`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t"}}`,
				`{"jsonrpc":"2.0","id":"p","method":"ping"}`,
			},
			answers: []string{dupBoth},
			want:    []reply{dupErr("3", dupBoth), dupErr(`"p"`, dupBoth)},
			log:     `it has more than one "id" member`,
		},
		{
			name:    "duplicate ids, none pending",
			answers: []string{`{"jsonrpc":"2.0","id":5,"result":` + bigResult + `,"id":"other"}`},
			log:     `it has more than one "id" member`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs syncBuffer
			s := newRawSession(t, mcpproxy.Options{Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn})})
			for _, req := range tc.requests {
				s.toServer(req)
				s.atServer()
			}
			// One write, so that the frames come in order, done last.
			s.toClient(strings.Join(append(tc.answers, done), "\n"))
			var got []reply
			for {
				line := s.atClient()
				if line == done {
					break
				}
				if len(line) > 1<<10 {
					t.Fatalf("the client got %d bytes: %.200s", len(line), line)
				}
				var r struct {
					ID    json.RawMessage
					Error struct {
						Code    int
						Message string
					}
				}
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatalf("the client got %s: %v", line, err)
				}
				got = append(got, reply{ID: string(r.ID), Code: r.Error.Code, Message: r.Error.Message})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("the client got (-want +got):\n%s", diff)
			}
			if !strings.Contains(logs.String(), tc.log) {
				t.Errorf("the log holds no %q:\n%s", tc.log, logs.String())
			}
		})
	}
}
