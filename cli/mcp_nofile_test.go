//go:build !toolcap_nomcp

package cli

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The default --max-conns is lowered to leave the sessions' servers their
// descriptors under a low open-file limit; one that was set is kept, with
// a warning.
func TestFitConns(t *testing.T) {
	type result struct {
		Conns   int
		Warning string
	}
	for _, tt := range []struct {
		name     string
		conns    int
		sessions int
		set      bool
		nofile   uint64
		want     result
	}{
		{"unknown limit", 256, 64, false, 0, result{256, ""}},
		{"the usual 1,024", 256, 64, false, 1024, result{256, ""}},
		{"exactly enough", 256, 64, false, 256 + 64*4 + 32, result{256, ""}},
		{"ulimit -n 500, default", 256, 64, false, 500, result{212,
			"the open-file limit is 500: --max-conns lowered from 256 to 212 so that 64 sessions' servers keep their descriptors; raise the limit (ulimit -n) or set --max-conns and --max-sessions"}},
		{"ulimit -n 256, default: at least 16", 256, 64, false, 256, result{16,
			"the open-file limit is 256: --max-conns lowered from 256 to 16 so that 64 sessions' servers keep their descriptors; raise the limit (ulimit -n) or set --max-conns and --max-sessions"}},
		{"ulimit -n 256, set", 200, 64, true, 256, result{200,
			"the open-file limit is 256: --max-conns 200 and --max-sessions 64 need about 488 descriptors; raise the limit (ulimit -n) or lower them"}},
		{"set, and it fits", 100, 10, true, 256, result{100, ""}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conns, warning := fitConns(tt.conns, tt.sessions, tt.set, tt.nofile)
			if diff := cmp.Diff(tt.want, result{conns, warning}); diff != "" {
				t.Errorf("fitConns(%d, %d, %v, %d) (-want +got):\n%s", tt.conns, tt.sessions, tt.set, tt.nofile, diff)
			}
		})
	}
}
