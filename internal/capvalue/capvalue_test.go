package capvalue_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/capcheck"
	"github.com/toolcap/toolcap/internal/capvalue"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
)

const mib = 1 << 20

// encoded is the measure Cap promises: encoding/json's encoding.
func encoded(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode %T: %v", v, err)
	}
	return b
}

// generic decodes raw as Cap's output is: the generic form, numbers as
// json.Number.
func generic(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// headTail is a tool's policy with a strategy and a token limit, as a
// manifest entry { max_bytes = 2048, max_tokens = 300, keep = "head_tail",
// keep_lines = ['FAIL'] } gives it.
var headTail = shape.Policy{MaxBytes: 2048, MaxTokens: 300, Counter: capcheck.Words{},
	Spec: cut.Spec{Keep: cut.KeepHeadTail, KeepLines: []*regexp.Regexp{regexp.MustCompile(`FAIL`)}}}

// testLog is a test run's output with one failure deep inside.
func testLog() string {
	var b strings.Builder
	for i := range 3000 {
		if i == 1700 {
			b.WriteString("--- FAIL: TestParse (0.01s)\n")
		}
		fmt.Fprintf(&b, "=== RUN   TestCase%d\n--- PASS: TestCase%d (0.00s)\n", i, i)
	}
	return b.String()
}

// Every value but a string is cut by the one structured-JSON rule: its
// encoding, cut by shape.JSON, decoded back.
func TestCapIsShapeJSON(t *testing.T) {
	big := strings.Repeat("x", mib)
	nums := make([]any, 10000)
	for i := range nums {
		nums[i] = i
	}
	type record struct {
		Name  string `json:"name"`
		Lines []string
		Count int `json:"count"`
	}
	tests := []struct {
		name string
		v    any
		p    shape.Policy
	}{
		{"map with a 1 MiB string", map[string]any{"output": big, "exit_code": 0, "ok": true}, shape.Bytes(16384)},
		{"array of strings", []any{big, "short", big}, shape.Bytes(16384)},
		{"escapes count", map[string]any{"q": strings.Repeat(`"\<&`+"\n", mib/5)}, shape.Bytes(4096)},
		{"utf-8", map[string]any{"s": strings.Repeat("日本語🎉", mib/13)}, shape.Bytes(4096)},
		{"struct", record{Name: big, Lines: []string{big, big}, Count: 3}, shape.Bytes(8192)},
		{"nested", map[string]any{"a": map[string]any{"b": []any{map[string]any{"c": big, "n": nil}}}}, shape.Bytes(1024)},
		{"long array of numbers", map[string]any{"nums": nums, "unit": "ms"}, shape.Bytes(1024)},
		{"a token limit", map[string]any{"log": testLog(), "status": "failed"}, headTail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The rule is shape.JSON's on the generic form's encoding, whose
			// objects have their keys sorted.
			enc := encoded(t, generic(t, encoded(t, tt.v)))
			want, ok := shape.JSON(enc, tt.p, nil)
			if !ok || !want.Cut {
				t.Fatalf("shape.JSON did not cut the %d-byte value: ok %v", len(enc), ok)
			}
			got, fig, changed := capvalue.Cap(tt.v, tt.p)
			if !changed {
				t.Fatalf("Cap changed nothing in a %d-byte value at %d bytes", len(enc), tt.p.MaxBytes)
			}
			if diff := cmp.Diff(string(want.Raw), string(encoded(t, got))); diff != "" {
				t.Errorf("the cut value's encoding differs from shape.JSON's (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want.Figures, fig); diff != "" {
				t.Errorf("figures (-want +got):\n%s", diff)
			}
			if n := len(encoded(t, got)); n > tt.p.MaxBytes {
				t.Errorf("the cut value encodes to %d bytes, over the limit %d", n, tt.p.MaxBytes)
			}
			if tt.p.HoldsTokens() {
				if n := tt.p.Counter.Count(string(encoded(t, got))); n > tt.p.MaxTokens {
					t.Errorf("the cut value encodes to %d tokens, over the limit %d", n, tt.p.MaxTokens)
				}
			}
		})
	}
}

// JSON says what shape.JSON said, the note included, and decodes numbers
// as json.Number.
func TestJSON(t *testing.T) {
	rows := make([]any, 500)
	for i := range rows {
		rows[i] = map[string]any{"id": i, "body": strings.Repeat("z", 64)}
	}
	v := map[string]any{"rows": rows, "count": 500}
	got, s, ok := capvalue.JSON(v, shape.Bytes(2048))
	if !ok || !s.Cut || s.Note.Long == "" {
		t.Fatalf("JSON: ok %v, cut %v, note %q; want a cut with a note", ok, s.Cut, s.Note.Long)
	}
	m, isMap := got.(map[string]any)
	if !isMap || m["count"] != json.Number("500") {
		t.Errorf("JSON = %T with count %v, want a map with count json.Number(\"500\")", got, m["count"])
	}
	if !bytes.Equal(encoded(t, got), s.Raw) {
		t.Errorf("the value's encoding differs from s.Raw")
	}

	keys := map[string]any{}
	for i := range 2000 {
		keys[fmt.Sprintf("key%04d", i)] = i
	}
	if got, s, ok := capvalue.JSON(keys, shape.Bytes(1024)); ok || !bytes.Equal(s.Raw, encoded(t, keys)) || !cmp.Equal(got, keys) {
		t.Errorf("JSON of too many keys: ok %v, want false with the value and its encoding", ok)
	}
	if _, s, ok := capvalue.JSON(make(chan int), shape.Bytes(1024)); ok || s.Raw != nil {
		t.Errorf("JSON of a channel: ok %v, raw %q; want false and no encoding", ok, s.Raw)
	}
}

// A string is a text: shape.Text cuts it, with the room its encoding's
// quotes and escapes take.
func TestCapString(t *testing.T) {
	text := strings.Repeat("plain text ", 10000)
	got, fig, changed := capvalue.Cap(text, shape.Bytes(500))
	want, wantFig, _ := shape.Text(text, shape.Bytes(497)) // the quotes, and the marker's newline as \n
	wantFig.Limit = 500
	if diff := cmp.Diff(want, got); diff != "" || !changed {
		t.Errorf("Cap differs from shape.Text with room for the quotes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantFig, fig); diff != "" {
		t.Errorf("figures (-want +got):\n%s", diff)
	}
}

// A string's cut honours the policy's strategy and token limit, escapes
// included.
func TestCapStringPolicy(t *testing.T) {
	log := testLog()
	got, fig, changed := capvalue.Cap(log, headTail)
	s, ok := got.(string)
	if !ok || !changed {
		t.Fatalf("Cap = %T, changed %v; want a cut string", got, changed)
	}
	enc := string(encoded(t, s))
	if len(enc) > headTail.MaxBytes || headTail.Counter.Count(enc) > headTail.MaxTokens {
		t.Errorf("the string encodes to %d bytes, %d tokens: over %d bytes or %d tokens",
			len(enc), headTail.Counter.Count(enc), headTail.MaxBytes, headTail.MaxTokens)
	}
	if err := capcheck.Text(log, s, headTail); err != nil {
		t.Error(err)
	}
	if !strings.HasPrefix(s, "=== RUN   TestCase0\n") || !strings.HasSuffix(s, "--- PASS: TestCase2999 (0.00s)\n") ||
		!strings.Contains(s, "--- FAIL: TestParse (0.01s)\n") {
		t.Errorf("Cap = %q: want the head, the tail and the FAIL line rescued", s)
	}
	if fig.Strategy != string(cut.KeepHeadTail) || fig.Limit != headTail.MaxBytes || fig.LimitTokens != headTail.MaxTokens || fig.OriginalBytes != len(log) {
		t.Errorf("figures %+v: want head_tail against the policy's limits, the original's %d bytes", fig, len(log))
	}
}

func TestCapTooManyKeys(t *testing.T) {
	v := map[string]any{}
	for i := range 2000 {
		v[fmt.Sprintf("key%04d", i)] = i
	}
	got, fig, changed := capvalue.Cap(v, shape.Bytes(1024))
	s, ok := got.(string)
	if !ok || !changed {
		t.Fatalf("Cap = %T, changed %v; want the JSON text as a string", got, changed)
	}
	if n := len(encoded(t, s)); n > 1024 || fig.DroppedBytes == 0 {
		t.Errorf("encoded %d bytes (limit 1024), dropped %d", n, fig.DroppedBytes)
	}
	if !strings.HasPrefix(s, `{"key0000":0,"key0001":1,`) || !strings.HasSuffix(s, cut.Marker(fig.DroppedBytes)) {
		t.Errorf("Cap = %.40q…, want the head of the JSON text and the marker", s)
	}
	if fig.OriginalBytes != len(encoded(t, v)) || fig.Limit != 1024 {
		t.Errorf("figures %+v: want the original's %d bytes against the limit 1024", fig, len(encoded(t, v)))
	}
}

func TestCapUnchanged(t *testing.T) {
	tests := []struct {
		name string
		v    any
	}{
		{"fits", map[string]any{"output": "hello", "n": 1}},
		{"exactly the limit", strings.Repeat("z", 98)}, // 100 bytes with its quotes
		{"not encodable", map[string]any{"ch": make(chan int)}},
		{"nil", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, fig, changed := capvalue.Cap(tt.v, shape.Bytes(100))
			if changed || fig != (chain.Truncation{}) {
				t.Errorf("changed %v, figures %+v; want neither", changed, fig)
			}
			if diff := cmp.Diff(tt.v, got, cmp.Comparer(func(a, b chan int) bool { return a == b })); diff != "" {
				t.Errorf("value changed (-want +got):\n%s", diff)
			}
		})
	}
}

// Strings is shape.Texts.
func TestStrings(t *testing.T) {
	big := strings.Repeat("o", mib)
	tests := []struct {
		name string
		in   []string
		p    shape.Policy
	}{
		{"short stderr survives a 1 MiB stdout", []string{big, "error: boom"}, shape.Bytes(16384)},
		{"two long ones share", []string{big, big}, shape.Bytes(16384)},
		{"too many for a marker each", strings.Split(strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz,", 100), ","), shape.Bytes(500)},
		{"head_tail and tokens", []string{testLog(), "exit status 1"}, headTail},
		{"fit", []string{"a", "b"}, shape.Bytes(10)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type result struct {
				Out     []string
				T       chain.Truncation
				Changed bool
			}
			var want, got result
			want.Out, want.T, want.Changed = shape.Texts(tt.in, tt.p)
			got.Out, got.T, got.Changed = capvalue.Strings(tt.in, tt.p)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Strings differs from shape.Texts (-want +got):\n%s", diff)
			}
		})
	}
}
