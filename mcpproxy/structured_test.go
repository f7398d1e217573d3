package mcpproxy_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
)

// structuredAnswer is what the tests read of a capped tools/call answer.
type structuredAnswer struct {
	Content []struct {
		Type string
		Text string
	}
	StructuredContent json.RawMessage
	IsError           bool
}

// callStructured lists the tool with schema as its output schema (none
// when empty), calls it, answers with structuredContent sc and a short
// text, and returns the client's answer.
func callStructured(t *testing.T, schema, sc string) structuredAnswer {
	t.Helper()
	s := newRawSession(t, mcpproxy.Options{})
	if schema != "" {
		s.toServer(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		s.atServer()
		s.toClient(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"rows","inputSchema":{"type":"object"},"outputSchema":` + schema + `}]}}`)
		s.atClient()
	}
	s.toServer(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"rows"}}`)
	s.atServer()
	s.toClient(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"ok"}],"structuredContent":` + sc + `}}`)
	var got struct {
		ID     int
		Result structuredAnswer
	}
	out := s.atClient()
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("the client's answer %.300q: %v", out, err)
	}
	if got.ID != 2 {
		t.Fatalf("answer to id %d, want 2", got.ID)
	}
	return got.Result
}

// rowsDoc returns {"rows":[...]} with n rows, and the rows' JSON.
func rowsDoc(n int) (string, []string) {
	rows := make([]string, n)
	for i := range rows {
		rows[i] = fmt.Sprintf(`{"id":%d,"name":"row-%07d","tags":["a","b"]}`, i, i)
	}
	return `{"rows":[` + strings.Join(rows, ",") + `]}`, rows
}

const rowsSchema = `{"type":"object","required":["rows"],"properties":{"rows":{"type":"array",` +
	`"items":{"type":"object","required":["id","name","tags"],"properties":{"id":{"type":"integer"},"name":{"type":"string"},"tags":{"type":"array"}}}}}}`

// TestRelayStructuredAnySize: a structuredContent of any size is cut to a
// prefix of whole rows that its schema accepts (issue 22, item 5: 150 k
// rows, 5.5 MB, became isError with structuredContent dropped, past a
// 4 MiB bound). The prefix is the same whatever the number of rows that
// follow it, and the note counts them all.
func TestRelayStructuredAnySize(t *testing.T) {
	var first json.RawMessage
	for _, n := range []int{50_000, 150_000, 400_000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			doc, rows := rowsDoc(n)
			got := callStructured(t, rowsSchema, doc)
			if got.IsError {
				t.Fatalf("isError; content %+v", got.Content)
			}
			if len(got.StructuredContent) > manifest.DefaultMaxBytes {
				t.Errorf("structuredContent of %d bytes, over the limit of %d", len(got.StructuredContent), manifest.DefaultMaxBytes)
			}
			var sc struct{ Rows []json.RawMessage }
			if err := json.Unmarshal(got.StructuredContent, &sc); err != nil {
				t.Fatalf("structuredContent %.200q: %v", got.StructuredContent, err)
			}
			if len(sc.Rows) == 0 || len(sc.Rows) >= n {
				t.Fatalf("kept %d of %d rows", len(sc.Rows), n)
			}
			for i, r := range sc.Rows {
				if string(r) != rows[i] {
					t.Fatalf("row %d = %s, want %s", i, r, rows[i])
				}
			}
			note := got.Content[len(got.Content)-1].Text
			t.Logf("%d rows (%d bytes): a success, structuredContent %d bytes, %d rows; note %q", n, len(doc), len(got.StructuredContent), len(sc.Rows), note)
			if want := fmt.Sprintf("kept %d of %d items of /rows", len(sc.Rows), n); !strings.Contains(note, want) {
				t.Errorf("note %q does not say %q", note, want)
			}
			if first == nil {
				first = got.StructuredContent
			} else if diff := cmp.Diff(string(first), string(got.StructuredContent)); diff != "" {
				t.Errorf("the prefix depends on the rows after it (-%d rows +%d rows):\n%s", 50_000, n, diff)
			}
		})
	}
}

// TestRelayStructuredNoneFits: when no prefix fits the schema, whatever the
// size, the result becomes an error whose note says what the client can
// do.
func TestRelayStructuredNoneFits(t *testing.T) {
	schema := `{"type":"object","required":["rows"],"properties":{"rows":{"type":"array","minItems":1000}}}`
	for _, n := range []int{1_000, 150_000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			doc, _ := rowsDoc(n)
			got := callStructured(t, schema, doc)
			if !got.IsError || got.StructuredContent != nil {
				t.Fatalf("isError %v, structuredContent %.100q; want an error without it", got.IsError, got.StructuredContent)
			}
			want := shape.StructuredDropped(manifest.DefaultMaxBytes).Long
			if note := got.Content[len(got.Content)-1].Text; note != want {
				t.Errorf("note %q, want %q", note, want)
			}
		})
	}
}

// TestRelayStructuredAsIfWhole: the proxy, which holds only what a cut can
// keep of a structuredContent, cuts it exactly as [shape.JSON] cuts the
// whole value: same value, same note.
func TestRelayStructuredAsIfWhole(t *testing.T) {
	ints := func(n int) string {
		var b strings.Builder
		b.WriteByte('[')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(i))
		}
		b.WriteByte(']')
		return b.String()
	}
	objs := func(n, from int) string {
		var b strings.Builder
		b.WriteByte('{')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"k%d":{"v":%d,"s":"x/~y"}`, i+from, i)
		}
		b.WriteByte('}')
		return b.String()
	}
	members := func(n, each int) string {
		var b strings.Builder
		b.WriteByte('{')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"m%d":%s`, i, ints(each*(i%3+1)))
		}
		b.WriteByte('}')
		return b.String()
	}
	nested := func(depth int, inner string) string {
		return strings.Repeat("[", depth) + inner + strings.Repeat("]", depth)
	}
	for _, tc := range []struct{ name, doc string }{
		{"root array", ints(200_000)},
		{"root array of objects", `[` + strings.Repeat(`{"a":[1,2,3],"b":"bb"},`, 50_000) + `{}]`},
		{"members of different sizes", `{"small":[1,2,3],"big":` + ints(100_000) + `,"s":"short","objs":` + objs(20_000, 0) + `}`},
		{"nested object", `{"meta":{"items":` + objs(60_000, 0) + `,"n":1}}`},
		{"keys to escape", `{"a/b":{"c~d":` + ints(100_000) + `}}`},
		{"many members", members(300, 200)},
		{"deep", nested(40, ints(100_000))},
		{"first element over the limit", `{"rows":[` + ints(100_000) + `,[1]]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !json.Valid([]byte(tc.doc)) {
				t.Fatalf("the test's document is not JSON")
			}
			want, ok := shape.JSON([]byte(tc.doc), shape.Bytes(manifest.DefaultMaxBytes), nil)
			if !ok {
				t.Fatalf("shape.JSON found no form that fits")
			}
			got := callStructured(t, "", tc.doc)
			if diff := cmp.Diff(string(want.Raw), string(got.StructuredContent)); diff != "" {
				t.Errorf("structuredContent (-shape.JSON of the whole value +proxy):\n%s", diff)
			}
			note := got.Content[len(got.Content)-1].Text
			if note != want.Note.Long && note != want.Note.Short {
				t.Errorf("note %q, want %q", note, want.Note.Long)
			}
		})
	}
}

// TestRelayStructuredLongStrings: strings longer than the proxy holds and
// an array it holds only the head of, in one value: the cut is valid JSON
// within the limit, each cut string's marker counts its bytes exactly, and
// the note counts every element of the array.
func TestRelayStructuredLongStrings(t *testing.T) {
	text := strings.Repeat("é日x", 40_000)
	var list strings.Builder
	for i := range 50_000 {
		fmt.Fprintf(&list, ",%d", i)
	}
	doc := `{"text":"` + text + `","list":["` + text + `","` + text + `"` + list.String() + `]}`
	got := callStructured(t, "", doc)
	if len(got.StructuredContent) > manifest.DefaultMaxBytes {
		t.Errorf("structuredContent of %d bytes, over the limit", len(got.StructuredContent))
	}
	var sc struct {
		Text string
		List []any
	}
	if err := json.Unmarshal(got.StructuredContent, &sc); err != nil {
		t.Fatalf("structuredContent %.200q: %v", got.StructuredContent, err)
	}
	for i, s := range append([]string{sc.Text}, fmt.Sprint(sc.List[0])) {
		m := markerRE.FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("string %d has no marker: ...%q", i, s[max(0, len(s)-80):])
		}
		kept := strings.TrimSuffix(s, m[0])
		if !strings.HasPrefix(text, kept) || m[1] != strconv.Itoa(len(text)-len(kept)) {
			t.Errorf("string %d: marker says %s dropped, want %d", i, m[1], len(text)-len(kept))
		}
	}
	note := got.Content[len(got.Content)-1].Text
	if want := fmt.Sprintf("kept %d of 50002 items of /list", len(sc.List)); !strings.Contains(note, want) {
		t.Errorf("note %q does not say %q", note, want)
	}
}

// TestRelayStructuredManyLongMembers: a root object of many long strings,
// each held only as far as its share of the limit can reach: every member
// is kept, cut, its marker exact, and the value within the limit.
func TestRelayStructuredManyLongMembers(t *testing.T) {
	text := strings.Repeat("abc\u00e9", 5_000)
	var b strings.Builder
	b.WriteByte('{')
	const n = 100
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"m%d":"%s"`, i, text)
	}
	b.WriteByte('}')
	got := callStructured(t, "", b.String())
	if len(got.StructuredContent) > manifest.DefaultMaxBytes {
		t.Errorf("structuredContent of %d bytes, over the limit", len(got.StructuredContent))
	}
	var sc map[string]string
	if err := json.Unmarshal(got.StructuredContent, &sc); err != nil {
		t.Fatalf("structuredContent %.200q: %v", got.StructuredContent, err)
	}
	if len(sc) != n {
		t.Fatalf("%d members, want %d", len(sc), n)
	}
	for k, s := range sc {
		m := markerRE.FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("member %s has no marker: %q", k, s)
		}
		kept := strings.TrimSuffix(s, m[0])
		if !strings.HasPrefix(text, kept) || m[1] != strconv.Itoa(len(text)-len(kept)) {
			t.Errorf("member %s: marker says %s dropped, want %d", k, m[1], len(text)-len(kept))
		}
	}
}
