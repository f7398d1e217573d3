package cli

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestVersion(t *testing.T) {
	tests := []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		args []string
		want string
	}{
		{
			name: "go run from a checkout",
			info: &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/toolcap/toolcap", Version: "(devel)"}},
			ok:   true,
			args: []string{"version"},
			want: "toolcap github.com/toolcap/toolcap (devel) go1.26.0\n",
		},
		{
			name: "go install at a tag",
			info: &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/toolcap/toolcap", Version: "v1.2.3"}},
			ok:   true,
			args: []string{"--version"},
			want: "toolcap github.com/toolcap/toolcap v1.2.3 go1.26.0\n",
		},
		{
			name: "built with VCS stamping",
			info: &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/toolcap/toolcap", Version: "(devel)"},
				Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}},
			ok:   true,
			args: []string{"version"},
			want: "toolcap github.com/toolcap/toolcap (devel) go1.26.0 vcs 0123456789ab (modified)\n",
		},
		{
			name: "no build information",
			ok:   false,
			args: []string{"version"},
			want: "toolcap (unknown version: built without module support)\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saved := readBuildInfo
			t.Cleanup(func() { readBuildInfo = saved })
			readBuildInfo = func() (*debug.BuildInfo, bool) { return tt.info, tt.ok }

			got := runWith(t, nil, nil, tt.args...)
			if got.code != exitOK || got.stderr != "" {
				t.Errorf("exit code = %d, stderr = %q; want 0 and nothing", got.code, got.stderr)
			}
			if diff := cmp.Diff(tt.want, got.stdout); diff != "" {
				t.Errorf("version mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// The real build information of the test binary names the module.
func TestVersionReal(t *testing.T) {
	got := runWith(t, nil, nil, "version")
	if got.code != exitOK || got.stdout == "" {
		t.Fatalf("exit code = %d, stdout = %q", got.code, got.stdout)
	}
}

func TestVersionUsage(t *testing.T) {
	got := runWith(t, nil, nil, "version", "extra")
	if got.code != exitUsage || got.stdout != "" {
		t.Errorf("exit code = %d, stdout = %q; want %d and nothing", got.code, got.stdout, exitUsage)
	}
}

// -h prints a command's usage and, when it has flags, a Flags section; a
// command without flags gets no empty heading.
func TestHelpFlagsSection(t *testing.T) {
	tests := []struct {
		args      []string
		wantFlags bool
	}{
		{[]string{"version", "-h"}, true}, // --log-format and --log-level, as every command
		{[]string{"help", "version"}, true},
		{[]string{"cap", "-h"}, true},
		{[]string{"config", "-h"}, true},
	}
	for _, tt := range tests {
		got := runWith(t, nil, nil, tt.args...)
		if got.code != exitOK || got.stderr != "" {
			t.Errorf("%q: exit code = %d, stderr = %q; want 0 and nothing", tt.args, got.code, got.stderr)
		}
		if has := strings.Contains(got.stdout, "\nFlags:\n"); has != tt.wantFlags {
			t.Errorf("%q: Flags section = %v, want %v:\n%s", tt.args, has, tt.wantFlags, got.stdout)
		}
		if strings.HasSuffix(got.stdout, "Flags:\n") {
			t.Errorf("%q: ends in an empty Flags heading:\n%s", tt.args, got.stdout)
		}
	}
	got := runWith(t, nil, nil, "version", "-h")
	if diff := cmp.Diff(versionHelp, got.stdout[:min(len(versionHelp), len(got.stdout))]); diff != "" {
		t.Errorf("version -h mismatch (-want +got):\n%s", diff)
	}
}
