package rest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/capcheck"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/tokens"
)

func newKeeper(t *testing.T, cfg rest.Config, opts ...rest.KeeperOption) *rest.Keeper {
	t.Helper()
	k, err := rest.NewKeeper(rest.NewMemory(cfg), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// readArgs returns the arguments of the read the one marker of out names.
func readArgs(t *testing.T, out string) (cut.Found, rest.ReadArgs) {
	t.Helper()
	ms := cut.FindMarkers(out)
	if len(ms) != 1 {
		t.Fatalf("%d markers in %q, want 1", len(ms), clip(out))
	}
	if ms[0].Rest == nil {
		return ms[0], rest.ReadArgs{}
	}
	a, err := rest.ParseReadArgs(json.RawMessage(ms[0].Rest.Args))
	if err != nil {
		t.Fatalf("marker args %s: %v", ms[0].Rest.Args, err)
	}
	return ms[0], a
}

// numbered returns about n bytes of numbered lines, seeded by seed.
func numbered(n, seed int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %d of %d: %s\n", i, seed, strings.Repeat("abcdefgh", (i*seed)%7))
	}
	return b.String()
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:100] + " … " + s[len(s)-100:]
	}
	return s
}

// readAll follows the markers from offset 0 page after page and returns
// the concatenated pages without their markers.
func readAll(t *testing.T, ctx context.Context, k *rest.Keeper, ref string, p shape.Policy) string {
	t.Helper()
	var b strings.Builder
	args := rest.ReadArgs{Ref: ref}
	for pages := 0; ; pages++ {
		if pages > 100000 {
			t.Fatal("no end after 100000 pages")
		}
		raw, _ := json.Marshal(args)
		page, err := k.Read(ctx, raw, p)
		if err != nil {
			t.Fatalf("read %s: %v", raw, err)
		}
		if len(page) > p.MaxBytes {
			t.Fatalf("page at %d: %d bytes, over the limit %d", args.Offset, len(page), p.MaxBytes)
		}
		ms := cut.FindMarkers(page)
		if len(ms) == 0 {
			b.WriteString(page)
			return b.String()
		}
		m := ms[len(ms)-1]
		if m.Rest == nil {
			t.Fatalf("page at %d ends in a plain marker: %q", args.Offset, clip(page))
		}
		b.WriteString(page[:m.Start])
		next, err := rest.ParseReadArgs(json.RawMessage(m.Rest.Args))
		if err != nil {
			t.Fatal(err)
		}
		if next.Offset != args.Offset+int64(m.Start) {
			t.Fatalf("page at %d shows %d bytes but names offset %d", args.Offset, m.Start, next.Offset)
		}
		if want := len(b.String()); int(next.Offset) != want {
			t.Fatalf("next offset %d, want %d", next.Offset, want)
		}
		args = next
	}
}

func TestTextNamesTheRead(t *testing.T) {
	lines := numbered(200000, 7)
	log := capcheck.TestLog(3000, 3000/2)
	tests := []struct {
		name string
		in   string
		p    shape.Policy
	}{
		{"head", lines, shape.Policy{MaxBytes: 16384, KeepRest: true}},
		{"head small", lines, shape.Policy{MaxBytes: 300, KeepRest: true}},
		{"head_tail", log, shape.Policy{MaxBytes: 12000, KeepRest: true, Spec: cut.Spec{Keep: cut.KeepHeadTail}}},
		{"tokens", lines, shape.Policy{MaxBytes: 16384, MaxTokens: 1000, Counter: tokens.NewCalibrated(), KeepRest: true}},
		{"multibyte", strings.Repeat("日本語のテキスト。", 5000), shape.Policy{MaxBytes: 4099, KeepRest: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newKeeper(t, rest.Config{})
			ctx := rest.WithScope(context.Background(), "s1")
			out, tr, changed := k.Text(ctx, tt.in, tt.p)
			if !changed {
				t.Fatal("not cut")
			}
			if len(out) > tt.p.MaxBytes {
				t.Fatalf("%d bytes, over the limit %d", len(out), tt.p.MaxBytes)
			}
			if tt.p.HoldsTokens() {
				if n := tt.p.Counter.Count(out); n > tt.p.MaxTokens {
					t.Fatalf("%d tokens, over the limit %d", n, tt.p.MaxTokens)
				}
			}
			f, a := readArgs(t, out)
			if diff := cmp.Diff(rest.ReadArgs{Ref: tr.Ref, Offset: int64(tr.Resume)}, a); diff != "" {
				t.Errorf("marker args (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(tt.in, out[:f.Start]) {
				t.Errorf("the text before the marker is not the output's start")
			}
			if tr.Resume != f.Start {
				t.Errorf("resume %d, want the marker's start %d", tr.Resume, f.Start)
			}
			wantN := tr.DroppedBytes
			if tr.Unit == "tokens" {
				wantN = tr.DroppedTokens
			}
			if f.N != wantN {
				t.Errorf("marker N %d, figures say %d", f.N, wantN)
			}
			// Reading on from offset 0 gives back the output, byte for byte.
			page := shape.Policy{MaxBytes: 16384}
			if got := readAll(t, ctx, k, tr.Ref, page); got != tt.in {
				t.Errorf("pages from 0: %d bytes, want the %d of the output", len(got), len(tt.in))
			}
		})
	}
}

func TestTextFitsUnchanged(t *testing.T) {
	k := newKeeper(t, rest.Config{})
	in := strings.Repeat("x", 100)
	out, tr, changed := k.Text(context.Background(), in, shape.Policy{MaxBytes: 100, KeepRest: true})
	if changed || out != in || tr.Ref != "" {
		t.Errorf("Text of a fitting text = %q, %+v, %v; want it unchanged", out, tr, changed)
	}
	allocs := testing.AllocsPerRun(100, func() {
		k.Text(context.Background(), in, shape.Policy{MaxBytes: 100, KeepRest: true})
	})
	if allocs != 0 {
		t.Errorf("a fitting text: %v allocs, want 0", allocs)
	}
}

func TestTextWithoutKeepRestIsPlain(t *testing.T) {
	k := newKeeper(t, rest.Config{})
	in := numbered(50000, 1)
	p := shape.Policy{MaxBytes: 1000}
	out, tr, _ := k.Text(context.Background(), in, p)
	want, wantT, _ := shape.Text(in, p)
	if out != want || tr != wantT {
		t.Errorf("KeepRest off: got %q, want shape.Text's %q", clip(out), clip(want))
	}
}

// failing is a store whose every call fails.
type failing struct{ err error }

func (f failing) Create(context.Context, string) (rest.Entry, error) { return nil, f.err }
func (f failing) Open(context.Context, string, string) (rest.Reader, error) {
	return nil, f.err
}
func (failing) Close() error { return nil }

func TestStoreFailureCutsPlain(t *testing.T) {
	k, err := rest.NewKeeper(failing{errors.New("disk on fire")})
	if err != nil {
		t.Fatal(err)
	}
	in := numbered(50000, 1)
	p := shape.Policy{MaxBytes: 1000, KeepRest: true}
	out, tr, changed := k.Text(context.Background(), in, p)
	want, _, _ := shape.Text(in, p)
	if !changed || out != want || tr.Ref != "" {
		t.Errorf("a failing store: got %q (ref %q), want the plain cut %q", clip(out), tr.Ref, clip(want))
	}
}

func TestScopeBinding(t *testing.T) {
	k := newKeeper(t, rest.Config{})
	in := numbered(50000, 1)
	p := shape.Policy{MaxBytes: 1000, KeepRest: true}
	_, tr, _ := k.Text(rest.WithScope(context.Background(), "alice"), in, p)
	args := fmt.Sprintf(`{"ref":%q}`, tr.Ref)
	_, errOther := k.Read(rest.WithScope(context.Background(), "bob"), json.RawMessage(args), p)
	other := rest.NewRef()
	_, errUnknown := k.Read(rest.WithScope(context.Background(), "bob"), json.RawMessage(fmt.Sprintf(`{"ref":%q}`, other)), p)
	if !errors.Is(errOther, rest.ErrUnknown) || !errors.Is(errUnknown, rest.ErrUnknown) {
		t.Fatalf("foreign ref: %v; unknown ref: %v; want both ErrUnknown", errOther, errUnknown)
	}
	// The same words for both, but for the ref they name.
	if a, b := strings.ReplaceAll(errOther.Error(), tr.Ref, "R"), strings.ReplaceAll(errUnknown.Error(), other, "R"); a != b {
		t.Errorf("foreign %q and unknown %q differ", a, b)
	}
	if _, err := k.Read(rest.WithScope(context.Background(), "alice"), json.RawMessage(args), p); err != nil {
		t.Errorf("own scope: %v", err)
	}
}

func TestStreamIsText(t *testing.T) {
	in := capcheck.TestLog(4000, 4000/2)
	for _, p := range []shape.Policy{
		{MaxBytes: 8000, KeepRest: true},
		{MaxBytes: 8000, KeepRest: true, Spec: cut.Spec{Keep: cut.KeepHeadTail}},
		{MaxBytes: 8000, MaxTokens: 500, Counter: tokens.NewCalibrated(), KeepRest: true},
	} {
		k := newKeeper(t, rest.Config{})
		ctx := rest.WithScope(context.Background(), "s")
		s := k.NewStream(ctx, p)
		for i := 0; i < len(in); i += 777 {
			s.Write([]byte(in[i:min(len(in), i+777)]))
		}
		got, gt, _ := s.Result()
		want, wt, _ := k.Text(ctx, in, p)
		// The refs differ; the rest is the same.
		got = strings.ReplaceAll(got, gt.Ref, "REF")
		want = strings.ReplaceAll(want, wt.Ref, "REF")
		gt.Ref, wt.Ref = "", ""
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%+v: stream (-text +stream):\n%s", p, diff)
		}
		if diff := cmp.Diff(wt, gt); diff != "" {
			t.Errorf("%+v: figures (-text +stream):\n%s", p, diff)
		}
	}
}

func TestRecutKeepsTheRead(t *testing.T) {
	k := newKeeper(t, rest.Config{})
	ctx := rest.WithScope(context.Background(), "s")
	in := numbered(100000, 3)
	p := shape.Policy{MaxBytes: 4000, KeepRest: true}
	out, tr, _ := k.Text(ctx, in, p)
	// A middleware prepends a line; the ceiling cuts again.
	grown := strings.Repeat("NOTE: from cache\n", 20) + out
	re, rt, changed := k.Recut(ctx, grown, p)
	if !changed || len(re) > p.MaxBytes {
		t.Fatalf("recut: changed %v, %d bytes", changed, len(re))
	}
	_, a := readArgs(t, re)
	if a.Ref != tr.Ref || rt.Ref != tr.Ref {
		t.Errorf("recut names ref %q (figures %q), want %q", a.Ref, rt.Ref, tr.Ref)
	}
	if a.Offset > int64(tr.Resume) {
		t.Errorf("recut resumes at %d, past the cap's %d", a.Offset, tr.Resume)
	}
	f := cut.FindMarkers(re)[0]
	if shownEnd := int(a.Offset); !strings.HasSuffix(re[:f.Start], in[shownEnd-10:shownEnd]) {
		t.Errorf("the read from %d does not go on where the text before the marker ends", a.Offset)
	}
}
