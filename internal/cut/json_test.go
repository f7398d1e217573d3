package cut_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/cut"
)

// goroot returns the Go tree the tests read real documents from.
func goroot(t testing.TB) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// realDocuments returns JSON documents of 100 KB to several MB: files of
// the Go tree (an npm package-lock.json among them, and encoding/json's 1.9
// MB benchmark document) and a generated package-lock.json of about 3 MB.
func realDocuments(t testing.TB) map[string]string {
	root := goroot(t)
	docs := map[string]string{}
	for _, p := range []string{
		"src/cmd/vendor/golang.org/x/telemetry/package-lock.json",
		"src/cmd/vendor/golang.org/x/arch/arm64/arm64asm/inst.json",
		"src/crypto/x509/testdata/nist-pkits/vectors.json",
	} {
		data, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Logf("skipping %s: %v", p, err)
			continue
		}
		docs[filepath.Base(p)] = string(data)
	}
	if f, err := os.Open(filepath.Join(root, "src/encoding/json/testdata/code.json.gz")); err == nil {
		zr, err := gzip.NewReader(f)
		if err == nil {
			data, err := io.ReadAll(zr)
			if err == nil {
				docs["code.json"] = string(data)
			}
		}
		f.Close()
	}
	docs["generated package-lock.json"] = packageLock(12000)
	return docs
}

// packageLock returns an npm package-lock.json of n packages, indented as
// npm writes it.
func packageLock(n int) string {
	pkgs := map[string]any{"": map[string]any{"name": "app", "version": "1.0.0"}}
	for i := range n {
		name := fmt.Sprintf("node_modules/pkg-%05d", i)
		pkgs[name] = map[string]any{
			"version":   fmt.Sprintf("%d.%d.%d", i%7, i%13, i%29),
			"resolved":  fmt.Sprintf("https://registry.npmjs.org/pkg-%05d/-/pkg-%05d-1.0.0.tgz", i, i),
			"integrity": "sha512-" + strings.Repeat("Ab9+", 20) + "==",
			"dev":       i%3 == 0,
			"license":   "MIT",
			"dependencies": map[string]string{
				fmt.Sprintf("pkg-%05d", (i+1)%n): "^1.0.0",
			},
		}
	}
	doc := map[string]any{"name": "app", "version": "1.0.0", "lockfileVersion": 3, "requires": true, "packages": pkgs}
	data, _ := json.MarshalIndent(doc, "", "  ")
	return string(data)
}

// keys returns the object keys of a JSON document in document order.
func keys(t testing.TB, doc string) []string {
	dec := json.NewDecoder(strings.NewReader(doc))
	var out []string
	// In an object, every other string at its level is a key.
	type level struct{ object, key bool }
	var stack []level
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("decoding: %v", err)
		}
		top := len(stack) - 1
		isKey := top >= 0 && stack[top].object && stack[top].key
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				if top >= 0 && stack[top].object {
					stack[top].key = true
				}
				stack = append(stack, level{object: v == '{', key: true})
				continue
			}
			stack = stack[:top]
			continue
		case string:
			if isKey {
				out = append(out, v)
				stack[top].key = false
				continue
			}
		}
		if top >= 0 && stack[top].object {
			stack[top].key = true
		}
	}
}

func TestJSONRealDocuments(t *testing.T) {
	for name, doc := range realDocuments(t) {
		if len(doc) < 100<<10 {
			t.Errorf("%s: %d bytes, want at least 100 KB", name, len(doc))
		}
		inKeys := keys(t, doc)
		for _, limit := range []int{128, 1000, 16384, 65536} {
			t.Run(fmt.Sprintf("%s/%d", name, limit), func(t *testing.T) {
				spec := cut.Spec{Keep: cut.KeepJSON}
				out, st := cut.Cut(doc, limit, spec)
				if msg := check(doc, limit, spec, out, st); msg != "" {
					t.Fatal(msg)
				}
				if st.Strategy != cut.KeepJSON {
					t.Fatalf("cut with %q, want json", st.Strategy)
				}
				part, _, _ := splitDocument(out, st)
				got := keys(t, part)
				if len(got) > len(inKeys) || !slicesEqual(got, inKeys[:len(got)]) {
					t.Errorf("keys of the output are not a prefix of the input's keys, in order")
				}
				if len(st.Levels) == 0 || st.Levels[0].Pointer != "" {
					t.Errorf("levels %+v: want the root first", st.Levels)
				}
				if limit >= 16384 && len(out) < limit*9/10 {
					t.Errorf("output of %d bytes at limit %d: the cut kept too little", len(out), limit)
				}
				v, vst, ok := cut.JSONValue([]byte(doc), limit)
				if !ok || len(v) > limit || !json.Valid(v) {
					t.Fatalf("JSONValue: ok %v, %d bytes, valid %v", ok, len(v), json.Valid(v))
				}
				if vst.Dropped != len(doc)-len(v) {
					t.Errorf("JSONValue dropped %d, want %d", vst.Dropped, len(doc)-len(v))
				}
			})
		}
	}
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestJSON(t *testing.T) {
	spec := cut.Spec{Keep: cut.KeepJSON}
	tests := []struct {
		name  string
		in    string
		limit int
		want  string
		st    cut.Stats
	}{
		{"fits: unchanged, whitespace kept", `{ "a": 1 }`, 10, `{ "a": 1 }`, cut.Stats{Original: 10, Kept: 10}},
		{"compacting alone fits", "{\n  \"a\": [1, 2, 3],\n  \"b\": \"x y\"\n}", 30, `{"a":[1,2,3],"b":"x y"}`,
			cut.Stats{Original: 34, Kept: 34, Strategy: cut.KeepJSON, Compacted: true}},
		{"array keeps whole elements", `[` + strings.Repeat(`"abcdefghij",`, 20) + `"z"]`, 120,
			`["abcdefghij","abcdefghij","abcdefghij","abcdefghij","abcdefghij"]` + "\n[truncated: 199 bytes dropped, refine your query]",
			cut.Stats{Original: 265, Kept: 66, Dropped: 199, Strategy: cut.KeepJSON,
				Levels: []cut.Level{{Pointer: "", Array: true, Kept: 5, Total: 21}}}},
		{"object keeps key order, cuts a long string", `{"z":1,"a":"` + strings.Repeat("x", 300) + `","m":2}`, 150,
			`{"z":1,"a":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n[truncated: 265 bytes dropped, refine your query]"}` + "\n[truncated: 220 bytes dropped, refine your query]",
			cut.Stats{Original: 320, Kept: 100, Dropped: 220, Strategy: cut.KeepJSON,
				Levels: []cut.Level{{Pointer: "", Kept: 2, Total: 3}}}},
		{"nested: the first element of an array is cut when it alone is too long",
			`[{"entities":[` + strings.Repeat(`{"n":"e"},`, 30) + `{"n":"last"}],"relations":[1,2]}]`, 150,
			`[{"entities":[{"n":"e"},{"n":"e"},{"n":"e"},{"n":"e"},{"n":"e"},{"n":"e"},{"n":"e"},{"n":"e"}]}]` + "\n[truncated: 251 bytes dropped, refine your query]",
			cut.Stats{Original: 347, Kept: 96, Dropped: 251, Strategy: cut.KeepJSON, Levels: []cut.Level{
				{Pointer: "", Array: true, Kept: 1, Total: 1},
				{Pointer: "/0", Kept: 1, Total: 2},
				{Pointer: "/0/entities", Array: true, Kept: 8, Total: 31},
			}}},
		{"escapes are never split", `["` + strings.Repeat(`\u00e9`, 100) + `"]`, 160,
			`["\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\n[truncated: 546 bytes dropped, refine your query]"]` + "\n[truncated: 495 bytes dropped, refine your query]",
			cut.Stats{Original: 604, Kept: 109, Dropped: 495, Strategy: cut.KeepJSON,
				Levels: []cut.Level{{Pointer: "", Array: true, Kept: 1, Total: 1}}}},
		{"not JSON: the text fallback", `{"a": ` + strings.Repeat("x", 200), 100,
			`{"a": xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx` + "\n[truncated: 156 bytes dropped, refine your query]",
			cut.Stats{Original: 206, Kept: 50, Dropped: 156, Strategy: cut.KeepHead}},
		{"a root number too long: the text fallback", strings.Repeat("1", 300), 100,
			strings.Repeat("1", 50) + "\n[truncated: 250 bytes dropped, refine your query]",
			cut.Stats{Original: 300, Kept: 50, Dropped: 250, Strategy: cut.KeepHead}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, st := cut.Cut(tt.in, tt.limit, spec)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Cut() mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.st, st); diff != "" {
				t.Errorf("Cut() figures mismatch (-want +got):\n%s", diff)
			}
			if msg := check(tt.in, tt.limit, spec, got, st); msg != "" {
				t.Error(msg)
			}
		})
	}
}

func TestJSONValue(t *testing.T) {
	doc := []byte(`{"entities":[` + strings.Repeat(`{"name":"n","type":"t"},`, 399) + `{"name":"n","type":"t"}],"relations":[` +
		strings.Repeat(`{"from":"a","to":"b"},`, 399) + `{"from":"a","to":"b"}]}`)
	out, st, ok := cut.JSONValue(doc, 1000)
	if !ok || !json.Valid(out) || len(out) > 1000 {
		t.Fatalf("JSONValue: ok %v, valid %v, %d bytes", ok, json.Valid(out), len(out))
	}
	want := []cut.Level{{Pointer: "", Kept: 1, Total: 2}, {Pointer: "/entities", Array: true, Kept: 41, Total: 400}}
	if diff := cmp.Diff(want, st.Levels); diff != "" {
		t.Errorf("levels mismatch (-want +got):\n%s", diff)
	}
	if _, _, ok := cut.JSONValue([]byte(`{"a":`), 1000); ok {
		t.Error("invalid JSON: ok")
	}
	if _, _, ok := cut.JSONValue(doc, 1); ok {
		t.Error("limit 1: ok")
	}
	if out, _, ok := cut.JSONValue([]byte(" [1] "), 5); !ok || !bytes.Equal(out, []byte(" [1] ")) {
		t.Errorf("within the limit: %q, %v; want it unchanged", out, ok)
	}
}

func jsonValid(b []byte) bool { return json.Valid(b) }
