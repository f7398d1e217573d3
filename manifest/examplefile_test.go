package manifest_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/internal/logtest"
	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/manifest"
)

// exampleManifest is the commented example manifest at the repository root;
// TestExampleFileKeys (examplefile_internal_test.go) holds its keys to the
// package's.
const exampleManifest = "../toolcap.example.toml"

// resolveQuietly resolves opts and fails t on an error or a warning, logged
// or in Resolution.Warnings.
func resolveQuietly(t *testing.T, opts ...manifest.Option) *manifest.Resolution {
	t.Helper()
	var buf bytes.Buffer
	opts = append(opts, manifest.WithLogger(logtest.New(&buf, hclog.Trace)))
	r, err := manifest.Resolve(context.Background(), opts...)
	if err != nil {
		t.Fatalf("ResolveContext() error: %v", err)
	}
	if diff := cmp.Diff([]string(nil), r.Warnings); diff != "" {
		t.Errorf("Warnings mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("", buf.String()); diff != "" {
		t.Errorf("logged lines mismatch (-want +got):\n%s", diff)
	}
	if _, err := r.Manifest.Policies(); err != nil {
		t.Errorf("Policies() error: %v", err)
	}
	return r
}

// TestExampleFile loads toolcap.example.toml as a file layer: no error, no
// warning, and every key of [worker.tool_output] and of its rest table in
// force from the file rather than from a default.
func TestExampleFile(t *testing.T) {
	r := resolveQuietly(t, manifest.File(exampleManifest))
	source := fmt.Sprintf("file %q", exampleManifest)

	if diff := cmp.Diff([]string{settings.SourceDefault, source}, r.Layers); diff != "" {
		t.Errorf("Layers mismatch (-want +got):\n%s", diff)
	}

	got := map[string]string{
		"default_max_bytes":  r.Default.Source,
		"batch_max_bytes":    r.Batch.Source,
		"default_max_tokens": r.DefaultTokens.Source,
		"batch_max_tokens":   r.BatchTokens.Source,
		"tokenizer":          r.Tokenizer.Source,
		"keep_rest":          r.KeepRest.Source,
	}
	for field, s := range r.Strategy[""] {
		got["default_"+field] = s.Source
	}
	for key, s := range r.Rest {
		got["rest."+key] = s.Source
	}
	want := map[string]string{}
	for _, key := range []string{
		"default_max_bytes", "batch_max_bytes", "default_max_tokens", "batch_max_tokens", "tokenizer", "keep_rest",
		"default_keep", "default_tail_share", "default_keep_lines", "default_fallback",
		"rest.dir", "rest.max_bytes", "rest.max_entry_bytes", "rest.ttl", "rest.tool", "rest.store",
	} {
		want[key] = source
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sources of the keys in force mismatch (-want +got):\n%s", diff)
	}

	for client, s := range r.Clients {
		if s.Source != source {
			t.Errorf("Clients[%q].Source = %q, want %q", client, s.Source, source)
		}
	}
	limits := r.Manifest.Limits()
	if len(limits.PerTool) == 0 {
		t.Errorf("PerTool is empty; want the file's entries")
	}
	for tool := range limits.PerTool {
		if s, ok := r.PerTool[tool]; ok && s.Source != source {
			t.Errorf("PerTool[%q].Source = %q, want %q", tool, s.Source, source)
		}
	}
}

// TestExampleFileAlternatives loads toolcap.example.toml once for each
// commented-out key ("# key = value"), with that line in force instead of
// the live key of the same name in the same table: each alternative the file
// shows loads without an error or a warning in the manifest package.
func TestExampleFileAlternatives(t *testing.T) {
	data, err := os.ReadFile(exampleManifest)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	commented := regexp.MustCompile(`^# ([A-Za-z0-9_]+) = .+$`)
	header := ""
	for i, line := range lines {
		if strings.HasPrefix(line, "[") {
			header = line
			continue
		}
		m := commented.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name := fmt.Sprintf("%s %s", header, m[1])
		alt := append([]string(nil), lines...)
		alt[i] = strings.TrimPrefix(line, "# ")
		// Comment out the live key of the same name in the same table.
		live := regexp.MustCompile(`^` + regexp.QuoteMeta(m[1]) + `\s*=`)
		in := ""
		for j, l := range alt {
			if strings.HasPrefix(l, "[") {
				in = l
			} else if j != i && in == header && live.MatchString(l) {
				alt[j] = "# " + l
			}
		}
		t.Run(name, func(t *testing.T) {
			file := fmt.Sprintf("%s line %d", exampleManifest, i+1)
			r := resolveQuietly(t, manifest.Bytes(file, []byte(strings.Join(alt, "\n"))))
			if diff := cmp.Diff([]string{settings.SourceDefault, file}, r.Layers); diff != "" {
				t.Errorf("Layers mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
