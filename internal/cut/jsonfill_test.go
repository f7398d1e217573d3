package cut_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolcap/toolcap/internal/cut"
)

// fillLimit is toolcap's default limit, at which issue 38 measured the fill.
const fillLimit = 16384

// TestJSONFillsNestedDocuments: a json cut of a nested document fills the
// limit, whatever nests where (issue 38, item 1: the npm filesystem server's
// directory_tree of GOROOT/src, 1.5 MB, kept 5,893 of 16,384 bytes, because
// the cut stopped at the first top-level subtree too large to keep whole).
// Each document is cut by Cut and by a Writer it streams into; both give
// the same output, its document part valid JSON, its N the input's length
// less that part's, and it holds at least 95% of the limit.
func TestJSONFillsNestedDocuments(t *testing.T) {
	docs := []struct {
		name string
		doc  func(t *testing.T) string
	}{
		{"directory tree of GOROOT/src", goSrcTree},
		{"npm lock", func(t *testing.T) string {
			return readFile(t, filepath.Join("..", "..", "test", "mcp", "package-lock.json"))
		}},
		{"GitHub issues list", func(*testing.T) string { return gitHubIssues(300) }},
		{"Kubernetes pod list", func(*testing.T) string { return podList(400) }},
	}
	spec := cut.Spec{Keep: cut.KeepJSON}
	for _, d := range docs {
		t.Run(d.name, func(t *testing.T) {
			in := d.doc(t)
			if len(in) <= 2*fillLimit {
				t.Fatalf("the document is %d bytes; want one well over the limit", len(in))
			}
			out, st := cut.Cut(in, fillLimit, spec)
			if msg := check(in, fillLimit, spec, out, st); msg != "" {
				t.Fatal(msg)
			}
			if st.Strategy != cut.KeepJSON || st.Compacted {
				t.Fatalf("cut with %q (compacted %v); want a structural json cut", st.Strategy, st.Compacted)
			}
			t.Logf("%d bytes in, %d out (%.1f%% of the limit), N = %d, %d levels on the cut's path",
				len(in), len(out), 100*float64(len(out))/fillLimit, st.Dropped, len(st.Levels))
			if len(out) < fillLimit*95/100 {
				t.Errorf("the cut fills %d of %d bytes (%.1f%%); want at least 95%%", len(out), fillLimit, 100*float64(len(out))/fillLimit)
			}
			w := cut.NewWriter(fillLimit, spec)
			rng := rand.New(rand.NewPCG(38, 1))
			for rest := in; rest != ""; {
				n := min(len(rest), 1+rng.IntN(8192))
				if _, err := w.Write([]byte(rest[:n])); err != nil {
					t.Fatal(err)
				}
				rest = rest[n:]
			}
			got, wst := w.Result()
			if diff := cmp.Diff(out, got); diff != "" {
				t.Errorf("Writer differs from Cut (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(st, wst); diff != "" {
				t.Errorf("Writer's figures differ from Cut's (-want +got):\n%s", diff)
			}
		})
	}
}

// TestJSONLaterElementNeverEmpty: the first element that does not fit is
// cut, but only to a form that shows some of it: not an empty container,
// not a string that holds only a marker.
func TestJSONLaterElementNeverEmpty(t *testing.T) {
	spec := cut.Spec{Keep: cut.KeepJSON}
	tests := []struct {
		name, in string
		limit    int
		want     string
	}{
		{"a later object keeps its first members",
			`[{"a":1},{"name":"second","type":"directory","children":[` + strings.Repeat(`{"name":"f","type":"file"},`, 9) + `{"name":"g","type":"file"}]}]`, 140,
			`[{"a":1},{"name":"second","type":"directory","children":[{"name":"f","type":"file"}]}]` + "\n[truncated: 243 bytes dropped, refine your query]"},
		{"a later object with nothing that fits is left out",
			`[{"a":1},{"name":"` + strings.Repeat("x", 200) + `"}]`, 70,
			`[{"a":1}]` + "\n[truncated: 212 bytes dropped, refine your query]"},
		{"a later element whose first member is a container, its start whole",
			`[{"a":1},{"children":[` + strings.Repeat(`{"n":1},`, 30) + `{"n":2}]}]`, 120,
			`[{"a":1},{"children":[{"n":1},{"n":1},{"n":1},{"n":1},{"n":1}]}]` + "\n[truncated: 208 bytes dropped, refine your query]"},
		{"a later string keeps its start",
			`["first","` + strings.Repeat("y", 300) + `"]`, 140,
			`["first","yyyyyyyyyyyyyyyyyyyyyyyyyyy\n[truncated: 273 bytes dropped, refine your query]"]` + "\n[truncated: 222 bytes dropped, refine your query]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, st := cut.Cut(tt.in, tt.limit, spec)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Cut(%d) mismatch (-want +got):\n%s", tt.limit, diff)
			}
			if msg := check(tt.in, tt.limit, spec, got, st); msg != "" {
				t.Error(msg)
			}
		})
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// treeEntry is an entry of the npm filesystem server's directory_tree.
type treeEntry struct {
	Name     string       `json:"name"`
	Type     string       `json:"type"`
	Children *[]treeEntry `json:"children,omitempty"`
}

// goSrcTree returns the directory tree of GOROOT/src as the npm filesystem
// server's directory_tree writes it (JSON.stringify with 2 spaces).
func goSrcTree(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("go env GOROOT: %v", err)
	}
	root := filepath.Join(strings.TrimSpace(string(out)), "src")
	var walk func(dir string) []treeEntry
	walk = func(dir string) []treeEntry {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		list := []treeEntry{}
		for _, e := range entries {
			te := treeEntry{Name: e.Name(), Type: "file"}
			if e.Type()&fs.ModeDir != 0 {
				children := walk(filepath.Join(dir, e.Name()))
				te.Type, te.Children = "directory", &children
			}
			list = append(list, te)
		}
		return list
	}
	b, err := json.MarshalIndent(walk(root), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// gitHubIssues returns a list of n issues shaped as GitHub's REST API
// lists them, indented.
func gitHubIssues(n int) string {
	type user struct {
		Login string `json:"login"`
		ID    int    `json:"id"`
		Type  string `json:"type"`
	}
	type label struct {
		Name  string `json:"name"`
		Color string `json:"color"`
	}
	type issue struct {
		URL       string  `json:"url"`
		ID        int     `json:"id"`
		Number    int     `json:"number"`
		Title     string  `json:"title"`
		User      user    `json:"user"`
		Labels    []label `json:"labels"`
		State     string  `json:"state"`
		Comments  int     `json:"comments"`
		CreatedAt string  `json:"created_at"`
		Body      string  `json:"body"`
	}
	list := make([]issue, n)
	for i := range list {
		list[i] = issue{
			URL: fmt.Sprintf("https://api.github.com/repos/o/r/issues/%d", i), ID: 1000 + i, Number: i,
			Title: fmt.Sprintf("Issue %d: something is wrong with part %d", i, i%17),
			User:  user{Login: fmt.Sprintf("user%d", i), ID: i, Type: "User"}, Labels: []label{{"bug", "d73a4a"}},
			State: "open", Comments: i % 7, CreatedAt: "2026-11-01T10:00:00Z",
			Body: strings.Repeat("Steps to reproduce:\n1. do x\n2. see y\n", 1+i%5),
		}
	}
	b, _ := json.MarshalIndent(list, "", "  ")
	return string(b)
}

// podList returns a Kubernetes PodList of n pods, indented as kubectl
// get -o json writes it.
func podList(n int) string {
	items := make([]any, n)
	for i := range items {
		items[i] = map[string]any{
			"metadata": map[string]any{"name": fmt.Sprintf("pod-%d", i), "namespace": "default",
				"uid": fmt.Sprintf("uid-%08d", i), "labels": map[string]string{"app": fmt.Sprintf("app%d", i%9), "tier": "backend"}},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "main",
				"image":     fmt.Sprintf("registry.example.com/app%d:1.%d", i%9, i%4),
				"resources": map[string]any{"limits": map[string]string{"cpu": "500m", "memory": "256Mi"}}}},
				"nodeName": fmt.Sprintf("node-%d", i%5)},
			"status": map[string]any{"phase": "Running", "podIP": fmt.Sprintf("10.0.%d.%d", i/256, i%256),
				"conditions": []any{map[string]string{"type": "Ready", "status": "True"}}},
		}
	}
	b, _ := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "PodList",
		"metadata": map[string]string{"resourceVersion": "12345"}, "items": items}, "", "  ")
	return string(b)
}
