package manifest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolcap/toolcap/internal/settings"
	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/internal/suggest"
)

const (
	// DefaultMaxBytes is the limit for every tool that has no limit of its
	// own: 16384 bytes (16 KiB), a safe margin under a 30k input
	// tokens/min rate limit. It is shape.DefaultMaxBytes: one home.
	DefaultMaxBytes = shape.DefaultMaxBytes

	// MinMaxBytes is the smallest limit accepted. The truncation marker alone
	// takes 48 to 66 bytes; 128 leaves room for content beside it.
	MinMaxBytes = 128

	// MaxMaxBytes is the largest limit accepted, 64 MiB. Anything larger is
	// no cap at all for an LLM's context and is taken for a mistake.
	MaxMaxBytes = 64 << 20

	// minMaxTokens is the smallest token limit accepted: the token marker
	// alone counts about a dozen tokens.
	minMaxTokens = 32

	// maxMaxTokens is the largest token limit accepted, 16 Mi tokens.
	maxMaxTokens = 16 << 20
)

// The tokenizers a manifest can name in its tokenizer key. The core counts
// with "calibrated" (package tokens); the exact ones are in module
// github.com/toolcap/toolcap/tiktoken.
const (
	tokenizerCalibrated = "calibrated"
	tokenizerO200k      = "o200k_base"
	tokenizerCl100k     = "cl100k_base"
)

// tokenizers lists the names the tokenizer key accepts.
var tokenizers = []string{tokenizerCalibrated, tokenizerO200k, tokenizerCl100k}

// Bounds and defaults of the [worker.tool_output.rest] table. The store's
// own defaults (its quota, its bound on an entry, its time to live) are
// package rest's: a front end applies them to what the manifest leaves
// unset.
const (
	// defaultRestTool is the read tool's name when the manifest names
	// none: the name the marker of a kept cut tells the model to call.
	defaultRestTool = "toolcap_read"

	// maxRestBytes is the largest max_bytes or max_entry_bytes accepted,
	// 1 TiB: larger is taken for a mistake (a unit slip), not a quota.
	maxRestBytes int64 = 1 << 40

	// maxRestTTL is the longest ttl accepted, a year (365 days): what is
	// kept for a model to read on is a cache, not an archive.
	maxRestTTL = 365 * 24 * time.Hour
)

// restStores lists the stores named by a word.
var restStores = []string{settings.RestStoreMemory, settings.RestStoreDir}

// WorkerManifest is the [worker] table of a manifest, as far as toolcap reads
// it.
type WorkerManifest struct {
	// ToolOutput is the [worker.tool_output] table. Nil means it was omitted:
	// DefaultMaxBytes then applies to every tool.
	ToolOutput *ToolOutputLimits
}

// ToolOutputLimits caps the content of tool results, in bytes and,
// optionally, in tokens. Where a tool has both limits, both hold.
type ToolOutputLimits struct {
	// DefaultMaxBytes applies to every tool without its own MaxBytes in
	// PerTool. In a Go value, 0 means "not set" and DefaultMaxBytes (the
	// constant) applies; in a file or the environment an explicit 0 is an
	// error.
	DefaultMaxBytes int

	// BatchMaxBytes is the batch budget: the most bytes of content all the
	// results of one call of worker.ExecuteTools may carry together, shared
	// among them by water-filling (see package worker). 0 means no batch
	// budget: each result is held to its own limit only, as before the key
	// existed. In a file or the environment an explicit 0 is an error; omit
	// the key instead.
	BatchMaxBytes int

	// DefaultMaxTokens is the token limit of every tool without a
	// MaxTokens of its own in PerTool. 0 means none: such tools are held
	// to their byte limit only. In a file or the environment an explicit 0
	// is an error; omit the key instead.
	DefaultMaxTokens int

	// BatchMaxTokens is the batch budget in tokens, shared as
	// BatchMaxBytes is. 0 means none.
	BatchMaxTokens int

	// Tokenizer names how tokens are counted: tokenizerCalibrated (also
	// when empty), tokenizerO200k or tokenizerCl100k.
	Tokenizer string

	// Default is the strategy of every tool: the default_keep,
	// default_tail_share, default_keep_lines and default_fallback keys.
	// The zero Strategy is the head strategy.
	Default Strategy

	// KeepRest is keep_rest, the default of every tool: whether a cut
	// keeps what it drops so that the model can read on, where the front
	// end has a store (package rest). Nil means not set, which is true:
	// toolcap mcp and the CLI keep the rest unless told not to, and a Go
	// program's worker has a store only when the program passes one.
	KeepRest *bool

	// Redaction is the default redaction of every tool: the redact,
	// redact_patterns and redact_allow keys.
	Redaction Redaction

	// Rest is the [worker.tool_output.rest] table: where and how much the
	// store keeps. Nil means the table was omitted: every key takes the
	// front end's default.
	Rest *RestConfig

	// PerTool maps a tool's registered name to its per_tool entry: what
	// the entry sets over the defaults above, field by field.
	PerTool map[string]ToolEntry

	// History is the [worker.tool_output.history] table: how the tool
	// results of an agent's history age ([ToolOutputLimits.HistoryConfig]).
	// Nil means the table was omitted: no ageing.
	History *HistoryConfig

	// Clients is the [worker.tool_output.clients] table: the byte limit of
	// every result for an MCP client, by the name it gives in initialize's
	// clientInfo, over the built-in ones ([ToolOutputLimits.ClientLimit]).
	// toolcap mcp holds each tool of that client's calls to the smaller of
	// the tool's limit and the client's, so that the client does not cut
	// the result again where toolcap cannot see.
	Clients map[string]int
}

// RestConfig is the [worker.tool_output.rest] table: the bounds of the
// store that keeps what cuts drop, for the front ends that keep it. A zero
// field is not set; the front end applies package rest's default to it.
// In a file or the environment an explicit 0 is an error, an empty string
// the default.
type RestConfig struct {
	// Dir is the directory of a directory store: dir. "" is the front
	// end's default (toolcap's directory under the user cache directory).
	Dir string
	// MaxBytes is the quota, the most bytes all entries hold together:
	// max_bytes, above 0 and at most [maxRestBytes].
	MaxBytes int64
	// MaxEntryBytes is the most one entry keeps (past it the rest is
	// gone, and the marker says so): max_entry_bytes, above 0, at most
	// [maxRestBytes] and, when both are set, at most MaxBytes.
	MaxEntryBytes int64
	// TTL is how long an entry lives after it was written or last read:
	// ttl, a Go duration such as "24h", above 0 and at most [maxRestTTL].
	TTL time.Duration
	// Tool is the name of the read tool the marker names and the front end
	// answers: tool, 1 to 64 characters of [A-Za-z0-9_.-]. "" is
	// [defaultRestTool].
	Tool string
	// Store names the store: [settings.RestStoreMemory], [settings.RestStoreDir], the URL
	// of a Redis ([settings.IsRedisStore]: redis://host:6379/0, rediss:// for
	// TLS), or "" for the front end's choice. A URL may hold a password:
	// show it with [settings.RedactStore].
	Store string
}

// ToolEntry is one tool's per_tool entry: its own limits and strategy. A
// zero field is "not set", and the default applies to it. The short form
// of a manifest, Read = 32768, is ToolEntry{MaxBytes: 32768}; the long
// form, Bash = { max_bytes = 32768, max_tokens = 8000, keep = "head_tail" },
// sets the fields it names. Layers merge an entry field by field, so a
// later layer's short form changes MaxBytes only.
type ToolEntry struct {
	// MaxBytes is the tool's limit in bytes, marker included: max_bytes,
	// or the short form's value.
	MaxBytes int
	// MaxTokens is the tool's token limit, marker included: max_tokens.
	MaxTokens int
	// Strategy is how the tool's results are cut: keep, tail_share,
	// keep_lines and fallback. A field it does not set comes from
	// ToolOutputLimits.Default.
	Strategy Strategy
	// KeepRest is the tool's keep_rest; nil means not set, and
	// ToolOutputLimits.KeepRest applies. Bash = { keep_rest = false }
	// turns keeping the rest off for Bash alone.
	KeepRest *bool
	// Redaction is the tool's redact, redact_patterns and redact_allow; a
	// field it does not set comes from ToolOutputLimits.Redaction.
	Redaction Redaction
}

// Redaction is how the secrets of a tool's results are redacted before
// they are cut, kept or logged (package redact): the built-in rules (or
// the detector a program gives, [Policies.WithRedactor]) and the
// patterns of its own.
type Redaction struct {
	// Redact is redact; nil means not set, which is true. Bash = {
	// redact = false } turns redaction off for Bash alone.
	Redact *bool
	// Patterns is redact_patterns: regular expressions (Go syntax) of
	// secrets of the program's own, each match (or its first group)
	// redacted as "[redacted: custom]". A tool's own patterns replace the
	// default ones.
	Patterns []string
	// Allow is redact_allow: regular expressions of text that is not a
	// secret although a rule finds it (a documented example key); a
	// finding one of them matches whole is left as it is. A tool's own
	// list replaces the default one.
	Allow []string
}

// isZero reports whether r sets nothing.
func (r Redaction) isZero() bool { return r.Redact == nil && r.Patterns == nil && r.Allow == nil }

// short reports whether e is the short form, a byte limit alone (or
// nothing): how it is written, and named in errors.
func (e ToolEntry) short() bool {
	return e.MaxTokens == 0 && e.Strategy.isZero() && e.KeepRest == nil && e.Redaction.isZero()
}

// shown is e as errors about the entry as a whole show it: the short
// form's limit, or "(a table)".
func (e ToolEntry) shown() string {
	if e.short() {
		return strconv.Itoa(e.MaxBytes)
	}
	return "(a table)"
}

// Limits returns m's tool-output limits. It is safe on a nil m, and the
// result is safe to call For on even when nil.
func (m *WorkerManifest) Limits() *ToolOutputLimits {
	if m == nil {
		return nil
	}
	return m.ToolOutput
}

// Policies returns the policies of m's limits ([ToolOutputLimits.Policies]).
// It is safe on a nil m: every tool then gets DefaultMaxBytes and the head
// strategy.
func (m *WorkerManifest) Policies() (*shape.Policies, error) {
	return m.Limits().Policies()
}

// For returns the limit for tool: its PerTool entry's MaxBytes if it sets
// one, otherwise the default. A nil l, or one that sets only PerTool,
// gives DefaultMaxBytes (16384) to every tool without its own.
func (l *ToolOutputLimits) For(tool string) int {
	if l == nil {
		return DefaultMaxBytes
	}
	if n := l.PerTool[tool].MaxBytes; n > 0 {
		return n
	}
	if l.DefaultMaxBytes > 0 {
		return l.DefaultMaxBytes
	}
	return DefaultMaxBytes
}

// Batch returns the batch budget in bytes, 0 when there is none. It is safe
// on a nil l.
func (l *ToolOutputLimits) Batch() int {
	if l == nil || l.BatchMaxBytes < 0 {
		return 0
	}
	return l.BatchMaxBytes
}

// TokensFor returns the token limit for tool: the MaxTokens of its
// PerTool entry, otherwise DefaultMaxTokens; 0 when it has none. It is
// safe on a nil l.
func (l *ToolOutputLimits) TokensFor(tool string) int {
	if l == nil {
		return 0
	}
	if n := l.PerTool[tool].MaxTokens; n > 0 {
		return n
	}
	return max(l.DefaultMaxTokens, 0)
}

// BatchTokens returns the batch budget in tokens, 0 when there is none. It
// is safe on a nil l.
func (l *ToolOutputLimits) BatchTokens() int {
	if l == nil {
		return 0
	}
	return max(l.BatchMaxTokens, 0)
}

// HasTokens reports whether l sets any token limit: DefaultMaxTokens, a
// tool's MaxTokens, or BatchMaxTokens. Without one, tokens are never
// counted. It is safe on a nil l.
func (l *ToolOutputLimits) HasTokens() bool {
	if l == nil {
		return false
	}
	if l.DefaultMaxTokens > 0 || l.BatchMaxTokens > 0 {
		return true
	}
	for _, e := range l.PerTool {
		if e.MaxTokens > 0 {
			return true
		}
	}
	return false
}

// TokenizerName returns the tokenizer l counts tokens with:
// tokenizerCalibrated when l names none. It is safe on a nil l.
func (l *ToolOutputLimits) TokenizerName() string {
	if l == nil || l.Tokenizer == "" {
		return tokenizerCalibrated
	}
	return l.Tokenizer
}

// KeepRestFor reports whether a cut of tool keeps what it drops, where the
// front end has a store: the keep_rest of its PerTool entry if it sets
// one, otherwise KeepRest, otherwise true. It is safe on a nil l.
func (l *ToolOutputLimits) KeepRestFor(tool string) bool {
	if l == nil {
		return true
	}
	if b := l.PerTool[tool].KeepRest; b != nil {
		return *b
	}
	if l.KeepRest != nil {
		return *l.KeepRest
	}
	return true
}

// KeepsRest reports whether a cut of any tool keeps what it drops: true
// unless keep_rest turns it off for every tool (off by default, and on for
// no tool in PerTool). A front end opens a store only when it does. It is
// safe on a nil l.
func (l *ToolOutputLimits) KeepsRest() bool {
	if l == nil || l.KeepRest == nil || *l.KeepRest {
		return true
	}
	for _, e := range l.PerTool {
		if e.KeepRest != nil && *e.KeepRest {
			return true
		}
	}
	return false
}

// RestConfig returns the [worker.tool_output.rest] table, zero where it
// sets nothing, for the front end to apply its store's defaults to. It is
// safe on a nil l.
func (l *ToolOutputLimits) RestConfig() RestConfig {
	if l == nil || l.Rest == nil {
		return RestConfig{}
	}
	return *l.Rest
}

// RestTool returns the read tool's name: the rest table's tool, or
// [defaultRestTool]. It is safe on a nil l.
func (l *ToolOutputLimits) RestTool() string {
	if t := l.RestConfig().Tool; t != "" {
		return t
	}
	return defaultRestTool
}

// checkSizes says why the quota c sets cannot hold the bound on one entry
// it sets, or returns nil; sourceOf names the layer that set a key of the
// rest table. Each is checked on its own by its key; this is the one
// check of two keys together, made on the value all layers make.
func (c *RestConfig) checkSizes(sourceOf func(name string) string) error {
	if c == nil || c.MaxBytes == 0 || c.MaxEntryBytes <= c.MaxBytes {
		return nil
	}
	k := keyNamed(restName, "max_entry_bytes")
	return &Error{Source: sourceOf(k.name), Key: k.dotted(), Value: k.kind.show(c.MaxEntryBytes),
		Err: fmt.Errorf("above max_bytes (%d, set by %s): an entry must fit the quota", c.MaxBytes, sourceOf("max_bytes"))}
}

// Validate reports the first invalid limit or strategy of m, as an [*Error]
// whose source is "WorkerManifest": the keys of [worker.tool_output] in
// the order of the manifest reference, then each per_tool entry by tool
// name. A nil m, or a zero DefaultMaxBytes, is valid.
func (m *WorkerManifest) Validate() error {
	return m.Limits().validate()
}

// sourceGo is the Source of an error in a Go value.
const sourceGo = "WorkerManifest"

// validate checks every key l sets against its bounds. A per_tool entry in
// the short form has its MaxBytes checked even when 0: PerTool{"Read": {}}
// says nothing, which a manifest cannot write (Read = 0 is an error).
func (l *ToolOutputLimits) validate() error {
	if l == nil {
		return nil
	}
	for _, k := range keys {
		if v, ok := get(k.top(l)); ok {
			if err := k.kind.check(v); err != nil {
				return &Error{Source: sourceGo, Key: k.dotted(), Value: k.kind.show(v), Err: err}
			}
		}
	}
	if err := l.Rest.checkSizes(func(string) string { return sourceGo }); err != nil {
		return err
	}
	if err := l.validateClients(); err != nil {
		return err
	}
	for _, tool := range slices.Sorted(maps.Keys(l.PerTool)) {
		e := l.PerTool[tool]
		if err := checkToolName(tool); err != nil {
			return &Error{Source: sourceGo, Key: perToolKey(tool), Value: e.shown(), Err: err}
		}
		for _, k := range keys {
			if k.entry == nil {
				continue
			}
			v, ok := get(k.entry(&e))
			if !ok && !(k.short && e.short()) {
				continue
			}
			if err := k.kind.check(v); err != nil {
				return &Error{Source: sourceGo, Key: fieldKey(tool, k, e.short()), Value: k.kind.show(v), Err: err}
			}
		}
	}
	return nil
}

// fieldKey names the key of a per_tool entry's field in an error: the
// entry itself for the short form's field when the entry is written short
// (per_tool.Read), otherwise the field (per_tool.Bash.max_tokens).
func fieldKey(tool string, k *key, short bool) string {
	if k.short && short {
		return perToolKey(tool)
	}
	return perToolKey(tool) + "." + settings.TOMLKey(k.field)
}

// checkLimit says why n cannot be a limit, or returns nil.
func checkLimit(n int) error {
	switch {
	case n == 0:
		return fmt.Errorf("0 is not a limit; omit the key for the default (%d)", DefaultMaxBytes)
	case n < 0:
		return fmt.Errorf("a limit must be positive")
	case n < MinMaxBytes:
		return fmt.Errorf("below the minimum of %d bytes (the truncation marker alone takes up to 66)", MinMaxBytes)
	case n > MaxMaxBytes:
		return fmt.Errorf("above the maximum of %d bytes (64 MiB)", MaxMaxBytes)
	}
	return nil
}

// checkBatch says why n cannot be a batch budget, or returns nil. Its
// bounds are a limit's: a budget below MinMaxBytes leaves no room for the
// markers of its results.
func checkBatch(n int) error {
	if n == 0 {
		return fmt.Errorf("0 is not a batch budget; omit the key for none")
	}
	return checkLimit(n)
}

// checkTokens says why n cannot be a token limit or budget, or returns nil.
func checkTokens(n int) error {
	switch {
	case n == 0:
		return fmt.Errorf("0 is not a token limit; omit the key for none")
	case n < 0:
		return fmt.Errorf("a token limit must be positive")
	case n < minMaxTokens:
		return fmt.Errorf("below the minimum of %d tokens (the truncation marker alone takes about 12)", minMaxTokens)
	case n > maxMaxTokens:
		return fmt.Errorf("above the maximum of %d tokens", maxMaxTokens)
	}
	return nil
}

// checkTokenizer says why name is not a tokenizer, or returns nil.
func checkTokenizer(name string) error {
	if slices.Contains(tokenizers, name) {
		return nil
	}
	msg := fmt.Sprintf("unknown tokenizer (want %q, %q or %q)", tokenizerCalibrated, tokenizerO200k, tokenizerCl100k)
	s := suggest.Closest(name, tokenizers)
	if s == "" && name != "" {
		// A prefix too far for an edit distance: "o200k" for "o200k_base".
		if i := slices.IndexFunc(tokenizers, func(t string) bool { return strings.HasPrefix(t, strings.ToLower(name)) }); i >= 0 {
			s = tokenizers[i]
		}
	}
	if s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return errors.New(msg)
}

func checkToolName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty tool name")
	case strings.Contains(name, delim):
		return fmt.Errorf("tool name contains a NUL byte")
	}
	return nil
}

// keyTable and keyPerTool are the dotted keys of toolcap's table and of its
// per_tool table, as errors name them.
const (
	keyTable   = "worker.tool_output"
	keyPerTool = keyTable + "." + perToolName
)

// perToolKey names a per_tool entry the way TOML writes it, quoting names
// that are not bare keys (such as "mcp.fs.read").
func perToolKey(tool string) string {
	return keyPerTool + "." + settings.TOMLKey(tool)
}
