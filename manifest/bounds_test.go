package manifest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/manifest"
)

// keys returns n lines "k0 = 200", "k1 = 200", ...
func keys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "k%d = 200\n", i)
	}
	return b.String()
}

// padTo pads text with a comment to exactly n bytes.
func padTo(text string, n int) string {
	return text + "#" + strings.Repeat("x", n-len(text)-2) + "\n"
}

func TestBounds(t *testing.T) {
	const per = "[worker.tool_output.per_tool]\n"
	deepArray := func(d int) string { return strings.Repeat("[", d) + "1" + strings.Repeat("]", d) }
	deepInline := func(d int) string { return strings.Repeat("{a=", d) + "1" + strings.Repeat("}", d) }
	dotted := func(d int) string { return "a" + strings.Repeat(".a", d-1) }
	brackets := strings.Repeat("[{", 100)
	var inlineDates strings.Builder
	inlineDates.WriteString("x = {")
	for i := range manifest.MaxTableKeys - 1 {
		fmt.Fprintf(&inlineDates, "k%d = 1979-05-27 07:32:00, ", i)
	}
	inlineDates.WriteString("z = 1}\n")
	var topLevel strings.Builder
	for i := range manifest.MaxTableKeys + 1 {
		fmt.Fprintf(&topLevel, "[t%d]\n", i)
	}

	tests := []struct {
		name    string
		text    string
		perTool int    // entries loaded, when want is ""
		want    string // part of the error; "" for a load that succeeds
	}{
		{"per_tool at the bound", per + keys(manifest.MaxPerToolEntries), manifest.MaxPerToolEntries, ""},
		{"per_tool over the bound", per + keys(manifest.MaxPerToolEntries+1), 0,
			"line 4098: more than 4096 entries in [worker.tool_output.per_tool]"},
		{"per_tool over the bound, dotted keys", "[worker]\n" + strings.ReplaceAll(keys(manifest.MaxPerToolEntries+1), "k", "tool_output.per_tool.k"), 0,
			"more than 4096 entries in [worker.tool_output.per_tool]"},
		{"per_tool over the bound, inline", "[worker.tool_output]\nper_tool = {" + strings.ReplaceAll(keys(manifest.MaxPerToolEntries+1), "\n", ", ") + "}\n", 0,
			"more than 4096 entries in [worker.tool_output.per_tool]"},
		{"another table at the bound", "[agent]\n" + keys(manifest.MaxTableKeys), 0, ""},
		{"another table over the bound", "[agent]\n" + keys(manifest.MaxTableKeys+1), 0, "more than 4096 keys in [agent]"},
		{"the top level over the bound", topLevel.String(), 0, "line 4097: more than 4096 keys in the top level"},
		{"arrays at the bound", "x = " + deepArray(manifest.MaxNestingDepth-1) + "\n", 0, ""},
		{"empty arrays at the bound", "x = " + strings.Repeat("[", manifest.MaxNestingDepth) + strings.Repeat("]", manifest.MaxNestingDepth) + "\n", 0, ""},
		{"arrays over the bound", "[agent]\nx = " + deepArray(manifest.MaxNestingDepth-1) + "\n", 0,
			"line 2: nested deeper than 32 levels"},
		{"inline tables at the bound", "x = " + deepInline(manifest.MaxNestingDepth-1) + "\n", 0, ""},
		{"inline tables over the bound", "x = " + deepInline(manifest.MaxNestingDepth) + "\n", 0, "nested deeper than 32 levels"},
		{"table header at the bound", "[" + dotted(manifest.MaxNestingDepth-1) + "]\nb = 1\n", 0, ""},
		{"table header over the bound", "[" + dotted(manifest.MaxNestingDepth+1) + "]\n", 0, "line 1: nested deeper than 32 levels"},
		{"array of tables over the bound", "[[" + dotted(manifest.MaxNestingDepth) + "]]\n", 0, "nested deeper than 32 levels"},
		{"dotted key at the bound", dotted(manifest.MaxNestingDepth) + " = 1\n", 0, ""},
		{"dotted key over the bound", "[agent]\n" + dotted(manifest.MaxNestingDepth) + " = 1\n", 0, "nested deeper than 32 levels"},
		{"brackets in strings and comments", "[agent]\n" +
			`a = "` + brackets + `\" ` + brackets + `"` + "\n" +
			"b = '" + brackets + "'\n" +
			`c = """` + "\n" + brackets + "\n" + `x = ""` + brackets + `"""""` + "\n" +
			"d = '''" + brackets + "\n" + brackets + "'''\n" +
			"# " + brackets + "\n" +
			"e = [ # " + brackets + "\n 1, 2 ]\n" +
			`"` + brackets + `" = 1` + "\n", 0, ""},
		{"keys inside a multi-line string are not keys", per + keys(manifest.MaxPerToolEntries-1) +
			"zz = 200\n[agent]\ntext = '''\n" + keys(manifest.MaxTableKeys+1) + "'''\n", manifest.MaxPerToolEntries, ""},
		{"a date-time's time is not a key", inlineDates.String(), 0, ""},
		{"each array-of-tables element is its own table", strings.Repeat("[[agent.x]]\n"+keys(3), manifest.MaxTableKeys+1), 0, ""},
		{"exactly MaxManifestBytes", padTo(per+"Read = 200\n", settings.MaxManifestBytes), 1, ""},
		{"one byte over MaxManifestBytes", padTo(per+"Read = 200\n", settings.MaxManifestBytes+1), 0,
			"larger than the limit of 1048576 bytes (1 MiB)"},
	}
	for _, tt := range tests {
		for _, layer := range []string{"bytes", "file"} {
			t.Run(tt.name+"/"+layer, func(t *testing.T) {
				opt, source := manifest.Bytes("m.toml", []byte(tt.text)), "m.toml"
				if layer == "file" {
					p := writeFile(t, "m.toml", tt.text)
					opt, source = manifest.File(p), `file "`+p+`"`
				}
				m, err := manifest.Load(context.Background(), opt)
				if tt.want == "" {
					if err != nil {
						t.Fatalf("Load() error: %v", err)
					}
					if got := len(m.Limits().PerTool); got != tt.perTool {
						t.Errorf("Load() loaded %d per_tool entries, want %d", got, tt.perTool)
					}
					return
				}
				var me *manifest.Error
				if !errors.As(err, &me) {
					t.Fatalf("Load() error = %v, want a *manifest.Error", err)
				}
				if me.Source != source || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("Load() error = %q, want one from %s saying %q", err, source, tt.want)
				}
			})
		}
	}
}

// TestBoundsDevZero reads a file that never ends: Load must stop one byte
// past MaxManifestBytes.
func TestBoundsDevZero(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	start := time.Now()
	_, err := manifest.Load(context.Background(), manifest.File("/dev/zero"))
	want := `manifest: file "/dev/zero": larger than the limit of 1048576 bytes (1 MiB)`
	if err == nil || err.Error() != want {
		t.Errorf("Load(/dev/zero) error = %v, want %s", err, want)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Load(/dev/zero) took %v", d)
	}
}

// TestLoadContextFIFO cancels the load of a FIFO that blocks: in open (no
// writer) and in read (a writer that writes nothing).
func TestLoadContextFIFO(t *testing.T) {
	tests := []struct {
		name   string
		writer bool
	}{
		{"no writer: open blocks", false},
		{"silent writer: read blocks", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "fifo.toml")
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			// Whatever happens, open the write end at the end, so the goroutine
			// blocked in open or read can finish.
			t.Cleanup(func() {
				if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
			})
			if tt.writer {
				// Opening the write end blocks until the reader opens.
				opened := make(chan *os.File, 1)
				go func() {
					f, err := os.OpenFile(path, os.O_WRONLY, 0)
					if err == nil {
						opened <- f
					}
				}()
				t.Cleanup(func() {
					select {
					case f := <-opened:
						f.Close()
					case <-time.After(time.Second):
					}
				})
			}
			ctx, cancel := context.WithCancel(t.Context())
			time.AfterFunc(100*time.Millisecond, cancel)
			start := time.Now()
			m, err := manifest.Load(ctx, manifest.File(path))
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("LoadContext() returned after %v, want promptly after the cancel", d)
			}
			if m != nil || !errors.Is(err, context.Canceled) {
				t.Fatalf("LoadContext() = %v, %v; want context.Canceled", m, err)
			}
			var me *manifest.Error
			if !errors.As(err, &me) || me.Source != `file "`+path+`"` {
				t.Errorf("LoadContext() error %q does not name the file", err)
			}
		})
	}
}

// TestLoadContextDone checks that a done context stops a file layer before
// it is read, and leaves layers that cannot block alone.
func TestLoadContextDone(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	good := writeFile(t, "m.toml", "[worker.tool_output]\ndefault_max_bytes = 4096\n")
	if _, err := manifest.Load(ctx, manifest.File(good)); !errors.Is(err, context.Canceled) {
		t.Errorf("LoadContext(done, File) error = %v, want context.Canceled", err)
	}
	m, err := manifest.Load(ctx, manifest.Bytes("b.toml", []byte("[worker.tool_output]\ndefault_max_bytes = 4096\n")))
	if err != nil {
		t.Fatalf("LoadContext(done, Bytes) error: %v", err)
	}
	if diff := cmp.Diff(4096, m.Limits().For("Read")); diff != "" {
		t.Errorf("For(Read) mismatch (-want +got):\n%s", diff)
	}
}

// TestPerToolBoundOtherLayers applies MaxPerToolEntries to the layers that
// are not TOML text.
func TestPerToolBoundOtherLayers(t *testing.T) {
	vars := make([]string, 0, manifest.MaxPerToolEntries+1)
	per := map[string]manifest.ToolEntry{}
	for i := range manifest.MaxPerToolEntries + 1 {
		vars = append(vars, fmt.Sprintf("%st%d=200", settings.EnvPerToolPrefix, i))
		per[fmt.Sprintf("t%d", i)] = manifest.ToolEntry{MaxBytes: 200}
	}
	tests := []struct {
		name   string
		opt    manifest.Option
		source string
	}{
		{"environment", manifest.Environ(vars), "environment"},
		{"overrides", manifest.Overrides("flags", manifest.ToolOutputLimits{PerTool: per}), "flags"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := manifest.Load(context.Background(), tt.opt)
			var me *manifest.Error
			if !errors.As(err, &me) {
				t.Fatalf("Load() error = %v, want a *manifest.Error", err)
			}
			got := [3]string{me.Source, me.Key, me.Value}
			want := [3]string{tt.source, "worker.tool_output.per_tool", "(a table of 4097 entries)"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("error source, key, value mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// Layers that each hold no more than MaxPerToolEntries may not make a
// manifest that does: what Load returns can always be written as one file.
func TestPerToolBoundAcrossLayers(t *testing.T) {
	var b strings.Builder
	b.WriteString("[worker.tool_output.per_tool]\n")
	for i := range manifest.MaxPerToolEntries {
		fmt.Fprintf(&b, "t%d = 200\n", i)
	}
	_, err := manifest.Load(context.Background(),
		manifest.Bytes("big.toml", []byte(b.String())),
		manifest.Environ([]string{settings.EnvPerToolPrefix + "Read=300"}),
	)
	var me *manifest.Error
	if !errors.As(err, &me) {
		t.Fatalf("Load() error = %v, want a *manifest.Error", err)
	}
	got := [3]string{me.Source, me.Key, me.Value}
	want := [3]string{"env " + settings.EnvPerToolPrefix + "Read", "worker.tool_output.per_tool.Read", `"300"`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("error source, key, value mismatch (-want +got):\n%s", diff)
	}
}
