package claudecode_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/internal/claudecode"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
)

// Issue 39, item 11: a session_id far longer than Claude Code's (a UUID)
// is neither held nor made a scope of the store, wherever it stands in
// the payload and whether the payload is held or streamed: the output is
// still cut, nothing is kept, and the log says why.
func TestReadCapBoundsSessionID(t *testing.T) {
	out := strings.Repeat("x", 100000)
	resp := `{"stdout":` + jstr(t, out) + `,"stderr":"","interrupted":false}`
	payload := func(session string, last bool) string {
		sid := `"session_id":` + jstr(t, session)
		head := `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},`
		if last {
			return head + `"tool_response":` + resp + `,` + sid + `}`
		}
		return head + sid + `,"tool_response":` + resp + `}`
	}
	huge := strings.Repeat("S", 20<<20)
	for _, tc := range []struct {
		name     string
		session  string
		last     bool
		streamed bool
		kept     int    // entries in the store
		warning  string // the log's message
	}{
		{"a UUID, held", "3f2b8c1e-5a9d-4e7f-b6c2-9d8e7f6a5b4c", false, false, 1, ""},
		{"a UUID, streamed", "3f2b8c1e-5a9d-4e7f-b6c2-9d8e7f6a5b4c", false, true, 1, ""},
		{"254 bytes, held", strings.Repeat("s", 254), false, false, 1, ""},
		{"255 bytes, held", strings.Repeat("s", 255), false, false, 0, "session_id: 257 bytes, over the 256 a session id may be: the output is cut without keeping the rest"},
		{"20 MiB first, streamed", huge, false, true, 0, "session_id: 20971522 bytes, over the 256 a session id may be: the output is cut without keeping the rest"},
		{"20 MiB last, streamed", huge, true, true, 0, "session_id: 20971522 bytes, over the 256 a session id may be: the output is cut without keeping the rest"},
		{"255 bytes, streamed", strings.Repeat("s", 255), false, true, 0, "session_id: 257 bytes, over the 256 a session id may be: the output is cut without keeping the rest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := storeDir(t, 0)
			var logs bytes.Buffer
			h := claudecode.Hook{Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, JSONFormat: true, DisableTime: true})}
			hook := &h
			if tc.streamed {
				hook = claudecode.Streaming(h, 4096, 0)
			}
			p := shape.Policy{MaxBytes: 16384, KeepRest: true}
			c, err := hook.ReadCap(strings.NewReader(payload(tc.session, tc.last)), func(string) (claudecode.Setup, error) {
				return claudecode.Setup{Policy: p, Store: store}, nil
			})
			if err != nil {
				t.Fatalf("ReadCap: %v", err)
			}
			if !c.Changed || len(c.Out) > 2*p.MaxBytes || c.Truncation.DroppedBytes == 0 {
				t.Fatalf("the output was not cut: changed %v, %d bytes, %+v", c.Changed, len(c.Out), c.Truncation)
			}
			if len(c.Input.SessionID) > 256 {
				t.Errorf("SessionID of %d bytes held", len(c.Input.SessionID))
			}
			if got := entries(t, store); got != tc.kept {
				t.Errorf("%d entries kept, want %d", got, tc.kept)
			}
			var reply struct{ Stdout string }
			if err := json.Unmarshal(c.Out, &reply); err != nil {
				t.Fatal(err)
			}
			if ms := cut.FindMarkers(reply.Stdout); len(ms) != 1 || (ms[0].Rest != nil) != (tc.kept > 0) {
				t.Errorf("markers %+v: want one, naming a read %v", ms, tc.kept > 0)
			}
			var warning string
			for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				var l struct {
					Level   string `json:"@level"`
					Message string `json:"@message"`
				}
				if json.Unmarshal([]byte(line), &l) == nil && l.Level == "warn" {
					warning = l.Message
				}
			}
			if diff := cmp.Diff(tc.warning, warning); diff != "" {
				t.Errorf("warning mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
