// Package history ages the tool results of a conversation history: once
// the tool results an agent is about to send pass a budget, the oldest
// become stubs that name the read of the whole original, which a
// [rest.Keeper] keeps, so that nothing is lost:
//
//	[tool result cleared: 48211 bytes; read it again: toolcap_read {"ref":"…","offset":0}]
//
// A result fits its limit when it enters the history (package worker);
// the history as a whole is re-sent on every request, and a 40-step
// session re-sends each result 40 times. An [Ager] keeps that in bounds
// and stays friendly to the provider's prompt cache:
//
//   - it ages oldest-first, in batches that free at least
//     [Config].ClearAtLeast tokens, so that between two batches every
//     request extends the previous one byte for byte;
//   - a stub, once written, is the same bytes on every later pass (the
//     Ager remembers it by the tool call's id, whether the agent keeps the
//     history it returned or sends the original again);
//   - it changes a result's content only, never its id or its place, so a
//     tool call and its result stay paired in every provider's format.
//
// The model reads a stub back with the read tool the cut already names
// (toolcap_read), which a worker answers from the same store.
//
// An Ager works on [Result] values, which an adapter reads from a
// provider's messages and writes back: adapters/anthropiccap for the
// Anthropic Go SDK; a home-made loop builds them itself.
package history

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/tokens"
)

// A Result is one tool result of a history, in the history's order.
type Result struct {
	// ID is the id of the tool call the result answers (Anthropic's
	// tool_use_id, OpenAI's call_id): a result without one is never aged.
	ID string
	// Tool is the name of the tool that made it, when known: [Config].Never
	// names tools by it.
	Tool string
	// Text is the result's content as the model reads it.
	Text string
	// Keep marks a result the adapter cannot replace by a text stub, such
	// as one that holds an image: it counts toward the budget and is never
	// aged.
	Keep bool
}

// Config is how an [Ager] ages.
type Config struct {
	// MaxTokens is the budget: the most tokens the tool results of a
	// history hold, stubs included, before the oldest are aged. 0 turns
	// ageing off.
	MaxTokens int
	// KeepRecent is how many of the most recent results are never aged,
	// whatever the budget: the ones the model is working with. 0 means
	// [DefaultKeepRecent]; a negative value, none.
	KeepRecent int
	// ClearAtLeast is the least a pass frees, in tokens: a history over
	// the budget is rewritten only when aging can free that much, and
	// then at least that much is freed, so that the prompt cache breaks
	// once per batch, not on every request. 0 means a quarter of
	// MaxTokens.
	ClearAtLeast int
	// Never names the tools whose results are never aged.
	Never []string
	// Counter counts tokens: an exact tokenizer (module tiktoken), or nil
	// for the calibrated estimate of package tokens.
	Counter tokens.Counter
	// ReadTool is the name of the read tool a stub names, the one the
	// worker that answers it registers; "" means toolcap_read.
	ReadTool string
	// Logger receives one line per pass that ages; nil is silent.
	Logger hclog.Logger
}

// DefaultKeepRecent is how many of the most recent results are never
// aged when [Config].KeepRecent is 0.
const DefaultKeepRecent = 4

// maxMemory bounds the stubs an Ager remembers; past it the oldest are
// forgotten (a history that long has sent them many times over).
const maxMemory = 1 << 16

// Ager ages the tool results of histories. It is safe for concurrent use;
// one Ager serves one conversation or many (a stub is found by its tool
// call's id, which providers make unique).
type Ager struct {
	c      Config
	keeper *rest.Keeper
	never  map[string]bool
	stubMu sync.Mutex
	stubs  map[string]string // tool call id -> its stub
	order  []string          // ids in the order their stubs were made

	// counts holds each result's token count by its tool call id, with
	// the text counted: a history is re-sent whole every turn, and an
	// exact tokenizer need not count the same text twice.
	countMu    sync.Mutex
	counts     map[string]counted
	countOrder []string
}

// counted is a text and its token count.
type counted struct {
	text string
	n    int
}

// New returns an Ager that keeps what it ages in store, the store of the
// worker (or other front end) that answers the stubs' reads. It returns an
// error for a nil store, a read tool name that is not a tool name, or a
// negative budget.
func New(store rest.Store, c Config) (*Ager, error) {
	if store == nil {
		return nil, errors.New("history: a store is required: a stub names the read of what the store keeps")
	}
	opts := []rest.KeeperOption{rest.WithLogger(c.Logger)}
	if c.ReadTool != "" {
		opts = append(opts, rest.WithTool(c.ReadTool))
	}
	k, err := rest.NewKeeper(store, opts...)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	switch {
	case c.MaxTokens < 0:
		return nil, fmt.Errorf("history: MaxTokens %d: want 0 (off) or a budget in tokens", c.MaxTokens)
	case c.ClearAtLeast < 0:
		return nil, fmt.Errorf("history: ClearAtLeast %d: want 0 (a quarter of MaxTokens) or tokens", c.ClearAtLeast)
	}
	if c.KeepRecent == 0 {
		c.KeepRecent = DefaultKeepRecent
	}
	if c.ClearAtLeast == 0 {
		c.ClearAtLeast = c.MaxTokens / 4
	}
	if c.Counter == nil {
		c.Counter = tokens.NewCalibrated()
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	a := &Ager{c: c, keeper: k, never: map[string]bool{}, stubs: map[string]string{}, counts: map[string]counted{}}
	for _, t := range c.Never {
		a.never[t] = true
	}
	return a, nil
}

// Aged is one result a pass replaced by its stub.
type Aged struct {
	// Index is the result's index in the slice given to [Ager.Age].
	Index int
	// ID is its tool call's id.
	ID string
	// Stub is the text that replaces its content.
	Stub string
	// Ref names the store's entry that keeps the original; the stub's read
	// starts at offset 0.
	Ref string
	// Bytes and Tokens are what the content the stub replaces held.
	Bytes, Tokens int
	// Again reports a result aged by an earlier pass whose original the
	// caller sent again: its stub is the one written then.
	Again bool
}

// Pass is what one call of [Ager.Age] did.
type Pass struct {
	// Aged lists the results to replace by their stubs, in history order.
	Aged []Aged
	// Tokens is what the history's tool results held before the pass,
	// and After what they hold with the stubs.
	Tokens, After int
	// Freed is what the pass freed: results, bytes and tokens, of the
	// results newly aged (not those aged again).
	Freed struct{ Results, Bytes, Tokens int }
}

// Age decides which of a history's tool results become stubs, keeps each
// one's original in the store (under the scope of ctx, as a cut does:
// [rest.WithScope]), and returns the pass; the caller writes each Aged's
// Stub in place of its result's content. results is in history order,
// oldest first. A result the store cannot keep whole is not aged, and an
// error is returned only for a context that is done.
func (a *Ager) Age(ctx context.Context, results []Result) (Pass, error) {
	var p Pass
	if err := ctx.Err(); err != nil {
		return p, err
	}
	sizes := make([]int, len(results))
	aged := make([]bool, len(results))
	seen := map[string]int{}
	for i, r := range results {
		seen[r.ID]++
		sizes[i] = a.count(r)
		p.Tokens += sizes[i]
	}
	// A result aged before, sent again as it was: the same stub, so that
	// the request is the same bytes as the last one.
	for i, r := range results {
		if r.ID == "" || seen[r.ID] > 1 || r.Keep {
			continue
		}
		stub, ok := a.remembered(r.ID)
		if !ok || stub == r.Text {
			continue
		}
		aged[i] = true
		st := a.count(Result{ID: r.ID, Text: stub})
		p.Aged = append(p.Aged, Aged{Index: i, ID: r.ID, Stub: stub, Ref: stubRef(stub), Bytes: len(r.Text), Tokens: sizes[i], Again: true})
		sizes[i] = st
	}
	total := 0
	for _, s := range sizes {
		total += s
	}
	p.After = total
	if a.c.MaxTokens == 0 || total <= a.c.MaxTokens {
		sortAged(p.Aged)
		return p, nil
	}

	// The candidates, oldest first, and what each would free.
	protectedFrom := len(results) - max(a.c.KeepRecent, 0)
	var chosen []int
	freed := 0
	need := max(total-a.c.MaxTokens, a.c.ClearAtLeast)
	for i, r := range results {
		if freed >= need {
			break
		}
		if i >= protectedFrom || aged[i] || r.Keep || r.ID == "" || seen[r.ID] > 1 || a.never[r.Tool] || isStub(r.Text, a.keeper.Tool()) {
			continue
		}
		gain := sizes[i] - a.c.Counter.Count(stubText(len(r.Text), a.keeper.Tool(), zeroRef))
		if gain <= 0 {
			continue
		}
		chosen = append(chosen, i)
		freed += gain
	}
	if freed < a.c.ClearAtLeast {
		// Over the budget, but what ageing could free is not worth a
		// break of the prompt cache yet.
		sortAged(p.Aged)
		return p, nil
	}
	for _, i := range chosen {
		if err := ctx.Err(); err != nil {
			return Pass{}, err
		}
		r := results[i]
		stub, ref, ok := a.stub(ctx, r)
		if !ok {
			continue
		}
		st := a.c.Counter.Count(stub)
		p.Aged = append(p.Aged, Aged{Index: i, ID: r.ID, Stub: stub, Ref: ref, Bytes: len(r.Text), Tokens: sizes[i]})
		p.Freed.Results++
		p.Freed.Bytes += len(r.Text) - len(stub)
		p.Freed.Tokens += sizes[i] - st
		p.After -= sizes[i] - st
	}
	sortAged(p.Aged)
	if p.Freed.Results > 0 {
		refs := make([]string, 0, p.Freed.Results)
		for _, g := range p.Aged {
			if !g.Again {
				refs = append(refs, g.Ref)
			}
		}
		a.c.Logger.Info("aged the history's oldest tool results", "results", p.Freed.Results,
			"freed_bytes", p.Freed.Bytes, "freed_tokens", p.Freed.Tokens,
			"tokens", p.Tokens, "after_tokens", p.After, "budget_tokens", a.c.MaxTokens, "refs", refs)
	}
	return p, nil
}

// stub keeps r's original and returns its stub, remembered by r's id: a
// result already cut names the read of its kept whole (the stub reads it
// from 0); any other is kept now.
func (a *Ager) stub(ctx context.Context, r Result) (stub, ref string, ok bool) {
	n := len(r.Text)
	if cutRef, original, found := a.keptRef(ctx, r.Text); found {
		ref, n = cutRef, original
	} else if ref, ok = a.keeper.Keep(ctx, r.Text); !ok {
		return "", "", false
	}
	stub = stubText(n, a.keeper.Tool(), ref)
	a.remember(r.ID, stub)
	return stub, ref, true
}

// keptRef returns the ref a cut's marker in text names, and the length of
// the whole output the store keeps under it, when it still does and the
// marker is text's own: what text shows and what the marker says it
// dropped add up to that output (a marker merely quoted in a result,
// such as a saved transcript a tool prints, names another output).
func (a *Ager) keptRef(ctx context.Context, text string) (ref string, original int, ok bool) {
	scope, hasScope := rest.ScopeFrom(ctx)
	if !hasScope {
		return "", 0, false
	}
	ms := cut.FindMarkers(text)
	for i := len(ms) - 1; i >= 0; i-- {
		m := ms[i]
		if m.Rest == nil || m.Rest.Tool != a.keeper.Tool() {
			continue
		}
		args, err := rest.ParseReadArgs([]byte(m.Rest.Args))
		if err != nil || !rest.ValidRef(args.Ref) {
			continue
		}
		rd, err := a.keeper.Store().Open(ctx, scope, args.Ref)
		if err != nil {
			return "", 0, false
		}
		info := rd.Info()
		_ = rd.Close()
		if info.Size < info.Original {
			return "", 0, false // the store kept only its start
		}
		// A head or head_tail cut shows the output less N; a json cut
		// puts a newline before its marker.
		shown := len(text) - (m.End - m.Start)
		if m.Unit != cut.UnitBytes || (shown+m.N != int(info.Original) && shown-1+m.N != int(info.Original)) {
			return "", 0, false
		}
		return args.Ref, int(info.Original), true
	}
	return "", 0, false
}

// count returns the tokens of r's text, counted once for each id and text.
func (a *Ager) count(r Result) int {
	if r.ID == "" {
		return a.c.Counter.Count(r.Text)
	}
	a.countMu.Lock()
	c, ok := a.counts[r.ID]
	a.countMu.Unlock()
	if ok && c.text == r.Text {
		return c.n
	}
	n := a.c.Counter.Count(r.Text)
	a.countMu.Lock()
	defer a.countMu.Unlock()
	if _, ok := a.counts[r.ID]; !ok {
		a.countOrder = append(a.countOrder, r.ID)
	}
	a.counts[r.ID] = counted{r.Text, n}
	for len(a.countOrder) > maxMemory {
		delete(a.counts, a.countOrder[0])
		a.countOrder = a.countOrder[1:]
	}
	return n
}

func (a *Ager) remembered(id string) (string, bool) {
	a.stubMu.Lock()
	defer a.stubMu.Unlock()
	s, ok := a.stubs[id]
	return s, ok
}

func (a *Ager) remember(id, stub string) {
	a.stubMu.Lock()
	defer a.stubMu.Unlock()
	if _, ok := a.stubs[id]; !ok {
		a.order = append(a.order, id)
	}
	a.stubs[id] = stub
	for len(a.order) > maxMemory {
		delete(a.stubs, a.order[0])
		a.order = a.order[1:]
	}
}

// zeroRef stands for a ref where only its length matters.
const zeroRef = "00000000000000000000000000"

// stubText is the stub of an output of n bytes kept under ref, read with
// tool.
func stubText(n int, tool, ref string) string {
	return "[tool result cleared: " + strconv.Itoa(n) + ` bytes; read it again: ` + tool + ` {"ref":"` + ref + `","offset":0}]`
}

// stubRE matches a stub, the read tool's name and ref captured. It is
// compiled on first use: its counted repetitions make a program of over
// a thousand instructions, 0.15 ms and 90 KB at the start of every
// process that links the package (the Claude Code hook's, a process a
// tool call).
var stubRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\[tool result cleared: [0-9]+ bytes; read it again: ([A-Za-z0-9_.-]{1,64}) \{"ref":"([a-z2-7]{26})","offset":0\}\]$`)
})

// isStub reports whether text is a stub of tool's.
func isStub(text, tool string) bool {
	m := stubRE().FindStringSubmatch(text)
	return m != nil && m[1] == tool
}

// stubRef returns the ref a stub names.
func stubRef(stub string) string {
	if m := stubRE().FindStringSubmatch(stub); m != nil {
		return m[2]
	}
	return ""
}

// sortAged puts a pass's results in history order.
func sortAged(g []Aged) {
	slices.SortFunc(g, func(x, y Aged) int { return cmp.Compare(x.Index, y.Index) })
}
