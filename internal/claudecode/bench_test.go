package claudecode_test

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/internal/claudecode"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/redact"
)

// benchPayload is a PostToolUse payload of tool whose tool_response is
// resp, as Claude Code sends it.
func benchPayload(b *testing.B, tool string, resp any) []byte {
	b.Helper()
	data, err := json.Marshal(map[string]any{
		"session_id": "bench", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
		"hook_event_name": claudecode.EventPostToolUse, "tool_name": tool,
		"tool_use_id": "toolu_bench", "tool_input": map[string]any{"command": "cat big.log"},
		"tool_response": resp,
	})
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// pipe reads data as a pipe does, without telling its length: as Claude
// Code hands a hook its payload.
func pipe(data []byte) io.Reader { return struct{ io.Reader }{bytes.NewReader(data)} }

// BenchmarkHook times what the hook does with one payload, in process:
// read it, cap the tool's output (keeping the rest in a store, as toolcap
// hook claude-code does by default, or not) and encode the reply. Hook is
// Hook.ReadCap, what the hook runs: a payload past StreamAbove is cut as
// it streams. Held is ReadInput and Cap, which hold the payload whole (the
// hook before it streamed). The baseline, ReadAll, reads the same bytes
// and does nothing with them: the floor of a hook that must see its whole
// payload. The 100 MB payloads are skipped under -short.
func BenchmarkHook(b *testing.B) {
	lines := func(n int) string { return strings.Repeat("0123456789abcde\n", n/16) }
	const oneMiB, hundredMB = 1 << 20, 100_000_000
	bash := func(n int) func() any {
		return func() any { return map[string]any{"stdout": lines(n), "stderr": "", "interrupted": false} }
	}
	for _, tc := range []struct {
		name string
		tool string
		resp func() any
		keep bool
		big  bool
		// redact: the policy redacts with the built-in rules, as a
		// manifest's does by default.
		redact bool
	}{
		{"Bash-1MiB-keep", "Bash", bash(oneMiB), true, false, false},
		{"Bash-1MiB-plain", "Bash", bash(oneMiB), false, false, false},
		{"Bash-1MiB-keep-redact", "Bash", bash(oneMiB), true, false, true},
		{"mcp-1MiB-keep", "mcp__fs__read", func() any { return []any{map[string]any{"type": "text", "text": lines(oneMiB)}} }, true, false, false},
		{"mcp-1MiB-keep-redact", "mcp__fs__read", func() any { return []any{map[string]any{"type": "text", "text": lines(oneMiB)}} }, true, false, true},
		{"Bash-100MB-keep", "Bash", bash(hundredMB), true, true, false},
		{"Bash-100MB-plain", "Bash", bash(hundredMB), false, true, false},
		{"Bash-100MB-keep-redact", "Bash", bash(hundredMB), true, true, true},
		{"mcp-100MB-keep", "mcp__fs__read", func() any { return []any{map[string]any{"type": "text", "text": lines(hundredMB)}} }, true, true, false},
	} {
		if tc.big && testing.Short() {
			continue
		}
		var in []byte
		payload := func(b *testing.B) []byte {
			if in == nil {
				in = benchPayload(b, tc.tool, tc.resp())
			}
			return in
		}
		b.Run(tc.name+"/ReadAll", func(b *testing.B) {
			in := payload(b)
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := io.ReadAll(pipe(in)); err != nil {
					b.Fatal(err)
				}
			}
		})
		setup := func(b *testing.B) claudecode.Setup {
			s := claudecode.Setup{Policy: shape.Policy{MaxBytes: shape.DefaultMaxBytes, KeepRest: tc.keep}}
			if tc.redact {
				s.Policy.Redact = redact.Default()
			}
			if tc.keep {
				d, err := rest.OpenPlainDir(filepath.Join(b.TempDir(), "rest"), rest.Config{})
				if err != nil {
					b.Fatal(err)
				}
				s.Store = d
			}
			return s
		}
		b.Run(tc.name+"/Held", func(b *testing.B) {
			in := payload(b)
			s := setup(b)
			h := &claudecode.Hook{Store: s.Store}
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				hin, err := claudecode.ReadInput(pipe(in))
				if err != nil {
					b.Fatal(err)
				}
				out, _, changed, err := h.Cap(hin, s.Policy)
				if err != nil || !changed {
					b.Fatalf("Cap: changed %v, error %v", changed, err)
				}
				if _, err := claudecode.MarshalReply(out); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/Hook", func(b *testing.B) {
			in := payload(b)
			s := setup(b)
			h := &claudecode.Hook{}
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				c, err := h.ReadCap(pipe(in), func(string) (claudecode.Setup, error) { return s, nil })
				if err != nil || !c.Changed {
					b.Fatalf("ReadCap: changed %v, error %v", c.Changed, err)
				}
				if _, err := claudecode.MarshalReply(c.Out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
