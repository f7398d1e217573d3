package claudecode_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/claudecode"
)

func TestReadInput(t *testing.T) {
	tests := []struct {
		name    string
		payload string
		want    claudecode.Input
		wantErr string // a part of the error; "" for none
	}{
		{
			name: "a PostToolUse payload, unknown fields ignored",
			payload: `{"session_id":"abc","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"Bash",` +
				`"tool_input":{"command":"ls"},"tool_response":{"stdout":"a\n"},"tool_use_id":"toolu_01","duration_ms":12}`,
			want: claudecode.Input{HookEventName: "PostToolUse", ToolName: "Bash", ToolUseID: "toolu_01",
				SessionID: "abc", ToolInput: []byte(`{"command":"ls"}`), ToolResponse: []byte(`{"stdout":"a\n"}`)},
		},
		{name: "empty", payload: "", wantErr: "the payload is not a JSON hook payload: "},
		{name: "not JSON", payload: "{bad", wantErr: "the payload is not a JSON hook payload: "},
		{name: "an array", payload: "[1,2]", wantErr: "the payload is not a JSON hook payload: "},
		{name: "another event", payload: `{"hook_event_name":"PreToolUse","tool_name":"Bash"}`,
			wantErr: `hook_event_name is "PreToolUse", not "PostToolUse": register the hook under PostToolUse`},
		{name: "no tool name", payload: `{"hook_event_name":"PostToolUse","tool_response":"x"}`,
			wantErr: "the payload has no tool_name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := claudecode.ReadInput(strings.NewReader(tt.payload))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ReadInput() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ReadInput() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ReadInput() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadInputReadError(t *testing.T) {
	boom := errors.New("boom")
	_, err := claudecode.ReadInput(iotest.ErrReader(boom))
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "reading the payload: ") {
		t.Errorf("ReadInput() error = %v, want %v wrapped as a read error", err, boom)
	}
}

func TestMarshalReply(t *testing.T) {
	got, err := claudecode.MarshalReply([]byte(`{"stdout":"<b>&"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":{"stdout":"<b>&"}}}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("MarshalReply() mismatch (-want +got):\n%s", diff)
	}
}

// TestReadBounded reads payloads of sizes about the chunks and the bound,
// from readers that tell their length and from ones that do not (a pipe):
// each is read whole, or, past the bound, refused with ErrPayloadTooLarge.
func TestReadBounded(t *testing.T) {
	const limit = 300 << 10
	readers := map[string]func([]byte) io.Reader{
		"bytes.Reader": func(b []byte) io.Reader { return bytes.NewReader(b) },
		"pipe":         func(b []byte) io.Reader { return struct{ io.Reader }{bytes.NewReader(b)} },
		"one byte":     func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) },
		"file": func(b []byte) io.Reader {
			f, err := os.CreateTemp(t.TempDir(), "payload")
			if err == nil {
				_, err = f.Write(b)
			}
			if err == nil {
				_, err = f.Seek(0, io.SeekStart)
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = f.Close() })
			return f
		},
	}
	for _, n := range []int{0, 1, 64<<10 - 1, 64 << 10, 64<<10 + 1, 200_000, limit, limit + 1, 2 * limit} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte('a' + i%26)
		}
		for name, reader := range readers {
			if name == "one byte" && n > 70<<10 {
				continue
			}
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				got, err := claudecode.ReadBounded(reader(data), limit)
				if n > limit {
					if !errors.Is(err, claudecode.ErrPayloadTooLarge) {
						t.Fatalf("ReadBounded() error = %v, want ErrPayloadTooLarge", err)
					}
					return
				}
				if err != nil {
					t.Fatalf("ReadBounded() error = %v", err)
				}
				if !bytes.Equal(got, data) {
					t.Errorf("ReadBounded() = %d bytes, not the %d written", len(got), n)
				}
			})
		}
	}
}
