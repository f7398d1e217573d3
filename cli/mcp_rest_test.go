//go:build !toolcap_nomcp

package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain gives the package's tests a cache directory of their own:
// toolcap mcp keeps the rest by default in a store under the user cache
// directory ($XDG_CACHE_HOME), and no test may write to the real one,
// neither in process nor in the binaries the tests run. Go's own build
// cache stays where it was, so that the tests that build a binary do not
// rebuild everything.
func TestMain(m *testing.M) {
	os.Exit(func() int {
		dir, err := os.MkdirTemp("", "toolcap-cache-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil && os.Getenv("GOCACHE") == "" {
			os.Setenv("GOCACHE", strings.TrimSpace(string(out)))
		}
		os.Setenv("XDG_CACHE_HOME", dir)
		return m.Run()
	}())
}

// TestMCPKeepsTheRest runs toolcap mcp in process, with its default
// store, in front of the test's helper server: a cut result names the
// read, and the read pages give back the whole text; keep_rest = false
// turns it off.
func TestMCPKeepsTheRest(t *testing.T) {
	for _, tc := range []struct {
		name     string
		manifest string
		kept     bool
	}{
		{"default", "", true},
		{"keep_rest = false", "[worker.tool_output]\nkeep_rest = false\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, env := helperCommand(t)
			args = append([]string{"-v"}, args...) // the store's place is logged at info
			if tc.manifest != "" {
				path := filepath.Join(t.TempDir(), "toolcap.toml")
				if err := os.WriteFile(path, []byte(tc.manifest), 0o600); err != nil {
					t.Fatal(err)
				}
				args = append([]string{"--manifest", path}, args...)
			}
			cs, done, stderr := pipeClient(t, env, args...)
			defer func() { cs.Close(); waitExit(t, done, stderr) }()
			ctx := t.Context()
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			listed := false
			for _, tool := range tools.Tools {
				listed = listed || tool.Name == "toolcap_read"
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "big"})
			if err != nil {
				t.Fatal(err)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			_, ref, hasRef := strings.Cut(text, `toolcap_read {"ref":"`)
			if listed != tc.kept || hasRef != tc.kept || !mcpMarker.MatchString(text) {
				t.Fatalf("read tool listed %v, marker %q; want keeping the rest %v", listed, text[max(0, len(text)-120):], tc.kept)
			}
			if !tc.kept {
				return
			}
			ref = ref[:26]
			var got bytes.Buffer
			for off := 0; ; {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "toolcap_read", Arguments: map[string]any{"ref": ref, "offset": off}})
				if err != nil || res.IsError {
					t.Fatalf("read at %d: %v %v", off, err, res)
				}
				page := res.Content[0].(*mcp.TextContent).Text
				m := mcpMarker.FindStringIndex(page)
				if m == nil {
					got.WriteString(page)
					break
				}
				got.WriteString(page[:m[0]])
				off += m[0]
			}
			if want := strings.Repeat("line of output\n", 10000); got.String() != want {
				t.Errorf("the pages give %d bytes, differing from the %d of the result", got.Len(), len(want))
			}
			if !strings.Contains(stderr.String(), "keeping the rest of cut results") || !strings.Contains(stderr.String(), filepath.Join(os.Getenv("XDG_CACHE_HOME"), "toolcap", "rest")) {
				t.Errorf("stderr does not say where the store lives:\n%s", stderr.String())
			}
		})
	}
}

// TestMCPRestStoreFailsToOpen: a store that cannot be opened is a warning,
// and the proxy relays without keeping.
func TestMCPRestStoreFailsToOpen(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	args, env := helperCommand(t)
	env = append(env, "TOOLCAP_WORKER__TOOL_OUTPUT__REST__DIR="+filepath.Join(blocker, "rest"))
	cs, done, stderr := pipeClient(t, env, args...)
	defer func() { cs.Close(); waitExit(t, done, stderr) }()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "big"})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if strings.Contains(text, "toolcap_read") || !mcpMarker.MatchString(text) {
		t.Errorf("marker %q: want the plain one", text[max(0, len(text)-120):])
	}
	if !strings.Contains(stderr.String(), "store could not be opened") {
		t.Errorf("no warning about the store:\n%s", stderr.String())
	}
}

// restE2E is what test/mcp/rest_client.mjs prints.
type restE2E struct {
	Direct, Proxied struct {
		ResultBytes int  `json:"resultBytes"`
		Markers     int  `json:"markers"`
		Pages       int  `json:"pages"`
		MaxPage     int  `json:"maxPageBytes"`
		TotalBytes  int  `json:"totalBytes"`
		ReadListed  bool `json:"readListed"`
		Ms          int  `json:"ms"`
	}
	Same bool `json:"same"`
}

// TestMCPRestEndToEnd runs the TypeScript SDK client against toolcap mcp
// in front of the npm filesystem server on a Go source subtree: the cut
// directory_tree, followed page after page through toolcap_read, gives
// back the direct result byte for byte.
func TestMCPRestEndToEnd(t *testing.T) {
	dir, _ := mcpPeer(t, "server-filesystem")
	bin := buildBinary(t)
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("go env GOROOT: %v", err)
	}
	// The whole Go source tree: directory_tree gives about 1.6 MB of JSON.
	root := filepath.Join(strings.TrimSpace(string(goroot)), "src")
	out := runNode(t, dir, "rest_client.mjs", bin, root)
	var got restE2E
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("rest_client.mjs printed %s: %v", out, err)
	}
	t.Logf("figures: %s", bytes.TrimSpace(out))
	p := got.Proxied
	if !got.Same || p.ResultBytes > 16384 || p.Markers != 1 || !p.ReadListed || p.MaxPage > 16384 || p.TotalBytes != got.Direct.ResultBytes || got.Direct.ResultBytes < 1_000_000 {
		t.Errorf("figures %s: want a cut result <= 16384 bytes with one marker, pages <= 16384 bytes giving back the direct result (>= 1 MB) byte for byte", out)
	}
	// A nested document fills the limit (issue 38, item 1: it kept 5,971
	// bytes, stopping at the first subtree too large to keep whole).
	if p.ResultBytes < 16384*95/100 {
		t.Errorf("the cut directory_tree reaches the client as %d bytes; want at least 95%% of 16384", p.ResultBytes)
	}
}
