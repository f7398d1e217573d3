package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
)

// DefaultTool is the name of the read tool when nobody names it.
const DefaultTool = shape.DefaultReadTool

// Keeper keeps the whole output of every result a front end cuts, in a
// [Store], and makes the cut's marker name the read of the rest. It cuts
// with package shape, so its cuts are shape's, within the same limits: it
// keeps room for the longer marker by cutting a little more.
//
// A Keeper is safe for concurrent use. It never fails a cut: when the
// store fails, the policy does not keep the rest, or the longer marker
// cannot fit, the cut is shape's with its plain marker.
type Keeper struct {
	store  Store
	tool   string
	logger hclog.Logger
	scope  string // of a context without one (WithScope)

	// failing is set while the store fails, so that an outage is logged
	// once, and its end once.
	failing atomic.Bool
}

// KeeperOption configures a [Keeper].
type KeeperOption func(*Keeper)

// WithTool names the read tool the markers name; [DefaultTool] when not
// given. NewKeeper refuses a name that is not 1 to 64 characters of
// [A-Za-z0-9_.-].
func WithTool(name string) KeeperOption { return func(k *Keeper) { k.tool = name } }

// WithLogger sets the logger of store failures; nil is silent.
func WithLogger(l hclog.Logger) KeeperOption {
	return func(k *Keeper) {
		if l != nil {
			k.logger = l
		}
	}
}

// NewKeeper returns a Keeper that keeps outputs in store.
func NewKeeper(store Store, opts ...KeeperOption) (*Keeper, error) {
	if store == nil {
		return nil, errors.New("rest: NewKeeper: nil store")
	}
	k := &Keeper{store: store, tool: DefaultTool, logger: hclog.NewNullLogger(), scope: "keeper:" + NewRef()}
	for _, opt := range opts {
		if opt != nil {
			opt(k)
		}
	}
	if !cut.ValidRestTool(k.tool) {
		return nil, fmt.Errorf("rest: read tool name %s: want 1 to 64 characters of [A-Za-z0-9_.-]", strconv.Quote(k.tool))
	}
	return k, nil
}

// Tool returns the name of the read tool.
func (k *Keeper) Tool() string { return k.tool }

// Store returns the store k keeps outputs in.
func (k *Keeper) Store() Store { return k.store }

type scopeKey struct{}

// WithScope returns ctx carrying scope: the refs a Keeper makes under ctx
// are readable only under a context of the same scope. A front end sets
// it per client session; a program, per conversation.
func WithScope(ctx context.Context, scope string) context.Context {
	return context.WithValue(ctx, scopeKey{}, scope)
}

// ScopeFrom returns the scope ctx carries, and false when it carries none.
func ScopeFrom(ctx context.Context) (string, bool) {
	s, ok := ctx.Value(scopeKey{}).(string)
	return s, ok
}

// scopeOf returns the scope of ctx, or k's own when it carries none: refs
// made without a scope are readable only through k.
func (k *Keeper) scopeOf(ctx context.Context) string {
	if s, ok := ScopeFrom(ctx); ok {
		return s
	}
	return k.scope
}

// Text fits s to p as [shape.Text] does; when it cuts and p.KeepRest is
// set, it keeps s whole in the store, under the scope of ctx, and the
// marker names the read of the rest: the figures then carry the ref
// (chain.Truncation.Ref) and the offset the read starts at
// (chain.Truncation.Resume). A text that fits costs what shape.Text costs.
func (k *Keeper) Text(ctx context.Context, s string, p shape.Policy) (string, chain.Truncation, bool) {
	if p.FitsText(s) || !p.KeepRest {
		return shape.Text(s, p)
	}
	// The entry holds the text as a client decodes it, the text the cut
	// measures: the marker's offset is then one of the entry's, and every
	// page read from it is valid UTF-8 (issue 39, item 11).
	s, replaced := cut.ReplaceInvalid(s)
	plain := func() (string, chain.Truncation) {
		out, t, _ := shape.Text(s, p)
		return out, t
	}
	if len(s) <= p.MaxBytes {
		// Within the byte limit: only its tokens, or a JSON compaction,
		// can change it, and perhaps nothing will; a text whose bytes
		// were replaced has changed already.
		out, t, changed := shape.Text(s, p)
		if !changed || t.DroppedBytes == 0 {
			return out, t, changed || replaced > 0
		}
		plain = func() (string, chain.Truncation) { return out, t }
	}
	e, err := k.store.Create(ctx, k.scopeOf(ctx))
	if err != nil {
		k.fail("create", err)
		out, t := plain()
		return out, t, true
	}
	// The cut that names the read first: a large limit then builds one
	// output, not two.
	kept, kt, ok := k.mark(e.Ref(), len(s), p, func(q shape.Policy) (string, chain.Truncation, bool) {
		return shape.Text(s, q)
	}, resumeAfterHead(func() string { return s }))
	if !ok {
		_ = e.Abort()
		return shape.Text(s, p)
	}
	// An io.Writer neither changes nor keeps what it is given: the entry
	// may read s's bytes in place, without a copy of the whole output.
	if _, err := e.Write(unsafe.Slice(unsafe.StringData(s), len(s))); err != nil {
		_ = e.Abort()
		k.fail("write", err)
		out, t := plain()
		return out, t, true
	}
	return k.commit(e, kept, kt, plain)
}

// Recut is [Keeper.Text] for a text that may be the output of an earlier
// cut, as [shape.Recut] is for [shape.Text]: the ceiling's cut of content
// a user middleware changed. A text whose marker names a read of k's tool
// keeps naming it, from an offset moved back by what this cut gives up of
// the head before the marker: the read never skips a byte the model has
// not seen. A text with no marker at all is cut and kept as Text does.
func (k *Keeper) Recut(ctx context.Context, s string, p shape.Policy) (string, chain.Truncation, bool) {
	if p.FitsText(s) {
		return s, chain.Truncation{}, false
	}
	ms := cut.FindMarkers(s)
	if len(ms) == 0 {
		// Never cut: kept now, as the cap keeps what it cuts.
		return k.Text(ctx, s, p)
	}
	// cut.Recut keeps a marker's read, its offset moved back by what the
	// recut gives up before the marker.
	out, t, changed := shape.Recut(s, p)
	if changed {
		for _, m := range cut.FindMarkers(out) {
			var a ReadArgs
			if m.Rest != nil && m.Rest.Tool == k.tool && json.Unmarshal([]byte(m.Rest.Args), &a) == nil {
				t.Ref, t.Resume = a.Ref, int(a.Offset)
			}
		}
	}
	return out, t, changed
}

// TextKept is [Keeper.Text] for an output already kept under ref, such
// as a result a front end cuts again to a smaller share of a budget: the
// marker names the read of ref, and nothing is written.
func (k *Keeper) TextKept(s string, p shape.Policy, ref string) (string, chain.Truncation, bool) {
	out, t, changed := shape.Text(s, p)
	if !changed || !p.KeepRest || t.DroppedBytes == 0 || !ValidRef(ref) {
		return out, t, changed
	}
	kept, kt, ok := k.mark(ref, len(s), p, func(q shape.Policy) (string, chain.Truncation, bool) {
		return shape.Text(s, q)
	}, resumeAfterHead(func() string { return s }))
	if !ok {
		return out, t, changed
	}
	return kept, kt, true
}

// Keep keeps s whole in the store, under the scope of ctx, and returns its
// ref: for a front end that cuts another form of an output it did not cut,
// such as an MCP result whose text fits but whose structuredContent, the
// same text JSON-escaped, does not ([Keeper.JSONKept] then names the read
// of s). ok is false when the store failed (it is logged, as a cut's
// failure is); nothing is kept then.
func (k *Keeper) Keep(ctx context.Context, s string) (ref string, ok bool) {
	if b, bounded := k.store.(EntryBound); bounded && b.MaxEntryBytes() < int64(len(s)) {
		return "", false // the store would keep only its start
	}
	e, err := k.store.Create(ctx, k.scopeOf(ctx))
	if err != nil {
		k.fail("create", err)
		return "", false
	}
	if _, err := e.Write(unsafe.Slice(unsafe.StringData(s), len(s))); err != nil {
		_ = e.Abort()
		k.fail("write", err)
		return "", false
	}
	info, err := e.Commit()
	if err != nil {
		_ = e.Abort()
		k.fail("commit", err)
		return "", false
	}
	k.recovered()
	if info.Size < info.Original {
		// Cut by the entry bound: a read would end short of s.
		return "", false
	}
	return e.Ref(), true
}

// commit commits e and returns the kept cut, or the plain one when the
// store failed or kept too little to read from the resume point.
func (k *Keeper) commit(e Entry, kept string, kt chain.Truncation, plain func() (string, chain.Truncation)) (string, chain.Truncation, bool) {
	if b, ok := k.store.(EntryBound); ok && b.MaxEntryBytes() <= int64(kt.Resume) {
		// The entry would keep nothing past what the model sees.
		_ = e.Abort()
		out, t := plain()
		return out, t, true
	}
	info, err := e.Commit()
	if err != nil {
		_ = e.Abort()
		k.fail("commit", err)
		out, t := plain()
		return out, t, true
	}
	k.recovered()
	if info.Size <= int64(kt.Resume) {
		// The entry bound kept nothing past what the model sees: the
		// read would be empty.
		out, t := plain()
		return out, t, true
	}
	return kept, kt, true
}

// mark cuts with room kept for the longer marker (cutAt cuts the output,
// of n bytes, at a policy), then adds the read of ref, from the offset
// resume gives for the cut, to the cut's marker. It reports false when the
// marker cannot be found or fit.
func (k *Keeper) mark(ref string, n int, p shape.Policy, cutAt func(shape.Policy) (string, chain.Truncation, bool), resumeAt func(out string, f cut.Found, t chain.Truncation) int) (string, chain.Truncation, bool) {
	type marked struct {
		out string
		t   chain.Truncation
	}
	m, ok := markWithin(k, p, n, asIs, func(q shape.Policy) (marked, int, bool) {
		out, t, ok := k.markAt(ref, k.pageLength(p, n), p, q, cutAt, resumeAt)
		return marked{out, t}, len(out), ok
	})
	return m.out, m.t, ok
}

// markWithin is the one rule of the room a read takes: it keeps room in
// p, for an output of n bytes, for the read as written (see
// [Keeper.reserve]), and calls at with that policy; at cuts, adds the
// read, checks the result against p and returns it with its length. The
// room kept was for the widest offset the marker could hold: what it did
// not take, the cut may show, so at is called once more with that much
// more. (Past 1 MiB a few bytes are not worth a second output of that
// size.) It reports false when p has not the room or at failed.
func markWithin[T any](k *Keeper, p shape.Policy, n int, written func(string) string, at func(q shape.Policy) (T, int, bool)) (T, bool) {
	var none T
	q, ok := k.reserve(p, n, written)
	if !ok {
		return none, false
	}
	m, size, ok := at(q)
	if !ok {
		return none, false
	}
	if slack := p.MaxBytes - size; slack > 0 && p.MaxBytes <= 1<<20 {
		q.MaxBytes += slack
		if again, _, ok := at(q); ok {
			return again, true
		}
	}
	return m, true
}

// markAt is mark's cut at q, the policy p with room kept for the read
// (whose pages hold length bytes, see pageLength).
func (k *Keeper) markAt(ref string, length int, p, q shape.Policy, cutAt func(shape.Policy) (string, chain.Truncation, bool), resumeAt func(out string, f cut.Found, t chain.Truncation) int) (string, chain.Truncation, bool) {
	out, t, changed := cutAt(q)
	if !changed || t.DroppedBytes == 0 {
		return "", chain.Truncation{}, false
	}
	f, ok := cutMarker(out, t)
	if !ok {
		return "", chain.Truncation{}, false
	}
	resume := resumeAt(out, f, t)
	marked := cut.WithRest(out, f, cut.Rest{Tool: k.tool, Args: readArgs(ref, resume, length)})
	if !fits(marked, p) {
		return "", chain.Truncation{}, false
	}
	t.Limit, t.LimitTokens = p.MaxBytes, 0
	if p.HoldsTokens() {
		t.LimitTokens = p.MaxTokens
	}
	t.Ref, t.Resume = ref, resume
	return marked, t, true
}

// resumeAfterHead returns the resume point of a cut of an output that
// begins with prefix() (the whole output, or as much of its start as a
// stream holds): where the marker stands when the cut shows the output's
// first bytes before it, as head and head_tail do; 0, the start, for a
// JSON cut, which reshapes the document. prefix is asked for only then: a
// Writer that cuts a JSON document as it streams gives its head window
// back as a copy.
func resumeAfterHead(prefix func() string) func(string, cut.Found, chain.Truncation) int {
	return func(out string, f cut.Found, t chain.Truncation) int {
		if t.Strategy == string(cut.KeepJSON) {
			return 0
		}
		if p := prefix(); f.Start <= len(p) && out[:f.Start] == p[:f.Start] {
			return f.Start
		}
		return 0
	}
}

// cutMarker finds the marker a cut put in out: the last one counting what
// the cut dropped, in its unit.
func cutMarker(out string, t chain.Truncation) (cut.Found, bool) {
	n, unit := t.DroppedBytes, cut.UnitBytes
	if t.Unit == string(cut.UnitTokens) {
		n, unit = t.DroppedTokens, cut.UnitTokens
	}
	ms := cut.FindMarkers(out)
	for i := len(ms) - 1; i >= 0; i-- {
		if m := ms[i]; m.N == n && m.Unit == unit && m.Rest == nil {
			return m, true
		}
	}
	return cut.Found{}, false
}

// readArgs returns the arguments of the read of ref from offset, pages of
// at most length bytes (0: the read tool's limit), as the marker names
// them.
func readArgs(ref string, offset, length int) string {
	if length > 0 {
		return `{"ref":"` + ref + `","offset":` + strconv.Itoa(offset) + `,"length":` + strconv.Itoa(length) + `}`
	}
	return `{"ref":"` + ref + `","offset":` + strconv.Itoa(offset) + `}`
}

// pageLength returns the length a marker's read asks for, so that every
// page of an output of n bytes, its own marker included, holds
// p.PageBytes; 0 when p sets no page bound, or one that leaves less than
// minPage bytes of text beside the marker (the read tool's own limit holds
// then: pages of a few bytes would be no way to read an output).
func (k *Keeper) pageLength(p shape.Policy, n int) int {
	if p.PageBytes <= 0 {
		return 0
	}
	// The widest marker a page can carry: N and the offset at most n.
	widest := cut.RestMarkerLen(n, cut.UnitBytes, cut.Rest{Tool: k.tool, Args: readArgs(zeroRef, n, p.PageBytes)})
	if l := p.PageBytes - widest; l >= minPage {
		return l
	}
	return 0
}

// minPage is the least text a page held to its tool's limit shows.
const minPage = 64

// reserve returns p with room kept for the read a marker names, for an
// output of n bytes, the read as written gives it out (asIs in a text,
// [cut.InJSONString] inside a string of a JSON document), and false when p has
// not that much room.
func (k *Keeper) reserve(p shape.Policy, n int, written func(string) string) (shape.Policy, bool) {
	// The offset is where the shown head ends: within the limit.
	r := cut.Rest{Tool: k.tool, Args: readArgs(zeroRef, min(n, p.MaxBytes), k.pageLength(p, n))}
	marker := cut.RestMarker(0, cut.UnitBytes, r)
	plain := cut.MarkerLen(0)
	// What the read adds: all but the plain marker's closing bracket.
	extra := len(written(marker[plain-1 : len(marker)-1]))
	q := p
	q.MaxBytes -= extra
	if q.MaxBytes < cut.MarkerLen(n)+1 {
		return p, false
	}
	if p.HoldsTokens() {
		// The suffix's tokens, and a few for where it meets the marker.
		q.MaxTokens -= p.Counter.Count(written(marker[plain:])) + 2
		if q.MaxTokens < 16 {
			return p, false
		}
	}
	return q, true
}

// asIs is how a read is written in a text: as it is.
func asIs(s string) string { return s }

// zeroRef stands for a ref where only its length matters: RefLen bytes
// of a ref's alphabet, so that it is written as a ref is, in a text as in
// a JSON string.
var zeroRef = strings.Repeat("0", RefLen)

// fits reports whether s is within p's limits, counting its tokens when p
// holds them (s is at most the byte limit long by then).
func fits(s string, p shape.Policy) bool {
	if len(s) > p.MaxBytes {
		return false
	}
	if !p.HoldsTokens() || len(s) <= p.MaxTokens {
		return true
	}
	return p.Counter.Count(s) <= p.MaxTokens
}

// fail logs a store failure, once per outage.
func (k *Keeper) fail(op string, err error) {
	if errors.Is(err, ErrFull) {
		k.logger.Warn("rest store full: output cut without keeping the rest", "op", op, "error", err)
		return
	}
	if k.failing.CompareAndSwap(false, true) {
		k.logger.Error("rest store failing: outputs are cut without keeping the rest until it recovers", "op", op, "error", err)
	}
}

// recovered logs the end of an outage.
func (k *Keeper) recovered() {
	if k.failing.CompareAndSwap(true, false) {
		k.logger.Info("rest store recovered: cuts keep the rest again")
	}
}
