package claudecode_test

import (
	"bytes"
	"testing"

	"github.com/toolcap/toolcap/internal/claudecode"
	"github.com/toolcap/toolcap/internal/fault"
	"github.com/toolcap/toolcap/internal/shape"
)

// BenchmarkHookScan times Hook.ReadCap on a PostToolUse payload of 1 MiB,
// a Bash output whose stdout is nearly all of it, cut to the default
// limit with nothing kept: what the hook's JSON scanning and string
// decoding cost. Lines is a text with an escaped newline every 16 bytes;
// mixed is the fault server's text (quotes, backslashes, tabs, \u escapes,
// a surrogate pair and multi-byte characters). Held reads the payload
// whole, as the hook does under StreamAbove; Streamed reads it through
// the streaming path, as a payload past StreamAbove is.
func BenchmarkHookScan(b *testing.B) {
	const oneMiB = 1 << 20
	lines := func() []byte {
		var s bytes.Buffer
		for s.Len() < oneMiB {
			s.WriteString(`0123456789abcde\n`)
		}
		return s.Bytes()
	}
	mixed := func() []byte {
		var s bytes.Buffer
		if err := fault.WriteJSON(&s, oneMiB); err != nil {
			b.Fatal(err)
		}
		return s.Bytes()
	}
	for _, tc := range []struct {
		name   string
		stdout func() []byte
	}{{"lines", lines}, {"mixed", mixed}} {
		var payload bytes.Buffer
		payload.WriteString(`{"session_id":"bench","transcript_path":"/tmp/t.jsonl","cwd":"/tmp","hook_event_name":"PostToolUse",` +
			`"tool_name":"Bash","tool_use_id":"toolu_bench","tool_input":{"command":"cat big.log"},"tool_response":{"stdout":"`)
		payload.Write(tc.stdout())
		payload.WriteString(`","stderr":"","interrupted":false}}`)
		in := payload.Bytes()
		s := claudecode.Setup{Policy: shape.Policy{MaxBytes: shape.DefaultMaxBytes}}
		for _, mode := range []struct {
			name string
			h    *claudecode.Hook
		}{{"Held", &claudecode.Hook{}}, {"Streamed", claudecode.Streaming(claudecode.Hook{}, 64<<10, 0)}} {
			b.Run(tc.name+"/"+mode.name, func(b *testing.B) {
				b.SetBytes(int64(len(in)))
				b.ReportAllocs()
				for b.Loop() {
					c, err := mode.h.ReadCap(pipe(in), func(string) (claudecode.Setup, error) { return s, nil })
					if err != nil || !c.Changed {
						b.Fatalf("ReadCap: changed %v, error %v", c.Changed, err)
					}
				}
			})
		}
	}
}
