package rest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/tokens"
)

// fileText is about n bytes of text with what JSON escapes (quotes,
// backslashes, newlines, tabs) and multi-byte characters, so that a
// string's head as written and as decoded differ in length.
func fileText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%d\t\"quoted\" C:\\path\\to é 日本 %s\n", i, strings.Repeat("x", i%13))
	}
	return b.String()
}

// mustJSON returns v as JSON.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodedStrings returns every string value of the JSON document doc,
// decoded, in no particular order.
func decodedStrings(t *testing.T, doc []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("not valid JSON: %v: %s", err, clip(string(doc)))
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// restMarker returns the one marker naming a read in the strings of doc,
// and the string it ends.
func restMarker(t *testing.T, doc []byte) (cut.Found, string) {
	t.Helper()
	var found []cut.Found
	var in []string
	for _, s := range decodedStrings(t, doc) {
		for _, m := range cut.FindMarkers(s) {
			if m.Rest != nil {
				found, in = append(found, m), append(in, s)
			}
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d markers naming a read, want 1: %s", len(found), clip(string(doc)))
	}
	return found[0], in[0]
}

// noRead fails when a string of doc has a marker naming a read.
func noRead(t *testing.T, doc []byte) {
	t.Helper()
	for _, s := range decodedStrings(t, doc) {
		for _, m := range cut.FindMarkers(s) {
			if m.Rest != nil {
				t.Errorf("a marker names a read: %q", s[m.Start:m.End])
			}
		}
	}
}

// schemaMaxLength is a check of an output schema that allows the string
// member key at most n bytes.
func schemaMaxLength(key string, n int) func(any) error {
	return func(v any) error {
		o, ok := v.(map[string]any)
		if !ok {
			return errors.New("not an object")
		}
		s, ok := o[key].(string)
		if !ok {
			return fmt.Errorf("%s: not a string", key)
		}
		if len(s) > n {
			return fmt.Errorf("%s: %d bytes, over maxLength %d", key, len(s), n)
		}
		return nil
	}
}

// schemaNoBraces is a check of an output schema whose pattern allows the
// string member key no braces (^[^{}]*$).
func schemaNoBraces(key string) func(any) error {
	return func(v any) error {
		o, ok := v.(map[string]any)
		if !ok {
			return errors.New("not an object")
		}
		s, ok := o[key].(string)
		if !ok {
			return fmt.Errorf("%s: not a string", key)
		}
		if strings.ContainsAny(s, "{}") {
			return fmt.Errorf("%s: does not match ^[^{}]*$", key)
		}
		return nil
	}
}

func TestJSONKeptNamesTheRead(t *testing.T) {
	text := fileText(80000)
	mirrored := map[string]any{"content": text}
	// A spec-style server: the text is the structured value as JSON.
	specValue := map[string]any{"path": "/tmp/f.txt", "size": len(text), "content": text}
	spec := string(mustJSON(t, specValue))
	// A value whose cut drops elements and shortens a string: a note.
	many := make([]string, 3000)
	for i := range many {
		many[i] = fmt.Sprintf("entry %d", i)
	}
	both := map[string]any{"entries": many, "content": text}
	bytesOnly := shape.Policy{MaxBytes: 16384, KeepRest: true}
	tests := []struct {
		name     string
		text     string // the text kept
		value    any    // the structured value
		prefix   string // what the caller holds of the text's start
		p        shape.Policy
		valid    func(any) error
		fromHead bool // the read starts where the string's head ends; else 0
		wantNote bool // a container lost elements
	}{
		{name: "mirrored", text: text, value: mirrored, prefix: text, p: bytesOnly, fromHead: true},
		{name: "mirrored, a held head", text: text, value: mirrored, prefix: text[:20000], p: bytesOnly, fromHead: true},
		{name: "mirrored, a held head shorter than the string's", text: text, value: mirrored, prefix: text[:1000], p: bytesOnly},
		{name: "mirrored, small", text: text, value: mirrored, prefix: text, p: shape.Policy{MaxBytes: 300, KeepRest: true}, fromHead: true},
		{name: "mirrored, tokens", text: text, value: mirrored, prefix: text, p: shape.Policy{MaxBytes: 16384, MaxTokens: 1500, Counter: tokens.NewCalibrated(), KeepRest: true}, fromHead: true},
		{name: "mirrored, a schema it passes", text: text, value: mirrored, prefix: text, p: bytesOnly, valid: schemaMaxLength("content", 16384), fromHead: true},
		{name: "spec-style", text: spec, value: specValue, prefix: spec, p: bytesOnly},
		{name: "spec-style, tokens", text: spec, value: specValue, prefix: spec, p: shape.Policy{MaxBytes: 16384, MaxTokens: 2000, Counter: tokens.NewCalibrated(), KeepRest: true}},
		{name: "elements and a string", text: text, value: both, prefix: text, p: bytesOnly, fromHead: true, wantNote: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newKeeper(t, rest.Config{})
			ctx := rest.WithScope(context.Background(), "s1")
			_, tr, _ := k.Text(ctx, tt.text, tt.p)
			if tr.Ref == "" {
				t.Fatal("the text's rest was not kept")
			}
			raw := mustJSON(t, tt.value)
			cutAt := func(q shape.Policy) (shape.Structured, bool) { return shape.JSON(raw, q, tt.valid) }
			sc, ok := k.JSONKept(raw, tt.p, tr.Ref, tt.prefix, len(tt.text), tt.valid, cutAt)
			if !ok || !sc.Cut {
				t.Fatalf("ok %v, cut %v", ok, sc.Cut)
			}
			if len(sc.Raw) > tt.p.MaxBytes {
				t.Errorf("%d bytes, over the limit %d", len(sc.Raw), tt.p.MaxBytes)
			}
			if tt.p.HoldsTokens() {
				if n := tt.p.Counter.Count(string(sc.Raw)); n > tt.p.MaxTokens {
					t.Errorf("%d tokens, over the limit %d", n, tt.p.MaxTokens)
				}
			}
			if tt.valid != nil {
				var v any
				if err := json.Unmarshal(sc.Raw, &v); err != nil || tt.valid(v) != nil {
					t.Errorf("the result fails the schema: %v %v", err, tt.valid(v))
				}
			}
			m, s := restMarker(t, sc.Raw)
			head := s[:m.Start]
			if m.End != len(s) || m.Rest.Tool != k.Tool() {
				t.Errorf("marker %q, want one ending its string naming %s", s[m.Start:m.End], k.Tool())
			}
			a, err := rest.ParseReadArgs(json.RawMessage(m.Rest.Args))
			if err != nil {
				t.Fatalf("marker args %s: %v", m.Rest.Args, err)
			}
			want := rest.ReadArgs{Ref: tr.Ref}
			if tt.fromHead {
				want.Offset = int64(len(head))
			}
			if diff := cmp.Diff(want, a); diff != "" {
				t.Errorf("marker args (-want +got):\n%s", diff)
			}
			if tt.fromHead && !strings.HasPrefix(tt.text, head) {
				t.Errorf("the string's head is not the text's start")
			}
			// The marker counts what its read returns, from its offset to
			// the end of the kept text (issue 41: it counted the string's
			// dropped bytes as written, escapes and all).
			var read strings.Builder
			for next := a; ; {
				page, err := k.Read(ctx, mustJSON(t, next), shape.Policy{MaxBytes: 1 << 20})
				if err != nil {
					t.Fatalf("read %+v: %v", next, err)
				}
				ms := cut.FindMarkers(page)
				if len(ms) == 0 || ms[len(ms)-1].Rest == nil {
					read.WriteString(page)
					break
				}
				read.WriteString(page[:ms[len(ms)-1].Start])
				next, _ = rest.ParseReadArgs(json.RawMessage(ms[len(ms)-1].Rest.Args))
			}
			if m.N != read.Len() || m.N != len(tt.text)-int(a.Offset) {
				t.Errorf("marker N %d; a read from its offset %d to the end returns %d bytes (text %d)", m.N, a.Offset, read.Len(), len(tt.text))
			}
			f := sc.Figures
			if f.Ref != tr.Ref || f.Resume != int(a.Offset) {
				t.Errorf("figures ref %q resume %d, want %q %d", f.Ref, f.Resume, tr.Ref, a.Offset)
			}
			if f.KeptBytes != len(sc.Raw) || f.DroppedBytes != f.OriginalBytes-f.KeptBytes || f.OriginalBytes != len(raw) {
				t.Errorf("figures original %d kept %d dropped %d, want %d %d %d", f.OriginalBytes, f.KeptBytes, f.DroppedBytes, len(raw), len(sc.Raw), len(raw)-len(sc.Raw))
			}
			if f.Limit != tt.p.MaxBytes {
				t.Errorf("figures limit %d, want %d", f.Limit, tt.p.MaxBytes)
			}
			if (sc.Note.Long != "") != tt.wantNote {
				t.Errorf("note %q, want one: %v", sc.Note.Long, tt.wantNote)
			}
			if sc.Note.Long != "" && !strings.Contains(sc.Note.Long, fmt.Sprintf("limit of %d bytes", tt.p.MaxBytes)) {
				t.Errorf("the note names another limit than %d: %s", tt.p.MaxBytes, sc.Note.Long)
			}
			// The read goes on from there, byte for byte.
			page, err := k.Read(ctx, json.RawMessage(m.Rest.Args), shape.Policy{MaxBytes: 4096})
			if err != nil {
				t.Fatal(err)
			}
			if pm := cut.FindMarkers(page); len(pm) > 0 {
				page = page[:pm[len(pm)-1].Start]
			}
			if at := int(a.Offset); page == "" || !strings.HasPrefix(tt.text[at:], page) {
				t.Errorf("the read from %d is not the text from there: %q", at, clip(page))
			}
		})
	}
}

func TestJSONKeptPlain(t *testing.T) {
	text := fileText(80000)
	raw := mustJSON(t, map[string]any{"content": text})
	many := make([]string, 5000)
	for i := range many {
		many[i] = fmt.Sprintf("e%d", i)
	}
	elements := mustJSON(t, map[string]any{"entries": many})
	small := mustJSON(t, map[string]any{"content": "short"})
	bytesOnly := shape.Policy{MaxBytes: 16384, KeepRest: true}
	tests := []struct {
		name  string
		raw   []byte
		p     shape.Policy
		ref   func(k *rest.Keeper) string
		valid func(any) error
	}{
		{name: "too small a limit", raw: raw, p: shape.Policy{MaxBytes: 110, KeepRest: true}},
		{name: "not keeping the rest", raw: raw, p: shape.Policy{MaxBytes: 16384}},
		{name: "not a ref", raw: raw, p: bytesOnly, ref: func(*rest.Keeper) string { return "nope" }},
		{name: "only elements dropped", raw: elements, p: bytesOnly},
		{name: "within the limit", raw: small, p: bytesOnly},
		// The plain cut passes a schema that the read's arguments break.
		{name: "a schema the read breaks", raw: raw, p: bytesOnly, valid: schemaNoBraces("content")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newKeeper(t, rest.Config{})
			ctx := rest.WithScope(context.Background(), "s1")
			_, tr, _ := k.Text(ctx, text, shape.Policy{MaxBytes: 16384, KeepRest: true})
			ref := tr.Ref
			if tt.ref != nil {
				ref = tt.ref(k)
			}
			cutAt := func(q shape.Policy) (shape.Structured, bool) { return shape.JSON(tt.raw, q, tt.valid) }
			want, wantOK := cutAt(tt.p)
			got, ok := k.JSONKept(tt.raw, tt.p, ref, text, len(text), tt.valid, cutAt)
			if ok != wantOK {
				t.Fatalf("ok %v, want %v", ok, wantOK)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("JSONKept, want the plain cut (-want +got):\n%s", diff)
			}
			noRead(t, got.Raw)
		})
	}
}
