package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/toolcap/toolcap/adapters/capvalue"
	"github.com/toolcap/toolcap/cut"
	"github.com/toolcap/toolcap/shape"
	"github.com/toolcap/toolcap/middleware"
)

const hookHelp = `Usage: toolcap hook claude-code [--manifest FILE]... [-v] < payload

A Claude Code PostToolUse hook. Reads the hook's JSON payload on standard
input (tool_name, tool_response, ...) and, when the tool's output is over the
limit a toolcap worker applies to tool_name (its per_tool entry, or else
default_max_bytes, from the built-in default, the --manifest files and the
TOOLCAP_ environment), prints

  {"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":...}}

whose updatedToolOutput has the tool's own output shape, cut to the limit
by the tool's strategy (head, or head_tail and keep_lines, as a worker cuts),
marker "[truncated: N bytes dropped, refine your query]" included. Output
within the limit prints nothing. The text the model reads shares the limit: Bash's stdout
and stderr, Read's file content, Grep's content and file names, Glob's file
names, WebFetch's result, the text blocks of an MCP tool; other tools' output
is held to the limit as JSON. Images and other binary data are left alone.

A token limit (default_max_tokens, a per_tool entry's max_tokens) holds as
well for those texts, which share it as they share the byte limit. Tokens
are counted by the "calibrated" tokenizer at its conservative default, 2
bytes a token (the hook sees no provider's counts). When the token limit
cuts a text, its marker counts tokens: "[truncated: N tokens dropped,
refine your query]"; a text longer than 32 bytes per token of its share,
and a list of file names, keep a marker that counts bytes. Output held as
JSON (other tools, notebook cells, structuredContent) is held to the byte
limit only. A manifest that sets a token limit and names an exact
tokenizer (o200k_base, cl100k_base) is a configuration error.

Claude Code runs hooks in parallel, each on the tool's original output, so
only the per-call limit applies here: no budget across calls.

settings.json:

  {"hooks": {"PostToolUse": [{"matcher": "*",
    "hooks": [{"type": "command", "command": "toolcap hook claude-code"}]}]}}

Exit status: 0 when the payload was handled, and also when it was not a
PostToolUse payload or not JSON: then one warning goes to standard error,
nothing to standard output, and the tool's output reaches the model as it is
(the hook never blocks a tool). 1 on a configuration error (a bad manifest or
TOOLCAP_ variable), which Claude Code reports without blocking the tool. 2
on a usage error. -v logs the limit in force and the cut.
`

func runHook(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int {
	fs := newFlags("hook")
	var (
		layers  layerFlags
		verbose verbosity
	)
	layers.register(fs)
	fs.Var(&verbose, "v", "log the limit in force and the cut to standard error")
	operands, code, ok := parse(fs, hookHelp, args, stdout, stderr)
	if !ok {
		return code
	}
	switch {
	case len(operands) == 0:
		fmt.Fprintln(stderr, "toolcap hook: name the agent: toolcap hook claude-code")
		return exitUsage
	case operands[0] != "claude-code":
		fmt.Fprintf(stderr, "toolcap hook: unknown agent %q: the one supported is claude-code\n", operands[0])
		return exitUsage
	case len(operands) > 1:
		fmt.Fprintf(stderr, "toolcap hook claude-code: unexpected argument %q: the payload comes on standard input\n", operands[1])
		return exitUsage
	}

	// A hook is a short process that allocates a few times its payload and
	// exits: collecting garbage only slows it (a collection on a busy
	// machine stalls it for tens of milliseconds, the p95 of the benchmark
	// tripled), so the collector waits for a memory limit instead.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(hookMemoryLimit))

	in, err := readPayload(stdin)
	if err != nil {
		// Fail open: the tool's output goes on unchanged.
		fmt.Fprintf(stderr, "toolcap hook claude-code: warning: %v; tool output left as it is\n", err)
		return exitOK
	}
	logger := newLogger(stderr, verbose.level()).Named("toolcap")
	res, err := layers.resolve(ctx, env, logger)
	if err != nil {
		fmt.Fprintf(stderr, "toolcap: %s (tool output left as it is)\n", oneLine(err.Error()))
		return exitFailed
	}
	policies, err := res.Manifest.Limits().Policies()
	if err != nil {
		fmt.Fprintf(stderr, "toolcap: %s (tool output left as it is)\n", oneLine(err.Error()))
		return exitFailed
	}
	policy := policies.For(in.ToolName)
	limit, source := limitFor(res, in.ToolName)
	counter, err := counterFor(res)
	if err != nil {
		fmt.Fprintf(stderr, "toolcap: %s (tool output left as it is)\n", oneLine(err.Error()))
		return exitFailed
	}
	b := budget{limit: limit, spec: policy.Spec}
	fields := []any{"tool", in.ToolName, "limit", limit, "source", source, "strategy", string(policy.Spec.Keep)}
	if policy.MaxTokens > 0 {
		b.tokens, b.counter = policy.MaxTokens, counter
		fields = append(fields, "limit_tokens", b.tokens, "tokenizer", res.Manifest.Limits().TokenizerName())
	}
	logger.Info("limit in force", fields...)
	out, dropped, err := capToolResponse(in.ToolName, in.ToolResponse, b)
	if err != nil {
		fmt.Fprintf(stderr, "toolcap hook claude-code: warning: tool_response of %s: %v; tool output left as it is\n", in.ToolName, err)
		return exitOK
	}
	if dropped == 0 {
		return exitOK
	}
	fields = []any{"tool", in.ToolName, "call_id", in.ToolUseID,
		"original_bytes", len(in.ToolResponse), "dropped_bytes", dropped, "limit", limit}
	if b.tokens > 0 {
		fields = append(fields, "limit_tokens", b.tokens)
	}
	logger.Info("tool result truncated", fields...)
	reply, err := marshal(hookReply{HookSpecificOutput: hookSpecificOutput{
		HookEventName:     "PostToolUse",
		UpdatedToolOutput: out,
	}})
	if err == nil {
		_, err = stdout.Write(append(reply, '\n'))
	}
	if err != nil {
		fmt.Fprintf(stderr, "toolcap hook claude-code: standard output: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// hookMemoryLimit is the heap size at which the hook collects garbage: a
// payload of up to about 100 MiB never gets there.
const hookMemoryLimit = 1 << 30

// hookInput is the part of Claude Code's PostToolUse payload (the
// PostToolUseHookInput type of @anthropic-ai/claude-agent-sdk) the hook
// reads.
type hookInput struct {
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolUseID     string          `json:"tool_use_id"`
	ToolResponse  json.RawMessage `json:"tool_response"`
}

// hookReply is a SyncHookJSONOutput with a PostToolUseHookSpecificOutput.
type hookReply struct {
	HookSpecificOutput hookSpecificOutput `json:"hookSpecificOutput"`
}

type hookSpecificOutput struct {
	HookEventName     string          `json:"hookEventName"`
	UpdatedToolOutput json.RawMessage `json:"updatedToolOutput"`
}

func readPayload(r io.Reader) (hookInput, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return hookInput{}, fmt.Errorf("reading the payload: %v", err)
	}
	var in hookInput
	if err := json.Unmarshal(data, &in); err != nil {
		return hookInput{}, fmt.Errorf("the payload is not a JSON hook payload: %v", shortErr(err))
	}
	switch {
	case in.HookEventName != "PostToolUse":
		return hookInput{}, fmt.Errorf("hook_event_name is %q, not \"PostToolUse\": register the hook under PostToolUse", in.HookEventName)
	case in.ToolName == "":
		return hookInput{}, errors.New("the payload has no tool_name")
	}
	return in, nil
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// capToolResponse cuts a tool's output to limit, keeping its shape, and
// returns it with the number of bytes dropped (0: nothing to replace).
func capToolResponse(tool string, resp json.RawMessage, b budget) (json.RawMessage, int, error) {
	if len(bytes.TrimSpace(resp)) == 0 || bytes.Equal(bytes.TrimSpace(resp), []byte("null")) {
		return nil, 0, nil
	}
	switch tool {
	case "Bash":
		return capObject(resp, b, capBash)
	case "Read":
		return capObject(resp, b, capRead)
	case "Grep":
		return capObject(resp, b, capGrep)
	case "Glob":
		return capObject(resp, b, capGlob)
	case "WebFetch":
		return capObject(resp, b, func(o object, b budget) (int, error) {
			return o.cutString("result", b)
		})
	}
	return capGeneric(resp, b)
}

// budget is a tool's limits and how its text is cut: the strategy its
// manifest names (head, head_tail, json), applied by package cut as the
// worker applies it.
type budget struct {
	limit int
	spec  cut.Spec
	// tokens is the tool's token limit (0: none), counted by counter. The
	// texts a cut shares the byte limit among share it too (see shared).
	tokens  int
	counter cut.Counter
}

// hasTokens reports whether b holds its texts to a token limit.
func (b budget) hasTokens() bool { return b.tokens > 0 && b.counter != nil }

// fits reports whether n bytes of JSON are known to be within both limits
// without a look inside: a counter counts at most a token per byte.
func (b budget) fits(n int) bool {
	return n <= b.limit && (!b.hasTokens() || n <= b.tokens)
}

// count returns the tokens of s, or len(s), a bound on them, when s is too
// long to be counted whole under the token limit (cut.TokenWindow): that
// is enough to share the limit, and it keeps counting bounded.
func (b budget) count(s string) int {
	if len(s) > cut.TokenWindow(b.tokens) {
		return len(s)
	}
	return b.counter.Count(s)
}

// text cuts s to limit bytes and, with a token limit, to toks tokens, by
// the tool's strategy, and returns it with the number of bytes it no
// longer shows (for a JSON text the json strategy only compacted, the
// whitespace it removed), so that 0 means unchanged.
func (b budget) text(s string, limit, toks int) (string, int) {
	var out string
	var st cut.Stats
	if b.hasTokens() {
		out, st = cut.CutTokens(s, limit, toks, b.counter, b.spec)
	} else {
		out, st = cut.Cut(s, limit, b.spec)
	}
	if st.Dropped == 0 && out != s {
		return out, len(s) - len(out)
	}
	return out, st.Dropped
}

// shared cuts ss to share limit bytes and, with a token limit, the whole
// token limit: the byte shares are capvalue.Strings's (short strings whole,
// long ones equal), the token shares the same rule's over their counts;
// each string is cut by the tool's strategy to its two shares.
func (b budget) shared(ss []string, limit int) ([]string, int) {
	shares, dropped := capvalue.Strings(ss, limit)
	var toks, counts []int
	if b.hasTokens() {
		counts = make([]int, len(ss))
		for i, s := range ss {
			counts[i] = b.count(s)
		}
		toks = b.tokenShares(counts)
	}
	if dropped == 0 && toks == nil {
		return ss, 0
	}
	out := make([]string, len(ss))
	dropped = 0
	for i, s := range ss {
		bs, ts := len(shares[i]), 0
		if toks != nil {
			ts = toks[i]
			if ts == 0 {
				bs = 0 // more texts than tokens: this one is dropped whole
			}
		} else if counts != nil {
			ts = counts[i]
		}
		if bs >= len(s) && (counts == nil || ts >= counts[i]) {
			out[i] = s
			continue
		}
		var d int
		out[i], d = b.text(s, bs, ts)
		dropped += d
	}
	return out, dropped
}

// tokenShares shares the token limit among texts of the given counts by
// water-filling ([shape.WaterFill]), or returns nil when they fit as they
// are.
func (b budget) tokenShares(counts []int) []int {
	total := 0
	for _, n := range counts {
		total += n
	}
	if total <= b.tokens {
		return nil
	}
	return shape.WaterFill(counts, b.tokens)
}

// object is a JSON object whose members are decoded only when a cut needs
// them, so that the rest is written back byte for byte.
type object map[string]json.RawMessage

// capObject decodes resp as an object and applies cut, or the generic rule
// when resp is not an object.
func capObject(resp json.RawMessage, b budget, cut func(object, budget) (int, error)) (json.RawMessage, int, error) {
	if b.fits(len(resp)) {
		return nil, 0, nil // the text in it is shorter than its JSON
	}
	var o object
	if err := json.Unmarshal(resp, &o); err != nil || o == nil {
		return capGeneric(resp, b)
	}
	dropped, err := cut(o, b)
	if err != nil || dropped == 0 {
		return nil, 0, err
	}
	out, err := marshal(o)
	return out, dropped, err
}

func (o object) str(key string) (string, error) {
	raw, ok := o[key]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s is not a string", key)
	}
	return s, nil
}

func (o object) strs(key string) ([]string, error) {
	raw, ok := o[key]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var s []string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%s is not an array of strings", key)
	}
	return s, nil
}

func (o object) set(key string, v any) error {
	raw, err := marshal(v)
	if err != nil {
		return err
	}
	o[key] = raw
	return nil
}

func (o object) is(key, want string) bool {
	s, err := o.str(key)
	return err == nil && s == want
}

func (o object) cutString(key string, b budget) (int, error) {
	s, err := o.str(key)
	if err != nil {
		return 0, err
	}
	capped, dropped := b.text(s, b.limit, b.tokens)
	if dropped == 0 {
		return 0, nil
	}
	return dropped, o.set(key, capped)
}

// capBash cuts a BashOutput: stdout and stderr share the limit. Output that
// is image data (isImage) is left alone.
func capBash(o object, b budget) (int, error) {
	if string(o["isImage"]) == "true" {
		return 0, nil
	}
	out, err := o.str("stdout")
	if err != nil {
		return 0, err
	}
	errOut, err := o.str("stderr")
	if err != nil {
		return 0, err
	}
	cut, dropped := b.shared([]string{out, errOut}, b.limit)
	if dropped == 0 {
		return 0, nil
	}
	if err := o.set("stdout", cut[0]); err != nil {
		return 0, err
	}
	return dropped, o.set("stderr", cut[1])
}

// capRead cuts a FileReadOutput of type "text" (file.content) or "notebook"
// (file.cells, held to the limit as JSON). Images, PDFs and page images are
// left alone: cutting their base64 would break them.
func capRead(o object, b budget) (int, error) {
	var file object
	if err := json.Unmarshal(o["file"], &file); err != nil || file == nil {
		return 0, nil
	}
	var dropped int
	switch {
	case o.is("type", "text"):
		content, err := file.str("content")
		if err != nil {
			return 0, err
		}
		capped, d := b.text(content, b.limit, b.tokens)
		if d == 0 {
			return 0, nil
		}
		if err := file.set("content", capped); err != nil {
			return 0, err
		}
		if err := file.set("numLines", strings.Count(capped, "\n")+1); err != nil {
			return 0, err
		}
		dropped = d
	case o.is("type", "notebook"):
		var cells any
		if err := decode(file["cells"], &cells); err != nil {
			return 0, nil
		}
		capped, d := capvalue.Cap(cells, b.limit)
		if d == 0 {
			return 0, nil
		}
		if _, ok := capped.([]any); !ok {
			return 0, nil // cells too many to keep as an array; leave them
		}
		if err := file.set("cells", capped); err != nil {
			return 0, err
		}
		dropped = d
	default:
		return 0, nil
	}
	return dropped, o.set("file", file)
}

// capGrep cuts a GrepOutput: content and the file names share the limits.
func capGrep(o object, b budget) (int, error) {
	content, err := o.str("content")
	if err != nil {
		return 0, err
	}
	names, err := o.strs("filenames")
	if err != nil {
		return 0, err
	}
	joined := strings.Join(names, "\n")
	// The shares Strings gives are the lengths of what it returns.
	cut, _ := capvalue.Strings([]string{content, joined}, b.limit)
	toks := []int{b.tokens, b.tokens} // unused without a token limit
	over := []bool{len(cut[0]) < len(content), len(cut[1]) < len(joined)}
	if b.hasTokens() {
		counts := []int{b.count(content), b.count(joined)}
		if fill := b.tokenShares(counts); fill != nil {
			toks = fill
			over[0] = over[0] || toks[0] < counts[0]
			over[1] = over[1] || toks[1] < counts[1]
		}
	}
	var dropped int
	if over[0] {
		c, d := b.text(content, len(cut[0]), toks[0])
		if err := o.set("content", c); err != nil {
			return 0, err
		}
		dropped += d
	}
	if over[1] {
		kept, d := b.lines(joined, len(cut[1]), toks[1])
		if err := o.set("filenames", kept); err != nil {
			return 0, err
		}
		if err := o.set("numFiles", len(kept)-1); err != nil {
			return 0, err
		}
		dropped += d
	}
	return dropped, nil
}

// capGlob cuts a GlobOutput's file names, and says they were truncated.
func capGlob(o object, b budget) (int, error) {
	names, err := o.strs("filenames")
	if err != nil {
		return 0, err
	}
	joined := strings.Join(names, "\n")
	if len(joined) <= b.limit && (!b.hasTokens() || b.count(joined) <= b.tokens) {
		return 0, nil
	}
	kept, dropped := b.lines(joined, b.limit, b.tokens)
	for key, v := range map[string]any{"filenames": kept, "numFiles": len(kept) - 1, "truncated": true} {
		if err := o.set(key, v); err != nil {
			return 0, err
		}
	}
	return dropped, nil
}

// lines is cutLines under a token limit as well: with one, it keeps the
// most whole lines whose join, marker included, counts at most toks
// tokens. The marker counts bytes, as cutLines's does.
func (b budget) lines(text string, limit, toks int) ([]string, int) {
	kept, dropped := cutLines(text, limit)
	if !b.hasTokens() || b.counter.Count(strings.Join(kept, "\n")) <= toks {
		return kept, dropped
	}
	// The longest byte limit below limit whose cut fits toks.
	lo, hi := 0, limit-1
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		k, _ := cutLines(text, mid)
		if b.counter.Count(strings.Join(k, "\n")) <= toks {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return cutLines(text, lo)
}

// cutLines cuts text, lines joined by "\n", by the text rule, but between
// lines: it keeps the whole lines of the longest head that fits, and returns
// them with the marker as a last line of its own (without its leading
// newline, which the join puts back). Joined, the result is text[:k] +
// Marker(len(text)-k), at most limit bytes.
func cutLines(text string, limit int) ([]string, int) {
	_, dropped := middleware.Truncate(text, limit)
	k := len(text) - dropped
	if k < len(text) && text[k] != '\n' {
		k = max(strings.LastIndexByte(text[:k], '\n'), 0)
	}
	dropped = len(text) - k
	marker := strings.TrimPrefix(middleware.Marker(dropped), "\n")
	if k == 0 {
		return []string{marker}, dropped
	}
	return append(strings.Split(text[:k], "\n"), marker), dropped
}

// capGeneric cuts the output of any other tool, MCP tools included, keeping
// its shape: a string by the text rule; content blocks
// ([{"type":"text","text":...}, ...], alone or as the content of an object)
// by their text, which all text blocks share, other blocks left alone; any
// other value by its JSON encoding, strings cut (see capvalue.Cap). An
// object's structuredContent is held to the limit on its own, as toolcap mcp
// does.
func capGeneric(resp json.RawMessage, b budget) (json.RawMessage, int, error) {
	limit := b.limit
	var v any
	if err := decode(resp, &v); err != nil {
		return nil, 0, fmt.Errorf("not JSON: %v", shortErr(err))
	}
	var dropped int
	switch x := v.(type) {
	case string:
		var d int
		v, d = b.text(x, limit, b.tokens)
		dropped = d
	case []any:
		d, ok := capBlocks(x, b)
		if !ok {
			v, d = capvalue.Cap(x, limit)
		}
		dropped = d
	case map[string]any:
		blocks, isBlocks := x["content"].([]any)
		if isBlocks {
			var d int
			if d, isBlocks = capBlocks(blocks, b); isBlocks {
				dropped += d
				if sc, ok := x["structuredContent"]; ok {
					x["structuredContent"], d = capvalue.Cap(sc, limit)
					dropped += d
				}
			}
		}
		if !isBlocks {
			v, dropped = capvalue.Cap(x, limit)
		}
	}
	if dropped == 0 {
		return nil, 0, nil
	}
	out, err := marshal(v)
	return out, dropped, err
}

// capBlocks cuts the text of the text blocks of content in place, sharing
// limit, and reports ok == false when content is not an array of blocks
// (objects with a string "type").
func capBlocks(content []any, b budget) (dropped int, ok bool) {
	var texts []string
	var at []map[string]any
	for _, c := range content {
		b, isObj := c.(map[string]any)
		if !isObj {
			return 0, false
		}
		typ, isStr := b["type"].(string)
		if !isStr {
			return 0, false
		}
		if text, isText := b["text"].(string); typ == "text" && isText {
			texts = append(texts, text)
			at = append(at, b)
		}
	}
	if len(texts) == 0 {
		return 0, true // images and other blocks only: nothing to cut
	}
	cut, dropped := b.shared(texts, b.limit)
	for i, blk := range at {
		blk["text"] = cut[i]
	}
	return dropped, true
}

func decode(raw json.RawMessage, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	return d.Decode(v)
}

// marshal is json.Marshal without HTML escaping and the trailing newline.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
