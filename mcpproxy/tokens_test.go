package mcpproxy_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
	"github.com/toolcap/toolcap/tokens"
)

// TestRelayTokenLimit: a tool's token limit holds through the relay. A text
// held whole is cut as cut.CutTokens cuts it, its marker in tokens; a text
// past the buffer, cut as it streamed, is cut again with its one marker in
// bytes, the count exact.
func TestRelayTokenLimit(t *testing.T) {
	m, err := manifest.Load(context.Background(), manifest.Bytes("m.toml", []byte("[worker.tool_output.per_tool]\nt = { max_tokens = 1000 }\n")))
	if err != nil {
		t.Fatal(err)
	}
	tz := tokens.NewCalibrated() // what the proxy counts with: 2 bytes a token
	for _, tc := range []struct {
		name     string
		size     int
		wantUnit string
	}{
		{"within the window", 10_000, "tokens"},
		{"past the buffer", 9 << 20, "bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newRawSession(t, mcpproxy.Options{Policies: policytest.Of(t, m), MaxMessageBytes: 16 << 20})
			s.toServer(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t"}}`)
			s.atServer()
			text := bigText(tc.size)
			enc, _ := json.Marshal(text)
			s.toClient(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":` + string(enc) + `}]}}`)
			var got struct {
				Result struct {
					Content []struct{ Text string }
					Meta    map[string]map[string]any `json:"_meta"`
				}
			}
			if err := json.Unmarshal([]byte(s.atClient()), &got); err != nil {
				t.Fatal(err)
			}
			out := got.Result.Content[0].Text
			if n := tz.Count(out); n > 1000 || n < 950 {
				t.Errorf("%d tokens reach the client, want 950 to 1000", n)
			}
			fig := got.Result.Meta["toolcap/truncation"]
			switch tc.wantUnit {
			case "tokens":
				want, st := cut.CutTokens(text, manifest.DefaultMaxBytes, 1000, tz, cut.Spec{})
				if diff := cmp.Diff(want, out); diff != "" {
					t.Errorf("the relay's cut differs from cut.CutTokens' (-want +got):\n%.500s", diff)
				}
				wantTokens := map[string]any{"limit": 1000.0, "original": float64(st.OriginalTokens),
					"kept": float64(st.KeptTokens), "dropped": float64(st.DroppedTokens)}
				if diff := cmp.Diff(wantTokens, fig["tokens"]); diff != "" {
					t.Errorf("token figures (-want +got):\n%s", diff)
				}
			case "bytes":
				if _, ok := fig["tokens"]; ok {
					t.Errorf("figures %v: token figures for a marker in bytes", fig)
				}
				before, n, ok := cut.SplitMarker(out)
				if !ok || n != len(text)-len(before) || !strings.HasPrefix(text, before) {
					t.Errorf("marker count %d, want %d (%v); ends %q", n, len(text)-len(before), ok, out[max(0, len(out)-60):])
				}
			}
		})
	}
}

// TestRelayExactTokenizerIsAnError: the proxy links no vocabulary.
func TestRelayExactTokenizerIsAnError(t *testing.T) {
	m, err := manifest.Load(context.Background(), manifest.Bytes("m.toml", []byte("[worker.tool_output]\ndefault_max_tokens = 1000\ntokenizer = \"o200k_base\"\n")))
	if err != nil {
		t.Fatal(err)
	}
	_, err = mcpproxy.New(mcpproxy.Options{Policies: policytest.Of(t, m)})
	if err == nil || !strings.Contains(err.Error(), `tokenizer "o200k_base" is not built into the core module`) {
		t.Errorf("New() error = %v", err)
	}
}

// TestRelayStructuredTokenLimit: a structuredContent within the byte limit
// and over the token limit is cut, as every front end cuts it, even when
// the text fits.
func TestRelayStructuredTokenLimit(t *testing.T) {
	m, err := manifest.Load(context.Background(), manifest.Bytes("m.toml", []byte("[worker.tool_output.per_tool]\nt = { max_tokens = 200 }\n")))
	if err != nil {
		t.Fatal(err)
	}
	tz := tokens.NewCalibrated()
	s := newRawSession(t, mcpproxy.Options{Policies: policytest.Of(t, m)})
	s.toServer(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t"}}`)
	s.atServer()
	sc := `{"items":[` + strings.Repeat(`"alpha beta",`, 100) + `"last"]}` // about 1.2 KB: within 16 KiB, over 200 tokens
	s.toClient(`{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"ok"}],"structuredContent":` + sc + `}}`)
	var got struct {
		Result struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
		}
	}
	if err := json.Unmarshal([]byte(s.atClient()), &got); err != nil {
		t.Fatal(err)
	}
	if n := tz.Count(string(got.Result.StructuredContent)); n > 200 || len(got.Result.StructuredContent) == 0 {
		t.Errorf("structuredContent of %d tokens reaches the client, want at most 200: %.200s", n, got.Result.StructuredContent)
	}
}
