package mcpproxy_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/policytest"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/mcpproxy"
)

// edgeText returns a text of exactly n bytes, lines of ASCII, and the same
// text as written in a JSON string (each newline as \n), so that the text
// and its written form differ in length.
func edgeText(n int, c byte) (text, written string) {
	line := strings.Repeat(string(c), 63) + "\n"
	text = strings.Repeat(line, n/len(line)+1)[:n]
	return text, strings.ReplaceAll(text, "\n", `\n`)
}

// relayedCut is what a client reads of a cut result: its texts joined as
// the limit measures them, the marker's N, and the figures in _meta.
type relayedCut struct {
	Text    string
	N       int
	Kept    int // bytes of the text before the marker
	Figures map[string]any
}

// refPattern finds a kept output's ref, which differs from one keeper to
// the next: it is compared as REF.
var refPattern = regexp.MustCompile(`"ref":"[^"]*"`)

// A result over the read buffer is cut as the text held whole is, whatever
// the size of its first block against the limit and the read buffer, and
// wherever the copy of the message stops: on the separator between two
// blocks (block 1 exactly the limit), just before or after it. The
// separator between the blocks is part of the text the cut reads.
func TestRelayCutAtTheEdgesAsHeldWhole(t *testing.T) {
	const limit = 5 << 20
	const buffer = 4 << 20 // the relay's read buffer
	second := "AB"
	for _, keepRest := range []bool{false, true} {
		for _, size := range []int{
			limit - 2, limit - 1, limit, limit + 1, limit + 2,
			limit + 3, limit + 4, limit + 5, // the head the relay holds: limit+4 bytes
			buffer - 1, buffer, buffer + 1,
		} {
			name := map[bool]string{false: "plain", true: "rest kept"}[keepRest] + "/" + strconv.Itoa(size)
			t.Run(name, func(t *testing.T) {
				first, firstWritten := edgeText(size, 'x')
				frame := `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"` + firstWritten +
					`"},{"type":"text","text":"` + second + `"}]}}`
				opts := mcpproxy.Options{Policies: policytest.Of(t, limitFor(limit))}
				if keepRest {
					opts.Rest = rest.NewMemory(rest.Config{})
				}
				s := newRawSession(t, opts)
				s.toServer(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t"}}`)
				s.atServer()
				s.toClient(frame)
				var got struct {
					Result struct {
						Content []struct{ Type, Text string }
						Meta    map[string]map[string]any `json:"_meta"`
					}
				}
				if err := json.Unmarshal([]byte(s.atClient()), &got); err != nil {
					t.Fatal(err)
				}
				var texts []string
				for _, b := range got.Result.Content {
					texts = append(texts, b.Text)
				}
				joined := first + shape.TextSeparator + second
				want := heldWholeCut(t, joined, len(first), limit, keepRest)
				out := strings.Join(texts, shape.TextSeparator)
				if diff := cmp.Diff(want, relayed(out, got.Result.Meta["toolcap/truncation"])); diff != "" {
					t.Errorf("the relay's cut, against the cut of the text held whole (-want +got):\n%s", diff)
				}
				kept := min(want.Kept, len(out))
				sameBytes(t, "the text before the marker", joined[:kept], out[:kept])
				if read, at, ok := readMarker(t, out); ok {
					// The store kept the text whole, separator included.
					args, _ := json.Marshal(map[string]any{"ref": read.Ref, "offset": at})
					s.toServer(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"` + rest.DefaultTool + `","arguments":` + string(args) + `}}`)
					var page struct {
						Result struct{ Content []struct{ Text string } }
					}
					if err := json.Unmarshal([]byte(s.atClient()), &page); err != nil || len(page.Result.Content) != 1 {
						t.Fatalf("the read of the rest: %v, %+v", err, page)
					}
					if diff := cmp.Diff(joined[at:], page.Result.Content[0].Text); diff != "" {
						t.Errorf("the read of the rest (-want +got):\n%s", diff)
					}
				}
			})
		}
	}
}

// heldWholeCut is the cut of joined held whole, as the relay writes it
// out: its figures count the texts without the separators between them.
// firstLen is the length of the first text.
func heldWholeCut(t *testing.T, joined string, firstLen, limit int, keepRest bool) relayedCut {
	t.Helper()
	p := shape.Policy{MaxBytes: limit, KeepRest: keepRest}
	var out string
	var tr chain.Truncation
	if keepRest {
		k, err := rest.NewKeeper(rest.NewMemory(rest.Config{}))
		if err != nil {
			t.Fatal(err)
		}
		out, tr, _ = k.Text(context.Background(), joined, p)
	} else {
		out, tr, _ = shape.Text(joined, p)
	}
	if tr.OriginalBytes == 0 {
		return relayed(out, nil)
	}
	// The figures count the texts, not the separator between them (kept
	// when the cut keeps some of the second text).
	original := tr.OriginalBytes - len(shape.TextSeparator)
	kept := tr.KeptBytes
	if kept > firstLen {
		kept -= len(shape.TextSeparator)
	}
	fig := map[string]any{"unit": "bytes", "limit": float64(limit), "original": float64(original),
		"kept": float64(kept), "dropped": float64(original - kept)}
	if tr.Ref != "" {
		fig["ref"], fig["resume"] = "REF", float64(tr.Resume)
	}
	return relayed(out, fig)
}

// relayed describes a client's text and figures, the ref as REF.
func relayed(text string, fig map[string]any) relayedCut {
	r := relayedCut{Figures: fig}
	if _, ok := fig["ref"]; ok {
		fig["ref"] = "REF"
	}
	r.Kept = len(text)
	if ms := cut.FindMarkers(text); len(ms) > 0 {
		m := ms[len(ms)-1]
		r.N, r.Kept = m.N, m.Start
		text = text[m.Start:]
	} else {
		text = ""
	}
	// The text before the marker is compared by its length (its bytes
	// are the joined text's start in both); the marker as written.
	r.Text = refPattern.ReplaceAllString(text, `"ref":"REF"`)
	return r
}

// A result whose joined text (its texts and the separators between them,
// what the chain cuts) is exactly the limit goes to the client as the
// server wrote it, one text or more, empty ones too.
func TestRelayExactlyTheLimitAsSent(t *testing.T) {
	const limit = 5 << 20
	_, less1 := edgeText(limit-1, 'x')
	_, less2 := edgeText(limit-2, 'x')
	for _, tc := range []struct {
		name  string
		texts []string // as written
	}{
		{"the limit less 1 then an empty text", []string{less1, ""}},
		{"an empty text then the limit less 1", []string{"", less1}},
		{"the limit less 2 then 1", []string{less2, `\/`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var blocks []string
			for _, w := range tc.texts {
				blocks = append(blocks, `{"type":"text","text":"`+w+`"}`)
			}
			// \/ and \u0078 are written otherwise by an encoder: the
			// result must go out from the server's bytes.
			frame := `{"jsonrpc":"2.0","id":5,"result":{"content":[` + strings.Join(blocks, ",") + `],"z":"\u0078\/"}}`
			s := newRawSession(t, mcpproxy.Options{Policies: policytest.Of(t, limitFor(limit)), MaxMessageBytes: 1 << 20})
			s.toServer(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t"}}`)
			s.atServer()
			s.toClient(frame)
			sameBytes(t, "the client's result", frame, s.atClient())
		})
	}
}
