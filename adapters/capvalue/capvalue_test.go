package capvalue_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/adapters/capvalue"
	"github.com/toolcap/toolcap/middleware"
)

const mib = 1 << 20

// encodedLen is the measure Cap promises: the JSON encoding, HTML unescaped.
func encodedLen(t *testing.T, v any) int {
	t.Helper()
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		t.Fatalf("encode %T: %v", v, err)
	}
	return buf.Len() - 1
}

// shape replaces every string of a decoded JSON value by "", so that two
// values of the same shape compare equal.
func shape(v any) any {
	switch x := v.(type) {
	case string:
		return ""
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = shape(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = shape(e)
		}
		return out
	default:
		return v
	}
}

func decoded(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCap(t *testing.T) {
	big := strings.Repeat("x", mib)
	type record struct {
		Name  string `json:"name"`
		Lines []string
		Count int `json:"count"`
	}
	tests := []struct {
		name  string
		v     any
		limit int
	}{
		{"map with a 1 MiB string", map[string]any{"output": big, "exit_code": 0, "ok": true}, 16384},
		{"bare string", big, 16384},
		{"array of strings", []any{big, "short", big}, 16384},
		{"escapes count", map[string]any{"q": strings.Repeat(`"\<&`+"\n", mib/5)}, 4096},
		{"utf-8", map[string]any{"s": strings.Repeat("日本語🎉", mib/13)}, 4096},
		{"struct", record{Name: big, Lines: []string{big, big}, Count: 3}, 8192},
		{"nested", map[string]any{"a": map[string]any{"b": []any{map[string]any{"c": big, "n": nil}}}}, 1024},
		{"many long strings", func() []any {
			var out []any
			for range 2000 {
				out = append(out, strings.Repeat("y", 512))
			}
			return out
		}(), 16384},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, dropped := capvalue.Cap(tt.v, tt.limit)
			if dropped == 0 {
				t.Fatalf("Cap dropped nothing from a %d-byte value at %d", encodedLen(t, tt.v), tt.limit)
			}
			if n := encodedLen(t, got); n > tt.limit {
				t.Errorf("capped value encodes to %d bytes, over the limit %d", n, tt.limit)
			}
			if diff := cmp.Diff(shape(decoded(t, tt.v)), shape(decoded(t, got))); diff != "" {
				t.Errorf("shape changed (-want +got):\n%s", diff)
			}
			if enc, _ := json.Marshal(got); !bytes.Contains(enc, []byte("bytes dropped, refine your query]")) {
				t.Errorf("no marker in the capped value")
			}
		})
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
			got, dropped := capvalue.Cap(tt.v, 100)
			if dropped != 0 {
				t.Errorf("dropped = %d, want 0", dropped)
			}
			if diff := cmp.Diff(tt.v, got, cmp.Comparer(func(a, b chan int) bool { return a == b })); diff != "" {
				t.Errorf("value changed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCapLongArrays(t *testing.T) {
	nums := make([]any, 10000)
	rows := make([]any, 2000)
	for i := range nums {
		nums[i] = i
	}
	for i := range rows {
		rows[i] = map[string]any{"id": i, "body": strings.Repeat("z", 512)}
	}
	tests := []struct {
		name  string
		v     map[string]any
		key   string
		limit int
	}{
		{"numbers", map[string]any{"nums": nums, "unit": "ms"}, "nums", 1024},
		{"records", map[string]any{"rows": rows, "count": 2000}, "rows", 16384},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, dropped := capvalue.Cap(tt.v, tt.limit)
			if n := encodedLen(t, got); n > tt.limit || n < tt.limit/2 || dropped == 0 {
				t.Errorf("encoded %d bytes (limit %d), dropped %d", n, tt.limit, dropped)
			}
			m, ok := got.(map[string]any)
			if !ok {
				t.Fatalf("Cap = %T, want the map", got)
			}
			arr := m[tt.key].([]any)
			last, _ := arr[len(arr)-1].(string)
			if !strings.HasPrefix(last, "[truncated: ") || len(arr) < 2 {
				t.Errorf("%s has %d elements ending in %v, want the head and the marker", tt.key, len(arr), arr[len(arr)-1])
			}
			want, have := shape(decoded(t, tt.v)).(map[string]any)[tt.key].([]any), shape(decoded(t, m)).(map[string]any)[tt.key].([]any)
			if diff := cmp.Diff(want[:len(arr)-1], have[:len(arr)-1]); diff != "" {
				t.Errorf("kept elements changed shape (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCapTooManyKeys(t *testing.T) {
	v := map[string]any{}
	for i := range 2000 {
		v[fmt.Sprintf("key%04d", i)] = i
	}
	got, dropped := capvalue.Cap(v, 1024)
	s, ok := got.(string)
	if !ok {
		t.Fatalf("Cap = %T, want the JSON text as a string", got)
	}
	if n := encodedLen(t, s); n > 1024 || dropped == 0 {
		t.Errorf("encoded %d bytes (limit 1024), dropped %d", n, dropped)
	}
	if !strings.HasPrefix(s, `{"key0000":0,"key0001":1,`) || !strings.HasSuffix(s, middleware.Marker(dropped)) {
		t.Errorf("Cap = %.40q…, want the head of the JSON text and the marker", s)
	}
}

func TestStrings(t *testing.T) {
	big := strings.Repeat("o", mib)
	tests := []struct {
		name  string
		in    []string
		limit int
		want  func(t *testing.T, got []string)
	}{
		{
			name: "short stderr survives a 1 MiB stdout", in: []string{big, "error: boom"}, limit: 16384,
			want: func(t *testing.T, got []string) {
				if got[1] != "error: boom" {
					t.Errorf("stderr = %q, want it whole", got[1])
				}
				if want := 16384 - len("error: boom"); len(got[0]) != want {
					t.Errorf("stdout kept %d bytes, want the rest of the budget, %d", len(got[0]), want)
				}
			},
		},
		{
			name: "two long ones share equally", in: []string{big, big}, limit: 16384,
			want: func(t *testing.T, got []string) {
				if len(got[0]) != 8192 || len(got[1]) != 8192 {
					t.Errorf("lengths %d and %d, want 8192 each", len(got[0]), len(got[1]))
				}
			},
		},
		{
			name: "too many for a marker each: in order", in: strings.Split(strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz,", 100), ","), limit: 500,
			want: func(t *testing.T, got []string) {
				if !strings.HasSuffix(got[7], "refine your query]") || got[8] != "" || len(got[6]) != 62 {
					t.Errorf("got[7] = %q, got[8] = %q: want seven whole, the eighth cut with the marker and the rest empty", got[7], got[8])
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, dropped := capvalue.Strings(tt.in, tt.limit)
			total, in := 0, 0
			for i := range got {
				total += len(got[i])
				in += len(tt.in[i])
			}
			if total > tt.limit {
				t.Errorf("total %d bytes, over the limit %d", total, tt.limit)
			}
			if dropped == 0 {
				t.Errorf("dropped nothing")
			}
			tt.want(t, got)
		})
	}
}
