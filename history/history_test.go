package history_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/history"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
)

// byteCount counts a token a byte, so that the figures are exact.
type byteCount struct{}

func (byteCount) Count(s string) int { return len(s) }

func newAger(t *testing.T, c history.Config, store rest.Store) (*history.Ager, *rest.Keeper) {
	t.Helper()
	if store == nil {
		store = rest.NewMemory(rest.Config{})
	}
	k, err := rest.NewKeeper(store)
	if err != nil {
		t.Fatal(err)
	}
	if c.Counter == nil {
		c.Counter = byteCount{}
	}
	a, err := history.New(k.Store(), c)
	if err != nil {
		t.Fatal(err)
	}
	return a, k
}

// output is n bytes of numbered lines, unlike any other output of seed.
func output(seed, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%d:%05d some tool output\n", seed, i)
	}
	return b.String()[:n]
}

// readBack follows a stub's read through the keeper, page after page, as
// a worker answers toolcap_read, and returns what the pages give.
func readBack(t *testing.T, ctx context.Context, k *rest.Keeper, stub string) string {
	t.Helper()
	i := strings.Index(stub, k.Tool()+" {")
	if i < 0 {
		t.Fatalf("the stub names no read of %s: %q", k.Tool(), stub)
	}
	args := strings.TrimSuffix(stub[i+len(k.Tool())+1:], "]")
	var got strings.Builder
	for pages := 0; pages < 1000; pages++ {
		page, err := k.Read(ctx, json.RawMessage(args), shape.Policy{MaxBytes: 16384})
		if err != nil {
			t.Fatalf("read %s: %v", args, err)
		}
		ms := cut.FindMarkers(page)
		if len(ms) == 0 || ms[len(ms)-1].Rest == nil {
			got.WriteString(page)
			return got.String()
		}
		got.WriteString(page[:ms[len(ms)-1].Start])
		args = ms[len(ms)-1].Rest.Args
	}
	t.Fatal("more than 1000 pages")
	return ""
}

func TestAgeChoosesOldestFirst(t *testing.T) {
	ctx := rest.WithScope(context.Background(), "conversation")
	tests := []struct {
		name    string
		c       history.Config
		results []history.Result
		want    []int // indexes aged
	}{
		{"off", history.Config{}, []history.Result{{ID: "a", Text: output(1, 5000)}}, nil},
		{"within the budget", history.Config{MaxTokens: 10000},
			[]history.Result{{ID: "a", Text: output(1, 4000)}, {ID: "b", Text: output(2, 4000)}}, nil},
		{"oldest first, the recent kept", history.Config{MaxTokens: 10000, KeepRecent: 2, ClearAtLeast: 1000},
			[]history.Result{{ID: "a", Text: output(1, 4000)}, {ID: "b", Text: output(2, 4000)}, {ID: "c", Text: output(3, 4000)}, {ID: "d", Text: output(4, 4000)}},
			[]int{0, 1}},
		{"a batch frees at least clear_at_least", history.Config{MaxTokens: 15000, KeepRecent: 1, ClearAtLeast: 7000},
			[]history.Result{{ID: "a", Text: output(1, 4000)}, {ID: "b", Text: output(2, 4000)}, {ID: "c", Text: output(3, 4000)}, {ID: "d", Text: output(4, 4000)}},
			[]int{0, 1}},
		{"too little to free: nothing", history.Config{MaxTokens: 10000, KeepRecent: 2, ClearAtLeast: 9000},
			[]history.Result{{ID: "a", Text: output(1, 4000)}, {ID: "b", Text: output(2, 4000)}, {ID: "c", Text: output(3, 4000)}},
			nil},
		{"never, kept, without an id or with a shared one: passed over", history.Config{MaxTokens: 1000, KeepRecent: -1, ClearAtLeast: 100, Never: []string{"Plan"}},
			[]history.Result{
				{ID: "a", Tool: "Plan", Text: output(1, 3000)},
				{ID: "b", Text: output(2, 3000), Keep: true},
				{Text: output(3, 3000)},
				{ID: "d", Text: output(4, 3000)},
				{ID: "d", Text: output(5, 3000)},
				{ID: "f", Tool: "Read", Text: output(6, 3000)},
				{ID: "g", Text: "short"},
			},
			[]int{5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, k := newAger(t, tt.c, nil)
			p, err := a.Age(ctx, tt.results)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, g := range p.Aged {
				got = append(got, g.Index)
				if g.Again || g.ID != tt.results[g.Index].ID || g.Bytes != len(tt.results[g.Index].Text) {
					t.Errorf("aged %+v; want the result's own id and size", g)
				}
				if back := readBack(t, ctx, k, g.Stub); back != tt.results[g.Index].Text {
					t.Errorf("result %d: its stub's read gives %d bytes, not the original's %d", g.Index, len(back), len(tt.results[g.Index].Text))
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("aged results (-want +got):\n%s", diff)
			}
			if len(got) > 0 {
				if p.Freed.Tokens < tt.c.ClearAtLeast || p.After != p.Tokens-p.Freed.Tokens {
					t.Errorf("freed %+v, %d -> %d tokens; want at least %d freed", p.Freed, p.Tokens, p.After, tt.c.ClearAtLeast)
				}
			}
		})
	}
}

// A stub, once written, is the same bytes on every later pass, whether
// the agent keeps the history the pass gave or sends the original again;
// a history already aged is not aged again until it passes the budget.
func TestAgeStubsAreStable(t *testing.T) {
	ctx := rest.WithScope(context.Background(), "conversation")
	a, _ := newAger(t, history.Config{MaxTokens: 10000, KeepRecent: 1, ClearAtLeast: 2000}, nil)
	results := []history.Result{{ID: "a", Text: output(1, 6000)}, {ID: "b", Text: output(2, 6000)}}
	p1, err := a.Age(ctx, results)
	if err != nil || len(p1.Aged) != 1 {
		t.Fatalf("first pass: %+v, %v; want result 0 aged", p1, err)
	}
	stub := p1.Aged[0].Stub
	want := `^\[tool result cleared: 6000 bytes; read it again: toolcap_read \{"ref":"[a-z2-7]{26}","offset":0\}\]$`
	if !regexpMatch(want, stub) {
		t.Errorf("stub %q, want the form %s", stub, want)
	}

	// The original sent again: the same stub.
	p2, err := a.Age(ctx, results)
	if err != nil || len(p2.Aged) != 1 || p2.Aged[0].Stub != stub || !p2.Aged[0].Again || p2.Freed.Results != 0 {
		t.Errorf("the original again: %+v, %v; want the same stub, marked again", p2, err)
	}
	// The history as the pass left it: nothing to do.
	kept := []history.Result{{ID: "a", Text: stub}, {ID: "b", Text: results[1].Text}}
	if p3, err := a.Age(ctx, kept); err != nil || len(p3.Aged) != 0 {
		t.Errorf("the aged history: %+v, %v; want nothing aged", p3, err)
	}
}

// A result a cut kept the rest of keeps its ref: its stub reads the whole
// original from offset 0, and counts the original's bytes.
func TestAgeCutResultKeepsItsRef(t *testing.T) {
	ctx := rest.WithScope(context.Background(), "conversation")
	a, k := newAger(t, history.Config{MaxTokens: 3000, KeepRecent: 1, ClearAtLeast: 100}, nil)
	original := output(7, 50000)
	capped, tr, _ := k.Text(ctx, original, shape.Policy{MaxBytes: 4096, KeepRest: true})
	if tr.Ref == "" {
		t.Fatal("the cut kept nothing")
	}
	p, err := a.Age(ctx, []history.Result{{ID: "a", Text: capped}, {ID: "b", Text: output(8, 2000)}})
	if err != nil || len(p.Aged) != 1 {
		t.Fatalf("pass %+v, %v; want the cut result aged", p, err)
	}
	g := p.Aged[0]
	if g.Ref != tr.Ref || !strings.HasPrefix(g.Stub, "[tool result cleared: 50000 bytes;") {
		t.Errorf("stub %q (ref %s); want the cut's ref %s and the original's 50000 bytes", g.Stub, g.Ref, tr.Ref)
	}
	if back := readBack(t, ctx, k, g.Stub); back != original {
		t.Errorf("the stub's read gives %d bytes, want the original's %d", len(back), len(original))
	}
}

// A result the store cannot keep whole is not aged: nothing is lost.
func TestAgeStoreBound(t *testing.T) {
	ctx := rest.WithScope(context.Background(), "conversation")
	a, _ := newAger(t, history.Config{MaxTokens: 1000, KeepRecent: -1, ClearAtLeast: 100},
		rest.NewMemory(rest.Config{MaxEntryBytes: 5000}))
	p, err := a.Age(ctx, []history.Result{{ID: "big", Text: output(1, 9000)}, {ID: "small", Text: output(2, 3000)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Aged) != 1 || p.Aged[0].ID != "small" {
		t.Errorf("aged %+v; want only the result the store keeps whole", p.Aged)
	}
}

// A growing conversation, aged before each request, its history kept as
// the passes leave it: every request extends the one before byte for
// byte, but for one break per batch, and the results stay within the
// budget past the protected window.
func TestAgePrefixBreaks(t *testing.T) {
	ctx := rest.WithScope(context.Background(), "conversation")
	c := history.Config{MaxTokens: 30000, KeepRecent: 3, ClearAtLeast: 10000}
	a, k := newAger(t, c, nil)
	var hist []history.Result
	originals := map[string]string{}
	prev, breaks, batches := "", 0, 0
	for step := range 60 {
		id := fmt.Sprintf("call_%02d", step)
		text := output(step, 1000+step*97%4000)
		originals[id] = text
		hist = append(hist, history.Result{ID: id, Text: text})
		p, err := a.Age(ctx, hist)
		if err != nil {
			t.Fatal(err)
		}
		if p.Freed.Results > 0 {
			batches++
		}
		for _, g := range p.Aged {
			hist[g.Index].Text = g.Stub
		}
		if p.After > c.MaxTokens {
			t.Errorf("step %d: %d tokens after the pass, over the budget %d", step, p.After, c.MaxTokens)
		}
		var req strings.Builder
		for _, r := range hist {
			req.WriteString(r.ID + "\x00" + r.Text + "\x00")
		}
		if !strings.HasPrefix(req.String(), prev) {
			breaks++
		}
		prev = req.String()
	}
	if batches == 0 || breaks > batches {
		t.Errorf("%d prefix breaks in %d batches; want at most one a batch, and some", breaks, batches)
	}
	for _, r := range hist {
		if strings.HasPrefix(r.Text, "[tool result cleared:") {
			if back := readBack(t, ctx, k, r.Text); back != originals[r.ID] {
				t.Errorf("%s: its stub's read gives %d bytes, not the original's %d", r.ID, len(back), len(originals[r.ID]))
			}
		}
	}
	t.Logf("60 steps: %d batches, %d prefix breaks", batches, breaks)
}

func TestNewErrors(t *testing.T) {
	store := rest.NewMemory(rest.Config{})
	for _, tc := range []struct {
		store rest.Store
		c     history.Config
		want  string
	}{
		{nil, history.Config{MaxTokens: 1}, "history: a store is required: a stub names the read of what the store keeps"},
		{store, history.Config{MaxTokens: -1}, "history: MaxTokens -1: want 0 (off) or a budget in tokens"},
		{store, history.Config{ClearAtLeast: -5}, "history: ClearAtLeast -5: want 0 (a quarter of MaxTokens) or tokens"},
		{store, history.Config{ReadTool: "read the rest"}, `history: rest: read tool name "read the rest": want 1 to 64 characters of [A-Za-z0-9_.-]`},
	} {
		if _, err := history.New(tc.store, tc.c); err == nil || err.Error() != tc.want {
			t.Errorf("New(%+v): %v, want %q", tc.c, err, tc.want)
		}
	}
}

func TestAgeCanceled(t *testing.T) {
	a, _ := newAger(t, history.Config{MaxTokens: 10}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.Age(ctx, []history.Result{{ID: "a", Text: output(1, 100)}}); err != context.Canceled {
		t.Errorf("Age with a canceled context: %v, want context.Canceled", err)
	}
}

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }

// A result that merely quotes a marker naming a kept output (a transcript
// a tool prints) is kept as it is, not taken for that output.
func TestAgeQuotedMarker(t *testing.T) {
	ctx := rest.WithScope(context.Background(), "conversation")
	a, k := newAger(t, history.Config{MaxTokens: 3000, KeepRecent: 1, ClearAtLeast: 100}, nil)
	other, _, _ := k.Text(ctx, output(9, 50000), shape.Policy{MaxBytes: 2048, KeepRest: true})
	quoting := output(1, 4000) + "\nthe log said:\n" + other
	p, err := a.Age(ctx, []history.Result{{ID: "a", Text: quoting}, {ID: "b", Text: "x"}})
	if err != nil || len(p.Aged) != 1 {
		t.Fatalf("pass %+v, %v; want the first result aged", p, err)
	}
	// One page holds it all; the quoted marker at its end is the
	// result's text, not a marker of the page.
	stub := p.Aged[0].Stub
	page, err := k.Read(ctx, json.RawMessage(stub[strings.Index(stub, "{"):len(stub)-1]), shape.Policy{MaxBytes: 16384})
	if err != nil || page != quoting || !strings.HasPrefix(stub, "[tool result cleared: 6063 bytes;") {
		t.Errorf("stub %q reads %d bytes (%v); want the result's own %d", stub, len(page), err, len(quoting))
	}
}
