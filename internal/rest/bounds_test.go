package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/tokens"
)

// The answers at the bounds: each within its limit, none naming the read
// it answers again, none splitting a character.
func TestReadBounds(t *testing.T) {
	long := strings.Repeat("x", 2000) + "\n" + numbered(5000, 1)
	euros := strings.Repeat("€", 2000)
	tests := []struct {
		name    string
		content string
		args    func(ref string) string
		p       shape.Policy
		wantErr string // a substring; "" for an answer
	}{
		{"a page at a limit that holds the marker alone", numbered(5000, 1),
			func(ref string) string { return fmt.Sprintf(`{"ref":%q,"offset":100}`, ref) },
			shape.Policy{MaxBytes: 132}, "cannot hold a page"},
		{"a match too long for the limit", long,
			func(ref string) string { return fmt.Sprintf(`{"ref":%q,"pattern":"x"}`, ref) },
			shape.Policy{MaxBytes: 1100}, "cannot hold a page"},
		{"a pattern longer than the limit holds in its marker", numbered(5000, 1),
			func(ref string) string {
				return fmt.Sprintf(`{"ref":%q,"pattern":"line|%s"}`, ref, strings.Repeat("z", 900))
			},
			shape.Policy{MaxBytes: 512}, "cannot hold a page"},
		{"no match, a long pattern", numbered(5000, 1),
			func(ref string) string {
				return fmt.Sprintf(`{"ref":%q,"pattern":"%s"}`, ref, strings.Repeat("z", 900))
			},
			shape.Policy{MaxBytes: 512}, ""},
		{"a length inside a character", euros,
			func(ref string) string { return fmt.Sprintf(`{"ref":%q,"length":4}`, ref) },
			shape.Policy{MaxBytes: 16384}, ""},
		{"a page under a token limit", numbered(100000, 1),
			func(ref string) string { return fmt.Sprintf(`{"ref":%q}`, ref) },
			shape.Policy{MaxBytes: 16384, MaxTokens: 400, Counter: tokens.NewCalibrated()}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, ctx, ref := kept(t, tt.content, rest.Config{})
			args := tt.args(ref)
			ans, err := k.Read(ctx, json.RawMessage(args), tt.p)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Read(%s) = %q, %v; want an error saying %q", args, ans, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Read(%s): %v", args, err)
			}
			if len(ans) > tt.p.MaxBytes {
				t.Errorf("%d bytes, over the limit %d", len(ans), tt.p.MaxBytes)
			}
			if tt.p.HoldsTokens() {
				if n := tt.p.Counter.Count(ans); n > tt.p.MaxTokens {
					t.Errorf("%d tokens, over the limit %d", n, tt.p.MaxTokens)
				}
			}
			if !utf8.ValidString(ans) {
				t.Errorf("the answer splits a character: %q", ans[:min(len(ans), 40)])
			}
			for _, m := range cut.FindMarkers(ans) {
				if m.Rest != nil && m.Rest.Args == args {
					t.Errorf("the answer names the read it answers: %s", args)
				}
			}
		})
	}
}

// The ceiling's cut of content a middleware grew holds the limit, and
// content the cap never cut is kept when the ceiling cuts it.
func TestRecutBounds(t *testing.T) {
	k := newKeeper(t, rest.Config{})
	ctx := rest.WithScope(context.Background(), "s")
	p := shape.Policy{MaxBytes: 300, KeepRest: true}
	out, _, _ := k.Text(ctx, numbered(5000, 1), p)
	grown := out + "\n[note]"
	re, _, changed := k.Recut(ctx, grown, p)
	if !changed || len(re) > p.MaxBytes {
		t.Errorf("recut of %d bytes: changed %v, %d bytes; want within %d", len(grown), changed, len(re), p.MaxBytes)
	}
	fresh := numbered(390, 2)
	re, tr, _ := k.Recut(ctx, fresh, p)
	if len(re) > p.MaxBytes || tr.Ref == "" {
		t.Errorf("the ceiling's cut of %d uncut bytes: %d bytes, ref %q; want it kept", len(fresh), len(re), tr.Ref)
	}
}

// An entry bound smaller than where the read would start keeps nothing:
// the cut is the plain one, and no entry is left behind.
func TestEntryBoundBelowTheResume(t *testing.T) {
	m := rest.NewMemory(rest.Config{MaxEntryBytes: 100})
	k, err := rest.NewKeeper(m)
	if err != nil {
		t.Fatal(err)
	}
	in := numbered(5000, 1)
	p := shape.Policy{MaxBytes: 300, KeepRest: true}
	out, tr, _ := k.Text(rest.WithScope(context.Background(), "s"), in, p)
	want, _, _ := shape.Text(in, p)
	if out != want || tr.Ref != "" {
		t.Errorf("got %q (ref %q), want the plain cut", out, tr.Ref)
	}
	if u := m.Usage(); u.Entries != 0 || u.Bytes != 0 || u.Writing != 0 {
		t.Errorf("usage %+v, want nothing kept", u)
	}
}
