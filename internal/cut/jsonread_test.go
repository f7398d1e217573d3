package cut_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolcap/toolcap/internal/cut"
)

// lastCutStringByTokens is cut.LastCutString by decoding every token of
// doc: the plain reading of its contract, to compare with.
func lastCutStringByTokens(doc []byte) (cut.CutString, bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	var found cut.CutString
	ok := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return found, ok
		}
		s, isString := tok.(string)
		if !isString {
			continue
		}
		at := int(dec.InputOffset())
		if rest := bytes.TrimLeft(doc[at:], " \t\r\n"); len(rest) > 0 && rest[0] == ':' {
			continue // a key
		}
		ms := cut.FindMarkers(s)
		if len(ms) == 0 {
			continue
		}
		if m := ms[len(ms)-1]; m.End == len(s) && m.Rest == nil && m.Unit == cut.UnitBytes && strings.HasPrefix(s[m.Start:], "\n") {
			found, ok = cut.CutString{End: at, Kept: s[:m.Start]}, true
		}
	}
}

func TestLastCutString(t *testing.T) {
	m := func(n string) string { return `\n[truncated: ` + n + ` bytes dropped, refine your query]` }
	tests := []struct {
		name string
		doc  string
		want string // Kept, or "-" for none
	}{
		{"one", `{"a":"xy` + m("5") + `"}`, "xy"},
		{"the last of two", `["ab` + m("5") + `","cd` + m("7") + `"]`, "cd"},
		{"a key is not a value", `{"ab` + m("5") + `":1}`, "-"},
		{"a key, spaces before its colon", `{"ab` + m("5") + `" :1}`, "-"},
		{"a value after a key that looks cut", `{"ab` + m("5") + `":"c` + m("9") + `"}`, "c"},
		{"an escaped backslash before n", `["ab\\n[truncated: 5 bytes dropped, refine your query]"]`, "-"},
		{"escaped text kept", `["a\"b\\` + m("5") + `"]`, `a"b\`},
		{"a marker that names a read", `["ab\n[truncated: 5 bytes dropped, refine your query or read the rest: r {}]"]`, "-"},
		{"tokens", `["ab\n[truncated: 5 tokens dropped, refine your query]"]`, "-"},
		{"a marker mid-string", `["ab` + m("5") + ` more"]`, "-"},
		{"none", `{"a":[1,2,3]}`, "-"},
		{"nothing kept", `["` + m("12") + `"]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !json.Valid([]byte(tt.doc)) {
				t.Fatalf("test document is not JSON: %s", tt.doc)
			}
			got, ok := cut.LastCutString([]byte(tt.doc))
			want, wantOK := lastCutStringByTokens([]byte(tt.doc))
			if diff := cmp.Diff(want, got); diff != "" || ok != wantOK {
				t.Errorf("LastCutString(%s) = %v (-by tokens +got):\n%s", tt.doc, ok, diff)
			}
			gotKept := "-"
			if ok {
				gotKept = got.Kept
			}
			if diff := cmp.Diff(tt.want, gotKept); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAddReadInJSON(t *testing.T) {
	doc := []byte(`{"a":"xy\n[truncated: 5 bytes dropped, refine your query]","b":1}`)
	s, ok := cut.LastCutString(doc)
	if !ok {
		t.Fatal("no cut string")
	}
	r := cut.Rest{Tool: "read", Args: `{"path":"/tmp/a \"b\"\n.txt","offset":2}`}
	read := cut.JSONRead(r)
	out := cut.AddReadInJSON(doc, s, read)
	var v struct{ A string }
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("not JSON after the read was added: %v\n%s", err, out)
	}
	want := "xy" + cut.RestMarker(5, cut.UnitBytes, r)
	if diff := cmp.Diff(want, v.A); diff != "" {
		t.Errorf("the string with the read (-want +got):\n%s", diff)
	}
	if !bytes.HasSuffix(out, []byte(`,"b":1}`)) || len(out) != len(doc)+len(read) {
		t.Errorf("AddReadInJSON changed more than the marker: %s", out)
	}
}

func TestInJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote`, `back\slash`, "nl\n\t\x00", "<&>", "é\u2028"} {
		enc, _ := json.Marshal(s)
		var back string
		if err := json.Unmarshal([]byte(`"`+cut.InJSONString(s)+`"`), &back); err != nil || back != s {
			t.Errorf("InJSONString(%q) = %q: decodes to %q, %v (json.Marshal: %s)", s, cut.InJSONString(s), back, err, enc)
		}
	}
}

// FuzzLastCutString checks LastCutString against the decoding of every
// token, on documents a JSON cut made and on any valid JSON.
func FuzzLastCutString(f *testing.F) {
	f.Add(`{"a":"hello world, a long text to cut","b":["x","yy"]}`, 30)
	f.Add(`["a\\n[truncated: 1 bytes dropped, refine your query]"]`, 100)
	f.Add(`{"k\n[truncated: 2 bytes dropped, refine your query]":"v\n[truncated: 3 bytes dropped, refine your query]"}`, 1000)
	f.Fuzz(func(t *testing.T, doc string, limit int) {
		if !json.Valid([]byte(doc)) {
			return
		}
		docs := [][]byte{[]byte(doc)}
		if limit > 1 && limit < 1<<20 {
			if out, _, ok := cut.JSONValue([]byte(doc), limit); ok {
				docs = append(docs, out)
			}
		}
		for _, d := range docs {
			got, ok := cut.LastCutString(d)
			want, wantOK := lastCutStringByTokens(d)
			if diff := cmp.Diff(want, got); diff != "" || ok != wantOK {
				t.Errorf("LastCutString(%q) = %v, by tokens %v (-by tokens +got):\n%s", d, ok, wantOK, diff)
			}
		}
	})
}
