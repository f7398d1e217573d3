package manifest

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

const (
	// DefaultMaxBytes is the limit for every tool that has no limit of its
	// own: 16 KiB, a safe margin under a 30k input tokens/min rate limit.
	DefaultMaxBytes = 16384

	// MinMaxBytes is the smallest limit accepted. The truncation marker alone
	// takes 48 to 66 bytes; 128 leaves room for content beside it.
	MinMaxBytes = 128

	// MaxMaxBytes is the largest limit accepted, 64 MiB. Anything larger is
	// no cap at all for an LLM's context and is taken for a mistake.
	MaxMaxBytes = 64 << 20
)

// WorkerManifest is the [worker] table of a manifest, as far as toolcap reads
// it.
type WorkerManifest struct {
	// ToolOutput is the [worker.tool_output] table. Nil means it was omitted:
	// DefaultMaxBytes then applies to every tool.
	ToolOutput *ToolOutputLimits `koanf:"tool_output"`
}

// ToolOutputLimits caps the content of tool results, in bytes.
type ToolOutputLimits struct {
	// DefaultMaxBytes applies to every tool without its own entry in PerTool.
	// In a Go value, 0 means "not set" and DefaultMaxBytes (the constant)
	// applies; in a file or the environment an explicit 0 is an error.
	DefaultMaxBytes int `koanf:"default_max_bytes"`

	// BatchMaxBytes is the batch budget: the most bytes of content all the
	// results of one call of worker.ExecuteTools may carry together, shared
	// among them by water-filling (see package worker). 0 means no batch
	// budget: each result is held to its own limit only, as before the key
	// existed. In a file or the environment an explicit 0 is an error; omit
	// the key instead.
	BatchMaxBytes int `koanf:"batch_max_bytes"`

	// PerTool maps a tool's registered name to its own limit: the short
	// form of a per_tool entry (Read = 32768), or the max_bytes of its long
	// form.
	PerTool map[string]int `koanf:"per_tool"`

	// Default is the strategy of every tool: the default_keep,
	// default_tail_share, default_keep_lines and default_fallback keys.
	// The zero Strategy is the head strategy.
	Default Strategy `koanf:"-"`

	// PerToolStrategy maps a tool's registered name to the strategy fields
	// of its per_tool entry's long form
	// (Bash = { max_bytes = 32768, keep = "head_tail" }). A field it does
	// not set comes from Default.
	PerToolStrategy map[string]Strategy `koanf:"-"`
}

// Limits returns m's tool-output limits. It is safe on a nil m, and the
// result is safe to call For on even when nil.
func (m *WorkerManifest) Limits() *ToolOutputLimits {
	if m == nil {
		return nil
	}
	return m.ToolOutput
}

// For returns the limit for tool: its PerTool entry if it has one, otherwise
// the default. A nil l, or one that sets only PerTool, gives DefaultMaxBytes
// (16384) to every tool without an entry.
func (l *ToolOutputLimits) For(tool string) int {
	if l == nil {
		return DefaultMaxBytes
	}
	if n, ok := l.PerTool[tool]; ok && n > 0 {
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

// Validate reports the first invalid limit or strategy of m, as an [*Error] whose source
// is "WorkerManifest". A nil m, or a zero DefaultMaxBytes, is valid.
func (m *WorkerManifest) Validate() error {
	l := m.Limits()
	if l == nil {
		return nil
	}
	const src = "WorkerManifest"
	if l.DefaultMaxBytes != 0 {
		if err := checkLimit(l.DefaultMaxBytes); err != nil {
			return &Error{Source: src, Key: keyDefault, Value: strconv.Itoa(l.DefaultMaxBytes), Err: err}
		}
	}
	if l.BatchMaxBytes != 0 {
		if err := checkBatch(l.BatchMaxBytes); err != nil {
			return &Error{Source: src, Key: keyBatch, Value: strconv.Itoa(l.BatchMaxBytes), Err: err}
		}
	}
	for _, tool := range slices.Sorted(maps.Keys(l.PerTool)) {
		n := l.PerTool[tool]
		if err := checkToolName(tool); err != nil {
			return &Error{Source: src, Key: perToolKey(tool), Value: strconv.Itoa(n), Err: err}
		}
		if err := checkLimit(n); err != nil {
			return &Error{Source: src, Key: perToolKey(tool), Value: strconv.Itoa(n), Err: err}
		}
	}
	_, err := l.Policies()
	return err
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

func checkToolName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty tool name")
	case strings.Contains(name, delim):
		return fmt.Errorf("tool name contains a NUL byte")
	}
	return nil
}

const (
	keyDefault = "worker.tool_output.default_max_bytes"
	keyPerTool = "worker.tool_output.per_tool"
	keyBatch   = "worker.tool_output.batch_max_bytes"
)

// perToolKey names a per_tool entry the way TOML writes it, quoting names
// that are not bare keys (such as "mcp.fs.read").
func perToolKey(tool string) string {
	return keyPerTool + "." + TOMLKey(tool)
}

// TOMLKey writes s as a TOML key: bare when it can be (letters, digits, "_"
// and "-"), otherwise as a basic string with TOML's escapes, so that
// "mcp.fs.read" stays one key when pasted into a manifest.
func TOMLKey(s string) string {
	bare := s != ""
	for i := 0; i < len(s) && bare; i++ {
		c := s[i]
		bare = c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
	}
	if bare {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
