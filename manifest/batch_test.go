package manifest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/manifest"
)

func TestBatchMaxBytes(t *testing.T) {
	tests := []struct {
		name      string
		opts      []manifest.Option
		wantBatch int
		wantSet   manifest.Setting
	}{
		{
			name:    "omitted: no batch budget",
			opts:    []manifest.Option{manifest.Bytes("m.toml", []byte("[worker.tool_output]\ndefault_max_bytes = 51200\n"))},
			wantSet: manifest.Setting{Source: settings.SourceDefault},
		},
		{
			name:      "file",
			opts:      []manifest.Option{manifest.Bytes("m.toml", []byte("[worker.tool_output]\nbatch_max_bytes = 65536\n"))},
			wantBatch: 65536,
			wantSet:   manifest.Setting{Value: 65536, Source: "m.toml"},
		},
		{
			name: "environment over file",
			opts: []manifest.Option{
				manifest.Bytes("m.toml", []byte("[worker.tool_output]\nbatch_max_bytes = 65536\n")),
				manifest.Environ([]string{settings.EnvBatchMaxBytes + "=32768"}),
			},
			wantBatch: 32768,
			wantSet:   manifest.Setting{Value: 32768, Source: "env " + settings.EnvBatchMaxBytes},
		},
		{
			name: "overrides over environment",
			opts: []manifest.Option{
				manifest.Environ([]string{settings.EnvBatchMaxBytes + "=32768"}),
				manifest.Overrides("flag --batch-max-bytes", manifest.ToolOutputLimits{BatchMaxBytes: 4096}),
			},
			wantBatch: 4096,
			wantSet:   manifest.Setting{Value: 4096, Source: "flag --batch-max-bytes"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := manifest.Resolve(context.Background(), tt.opts...)
			if err != nil {
				t.Fatalf("Resolve() error: %v", err)
			}
			if diff := cmp.Diff(tt.wantBatch, r.Manifest.Limits().Batch()); diff != "" {
				t.Errorf("Batch() mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSet, r.Batch); diff != "" {
				t.Errorf("Resolution.Batch mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBatchMaxBytesErrors(t *testing.T) {
	tests := []struct {
		name string
		opt  manifest.Option
		want string
	}{
		{"zero", manifest.Bytes("m.toml", []byte("[worker.tool_output]\nbatch_max_bytes = 0\n")),
			`manifest: m.toml: worker.tool_output.batch_max_bytes = 0: 0 is not a batch budget; omit the key for none`},
		{"below the minimum", manifest.Bytes("m.toml", []byte("[worker.tool_output]\nbatch_max_bytes = 100\n")),
			`manifest: m.toml: worker.tool_output.batch_max_bytes = 100: below the minimum of 128 bytes (the truncation marker alone takes up to 66)`},
		{"above the maximum", manifest.Bytes("m.toml", []byte("[worker.tool_output]\nbatch_max_bytes = 67108865\n")),
			`manifest: m.toml: worker.tool_output.batch_max_bytes = 67108865: above the maximum of 67108864 bytes (64 MiB)`},
		{"a string in a file", manifest.Bytes("m.toml", []byte("[worker.tool_output]\nbatch_max_bytes = \"65536\"\n")),
			`manifest: m.toml: worker.tool_output.batch_max_bytes = "65536": a string, not an integer (write the number without quotes)`},
		{"not an integer in the environment", manifest.Environ([]string{settings.EnvBatchMaxBytes + "=64k"}),
			`manifest: env TOOLCAP_WORKER__TOOL_OUTPUT__BATCH_MAX_BYTES: worker.tool_output.batch_max_bytes = "64k": not an integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := manifest.Load(context.Background(), tt.opt)
			var me *manifest.Error
			if !errors.As(err, &me) {
				t.Fatalf("Load() error = %v, want a *manifest.Error", err)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("Load() error mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateBatchMaxBytes(t *testing.T) {
	m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{BatchMaxBytes: 64}}
	want := `manifest: WorkerManifest: worker.tool_output.batch_max_bytes = 64: below the minimum of 128 bytes (the truncation marker alone takes up to 66)`
	err := m.Validate()
	if err == nil {
		t.Fatal("Validate() = nil, want an error")
	}
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("Validate() mismatch (-want +got):\n%s", diff)
	}
}
