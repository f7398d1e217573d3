package manifest_test

import (
	"context"
	"testing"

	"github.com/toolcap/toolcap/shape"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/manifest"
)

// TestClients: the clients table through every layer, its sources, and
// the policies of a client (issue 41: Codex keeps 12,000 bytes of a result
// whole and cuts the rest out of toolcap's sight).
func TestClients(t *testing.T) {
	file := manifest.Bytes("a.toml", []byte("[worker.tool_output]\ndefault_max_bytes = 20000\n[worker.tool_output.per_tool]\nsmall = 4096\n"+
		"[worker.tool_output.clients]\ncodex-mcp-client = 48000\n\"my agent\" = 8192\n"))
	env := manifest.Environ([]string{settings.EnvPrefix + "WORKER__TOOL_OUTPUT__CLIENTS__other=3000"})
	over := manifest.Overrides("flag", manifest.ToolOutputLimits{Clients: map[string]int{"mine": 5000}})
	r, err := manifest.Resolve(context.Background(), file, env, over)
	if err != nil {
		t.Fatalf("Resolve() error: %v", err)
	}
	wantRes := map[string]manifest.Setting{
		"codex-mcp-client": {Value: 48000, Source: "a.toml"},
		"my agent":         {Value: 8192, Source: "a.toml"},
		"other":            {Value: 3000, Source: "env " + settings.EnvPrefix + "WORKER__TOOL_OUTPUT__CLIENTS__other"},
		"mine":             {Value: 5000, Source: "flag"},
	}
	if diff := cmp.Diff(wantRes, r.Clients); diff != "" {
		t.Errorf("Resolution.Clients (-want +got):\n%s", diff)
	}
	l := r.Manifest.Limits()
	for client, want := range map[string]int{"codex-mcp-client": 48000, "my agent": 8192, "other": 3000, "mine": 5000, "claude-code": 0} {
		if got := l.ClientLimit(client); got != want {
			t.Errorf("ClientLimit(%q) = %d, want %d", client, got, want)
		}
	}
	// Without a layer's entry, the built-in one.
	if got := (*manifest.ToolOutputLimits)(nil).ClientLimit("codex-mcp-client"); got != 11776 {
		t.Errorf("the built-in codex-mcp-client limit = %d, want 11776", got)
	}

	p, err := l.Policies()
	if err != nil {
		t.Fatal(err)
	}
	type view struct{ MaxBytes, PageBytes int }
	for _, tc := range []struct {
		client string
		want   map[string]view // tool -> policy
	}{
		{"claude-code", map[string]view{"any": {20000, 0}, "small": {4096, 4096}, "toolcap_read": {20000, 0}}},
		{"other", map[string]view{"any": {3000, 0}, "small": {3000, 3000}, "toolcap_read": {3000, 0}}},
		{"my agent", map[string]view{"any": {8192, 0}, "small": {4096, 4096}, "toolcap_read": {8192, 0}}},
	} {
		q := p.ForClient(tc.client)
		got := map[string]view{}
		for tool := range tc.want {
			pol := q.For(tool)
			got[tool] = view{pol.MaxBytes, pol.PageBytes}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ForClient(%q).For (-want +got):\n%s", tc.client, diff)
		}
		if q.Fit() > q.For("any").MaxBytes {
			t.Errorf("ForClient(%q).Fit() = %d, over its limit %d", tc.client, q.Fit(), q.For("any").MaxBytes)
		}
	}
	if p.ForClient("claude-code") != p {
		t.Error("ForClient of a client without a limit is not the policies themselves")
	}
	if got := (*shape.Policies)(nil).ForClient("codex-mcp-client").For("x").MaxBytes; got != 11776 {
		t.Errorf("nil Policies, ForClient(codex-mcp-client): %d bytes, want 11776", got)
	}
}

// TestClientsInvalid: a bad clients entry is an error naming the layer,
// the key and the value.
func TestClientsInvalid(t *testing.T) {
	tests := []struct {
		name string
		opt  manifest.Option
		want string
	}{
		{"zero", manifest.Bytes("a.toml", []byte("[worker.tool_output.clients]\ncodex-mcp-client = 0\n")),
			`manifest: a.toml: worker.tool_output.clients.codex-mcp-client = 0: 0 is not a limit; omit the key for the built-in one, if any (codex-mcp-client: 11776)`},
		{"not a number", manifest.Bytes("a.toml", []byte("[worker.tool_output.clients]\nx = \"big\"\n")),
			`manifest: a.toml: worker.tool_output.clients.x = "big": a string, not an integer (write the number without quotes)`},
		{"a table", manifest.Bytes("a.toml", []byte("[worker.tool_output.clients]\nx = { max_bytes = 4096 }\n")),
			`manifest: a.toml: worker.tool_output.clients.x = (a table): want a byte limit, such as 11776`},
		{"not a table", manifest.Bytes("a.toml", []byte("[worker.tool_output]\nclients = 5\n")),
			`manifest: a.toml: worker.tool_output.clients = 5: must be a table of client names to limits`},
		{"env", manifest.Environ([]string{settings.EnvPrefix + "WORKER__TOOL_OUTPUT__CLIENTS__x=-3"}),
			`manifest: env TOOLCAP_WORKER__TOOL_OUTPUT__CLIENTS__x: worker.tool_output.clients.x = "-3": a limit must be positive`},
		{"Go", manifest.Overrides("flag", manifest.ToolOutputLimits{Clients: map[string]int{"x": 10}}),
			`manifest: flag: worker.tool_output.clients.x = 10: below the minimum of 128 bytes (the truncation marker alone takes up to 66)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := manifest.Load(context.Background(), tt.opt)
			if err == nil {
				t.Fatal("Load() succeeded")
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}
