package wire_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/wire"
)

// SplitObject gives each member's value as written, the last of a name
// given twice, and checks the object's own syntax but only the ends of
// its values; SplitArray likewise.
func TestSplit(t *testing.T) {
	obj, err := wire.SplitObject([]byte(" {\"a\" :\n[1,{\"b\":\"]}\\\"\"}] , \"c\\u00e9\":-0.5e+3,\"a\":true,\"d\":{\"x\":nul}}\t"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for k, v := range obj {
		got[k] = string(v)
	}
	want := map[string]string{"a": "true", "cé": "-0.5e+3", "d": `{"x":nul}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SplitObject (-want +got):\n%s", diff)
	}
	elems, err := wire.SplitArray([]byte(`[ "x" ,{"a":[]},null,[[]] ]`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{`"x"`, `{"a":[]}`, `null`, `[[]]`}, stringsOf(elems)); diff != "" {
		t.Errorf("SplitArray (-want +got):\n%s", diff)
	}
	if elems, err := wire.SplitArray([]byte(`[]`)); err != nil || elems == nil || len(elems) != 0 {
		t.Errorf("SplitArray([]) = %v, %v; want an empty slice", elems, err)
	}
	for _, in := range []string{``, `[]`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1}x`, `{"a":"b}`, `{"a":[1}`, `{"a":01}`, `{"\x":1}`, `{a:1}`} {
		if _, err := wire.SplitObject([]byte(in)); err == nil {
			t.Errorf("SplitObject(%q): no error", in)
		}
	}
	for _, in := range []string{`{}`, `[`, `[1,]`, `[1 2]`, `[tru]`, `[1]]`} {
		if _, err := wire.SplitArray([]byte(in)); err == nil {
			t.Errorf("SplitArray(%q): no error", in)
		}
	}
}

func stringsOf(raws []json.RawMessage) []string {
	s := make([]string, len(raws))
	for i, r := range raws {
		s[i] = string(r)
	}
	return s
}

// FuzzLiteral: a Literal, given a literal's bytes one at a time, is valid
// exactly when encoding/json finds them valid JSON; ValueEnd ends it at
// the first delimiter.
func FuzzLiteral(f *testing.F) {
	for _, s := range []string{`true`, `false`, `null`, `nul`, `truex`, `0`, `-0`, `01`, `-`, `1.`, `1.5`, `.5`, `1e5`, `1E+5`, `1e`, `1e+`, `-1.5e-07`, `1.5.2`, `+1`, `0x1`, `1-2`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 0 && bytes.IndexByte([]byte(`"{[`), data[0]) >= 0 {
			return // a string or a container: no literal
		}
		end := len(data)
		for i, c := range data {
			if wire.EndsLiteral(c) {
				end = i
				break
			}
		}
		var l wire.Literal
		for _, c := range data[:end] {
			l.Add(c)
		}
		valid := end > 0 && json.Valid(data[:end])
		if l.Valid() != valid {
			t.Fatalf("Literal(%q).Valid() = %v, json.Valid %v", data[:end], l.Valid(), valid)
		}
		if got, err := wire.ValueEnd(data, 0); (err == nil) != valid || err == nil && got != end {
			t.Errorf("ValueEnd(%q) = %d, %v; want %d, valid %v", data, got, err, end, valid)
		}
	})
}
