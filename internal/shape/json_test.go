package shape_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/shape"
)

// requires is a check of the kind an output schema makes: an object with
// these members.
func requires(keys ...string) func(any) error {
	return func(v any) error {
		m, ok := v.(map[string]any)
		if !ok {
			return errors.New("not an object")
		}
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				return fmt.Errorf("no %q", k)
			}
		}
		return nil
	}
}

// graph is a knowledge graph of n entities and n relations, as the MCP
// memory server's read_graph returns it.
func graph(n int) string {
	var e, r []string
	for i := range n {
		e = append(e, fmt.Sprintf(`{"name":"e%d","entityType":"t","observations":["a sentence long enough"]}`, i))
		r = append(r, fmt.Sprintf(`{"from":"e%d","to":"e%d","relationType":"knows"}`, i, i+1))
	}
	return `{"entities":[` + strings.Join(e, ",") + `],"relations":[` + strings.Join(r, ",") + `]}`
}

func TestJSON(t *testing.T) {
	long := strings.Repeat("x", 1000)
	onlyY := func(v any) error {
		if s, _ := v.(map[string]any)["content"].(string); strings.Trim(s, "y") != "" {
			return errors.New("content is not all y")
		}
		return nil
	}
	tests := []struct {
		name    string
		in      string
		limit   int
		valid   func(any) error
		want    string // "" when only checked
		wantCut bool
		wantOK  bool
	}{
		{name: "fits", in: `{"z":"short","a":3}`, limit: 200, want: `{"z":"short","a":3}`, wantOK: true},
		{name: "a string cut in place, key order kept", in: `{"z":1,"content":"` + long + `"}`, limit: 100,
			want: `{"z":1,"content":"` + strings.Repeat("x", 29) + `\n[truncated: 971 bytes dropped, refine your query]"}`, wantCut: true, wantOK: true},
		{name: "members share by WaterFill, the remainder to the earliest", in: `{"a":"` + long + `","b":"` + long + `"}`, limit: 200,
			want: `{"a":"` + strings.Repeat("x", 42) + `\n[truncated: 958 bytes dropped, refine your query]","b":"` +
				strings.Repeat("x", 41) + `\n[truncated: 959 bytes dropped, refine your query]"}`, wantCut: true, wantOK: true},
		{name: "whitespace only: compacted", in: "{\n  \"a\": [1, 2, 3]\n}", limit: 14, want: `{"a":[1,2,3]}`, wantCut: true, wantOK: true},
		{name: "the members fit once the object is compacted", in: "{\n  \"a\": [1, 2, 3]\n}", limit: 15, want: `{"a":[1, 2, 3]}`, wantCut: true, wantOK: true},
		{name: "every member kept", in: graph(400), limit: 16384, valid: requires("entities", "relations"), wantCut: true, wantOK: true},
		{name: "numbers alone too big", in: "[" + strings.Repeat("123456789,", 100) + "1]", limit: 1},
		{name: "a cut the check refuses", in: `{"content":"` + strings.Repeat("y", 1000) + `"}`, limit: 300, valid: onlyY},
		{name: "not JSON", in: `{"a":`, limit: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, ok := shape.JSON([]byte(tt.in), shape.Bytes(tt.limit), tt.valid)
			if ok != tt.wantOK || sc.Cut != tt.wantCut {
				t.Fatalf("ok %v cut %v, want %v %v", ok, sc.Cut, tt.wantOK, tt.wantCut)
			}
			if !ok {
				return
			}
			if tt.want != "" {
				if diff := cmp.Diff(tt.want, string(sc.Raw)); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			}
			if len(sc.Raw) > tt.limit || !json.Valid(sc.Raw) {
				t.Errorf("%d bytes (limit %d), valid %v", len(sc.Raw), tt.limit, json.Valid(sc.Raw))
			}
			if f := sc.Figures; sc.Cut && (f.OriginalBytes != len(tt.in) || f.KeptBytes+f.DroppedBytes != f.OriginalBytes ||
				f.Limit != tt.limit || f.Compacted != (f.DroppedBytes == 0)) {
				t.Errorf("figures %+v", f)
			}
		})
	}
}

// The graph keeps its first entities and relations, whole, in order, and
// the note says how many.
func TestJSONNote(t *testing.T) {
	sc, ok := shape.JSON([]byte(graph(400)), shape.Bytes(16384), requires("entities", "relations"))
	if !ok {
		t.Fatal("no form fits")
	}
	var g struct {
		Entities  []struct{ Name string }
		Relations []struct{ From string }
	}
	if err := json.Unmarshal(sc.Raw, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Entities) == 0 || len(g.Relations) == 0 || g.Entities[0].Name != "e0" || g.Relations[0].From != "e0" {
		t.Errorf("kept %d entities, %d relations", len(g.Entities), len(g.Relations))
	}
	want := shape.Note{
		Long: fmt.Sprintf("[toolcap: structuredContent cut to this tool's limit of 16384 bytes: kept %d of 400 items of /entities, %d of 400 items of /relations; refine your query]",
			len(g.Entities), len(g.Relations)),
		Short: "[toolcap: structuredContent cut to the limit]",
	}
	if diff := cmp.Diff(want, sc.Note); diff != "" {
		t.Errorf("note (-want +got):\n%s", diff)
	}
	if sc.Figures.Strategy != "json" || sc.Figures.DroppedBytes != len(graph(400))-len(sc.Raw) {
		t.Errorf("figures %+v", sc.Figures)
	}
}

// keptOf is what a cut string kept: the text before its marker's newline.
func keptOf(s string) string { return s[:strings.IndexByte(s, '\n')] }

var stringMarker = regexp.MustCompile(`\\n\[truncated: (\d+) bytes dropped, refine your query\]"`)

// A string a reader shortened is cut again, and its marker counts what the
// reader dropped too; a string the cut dropped whole is passed over.
func TestJSONPrecut(t *testing.T) {
	a, b := strings.Repeat("a", 600), strings.Repeat("b", 600)
	raw := []byte(`{"x":["` + a + `"],"y":"` + b + `"}`)
	precut := []shape.Precut{{Head: []byte(a), Extra: 5000}, {Head: []byte(b), Extra: 7000}}
	sc, ok := shape.JSONPrecut(raw, shape.Bytes(300), nil, precut)
	if !ok || !json.Valid(sc.Raw) || len(sc.Raw) > 300 {
		t.Fatalf("ok %v, %d bytes: %s", ok, len(sc.Raw), sc.Raw)
	}
	ms := stringMarker.FindAllSubmatch(sc.Raw, -1)
	if len(ms) != 2 {
		t.Fatalf("%d markers in %s", len(ms), sc.Raw)
	}
	var got map[string]any
	if err := json.Unmarshal(sc.Raw, &got); err != nil {
		t.Fatal(err)
	}
	keptA := len(keptOf(got["x"].([]any)[0].(string)))
	keptB := len(keptOf(got["y"].(string)))
	for i, want := range []int{600 - keptA + 5000, 600 - keptB + 7000} {
		if n, _ := strconv.Atoi(string(ms[i][1])); n != want {
			t.Errorf("marker %d counts %d, want %d", i, n, want)
		}
	}
	if f := sc.Figures; f.OriginalBytes != len(raw)+12000 || f.KeptBytes+f.DroppedBytes != f.OriginalBytes {
		t.Errorf("figures %+v", f)
	}

	// The cut drops the first precut string whole (an array keeps whole
	// elements while they fit): the second is matched all the same.
	raw = []byte(`{"x":[1,"` + a + `"],"y":"` + b + `"}`)
	sc, _ = shape.JSONPrecut(raw, shape.Bytes(300), nil, precut)
	ms = stringMarker.FindAllSubmatch(sc.Raw, -1)
	if err := json.Unmarshal(sc.Raw, &got); err != nil || len(ms) != 1 {
		t.Fatalf("%d markers in %s (%v)", len(ms), sc.Raw, err)
	}
	keptB = len(keptOf(got["y"].(string)))
	if n, _ := strconv.Atoi(string(ms[0][1])); n != 600-keptB+7000 {
		t.Errorf("the marker of y counts %d, want %d: %s", n, 600-keptB+7000, sc.Raw)
	}
}

// Under a token limit, the cut form holds the tokens too.
func TestJSONTokens(t *testing.T) {
	raw := []byte(graph(50))
	p := shape.Policy{MaxBytes: 16384, MaxTokens: 500, Counter: perByte{}}
	sc, ok := shape.JSON(raw, p, requires("entities", "relations"))
	if !ok || len(sc.Raw) > 500 || !json.Valid(sc.Raw) {
		t.Fatalf("ok %v, %d bytes", ok, len(sc.Raw))
	}
	want := chain.Truncation{Limit: 16384, LimitTokens: 500, OriginalBytes: len(raw), KeptBytes: len(sc.Raw),
		DroppedBytes: len(raw) - len(sc.Raw), Strategy: "json"}
	if diff := cmp.Diff(want, sc.Figures); diff != "" {
		t.Errorf("figures (-want +got):\n%s", diff)
	}
	// Within the bytes and the tokens: as it is.
	if sc, ok := shape.JSON([]byte(`{"a":1}`), p, nil); !ok || sc.Cut || string(sc.Raw) != `{"a":1}` {
		t.Errorf("a small value: %+v, %v", sc, ok)
	}
}

func TestDroppedFigures(t *testing.T) {
	got := shape.DroppedFigures(5000, shape.Bytes(1024))
	want := chain.Truncation{Limit: 1024, OriginalBytes: 5000, DroppedBytes: 5000, Strategy: "json"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DroppedFigures() mismatch (-want +got):\n%s", diff)
	}
}
