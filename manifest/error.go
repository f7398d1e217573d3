package manifest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/toolcap/toolcap/internal/settings"
)

// Error is a manifest value or layer that cannot be used. It names where the
// problem came from, so a user can find and fix it.
type Error struct {
	// Source names the layer: `file "toolcap.toml"`,
	// "env TOOLCAP_WORKER__TOOL_OUTPUT__DEFAULT_MAX_BYTES", "WorkerManifest",
	// or the name given to Overrides.
	Source string
	// Key is the dotted key path, such as
	// "worker.tool_output.per_tool.Read"; empty for an error of the whole
	// layer (a file that cannot be read or parsed).
	Key string
	// Value is the offending value as written (a string quoted), empty
	// without Key. It is kept whole; Error shortens it.
	Value string
	// Err says what is wrong.
	Err error
}

// Error formats e as "manifest: SOURCE: KEY = VALUE: REASON". A VALUE over
// 64 bytes is shortened to its first 64 bytes (never splitting a UTF-8
// character), "…" and its full length: "aaaa…" (100000 bytes).
func (e *Error) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("manifest: %s: %v", e.Source, e.Err)
	}
	return fmt.Sprintf("manifest: %s: %s = %s: %v", e.Source, e.Key, showShort(e.Value), e.Err)
}

// showShort shortens a Value for Error: a quoted string inside its quotes,
// anything else as it is.
func showShort(v string) string {
	if strings.HasPrefix(v, `"`) {
		if u, err := strconv.Unquote(v); err == nil {
			if len(u) <= maxEcho {
				return v
			}
			return quoteShort(u)
		}
	}
	return shorten(v)
}

// quoteShort is strconv.Quote of s, shortened as Error shortens a value.
func quoteShort(s string) string {
	if len(s) <= maxEcho {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s (%d bytes)", strconv.Quote(s[:clipAt(s)]+"…"), len(s))
}

// tomlShort is [settings.TOMLKey] of s, shortened as Error shortens a value.
func tomlShort(s string) string {
	if len(s) <= maxEcho {
		return settings.TOMLKey(s)
	}
	return fmt.Sprintf("%s (%d bytes)", settings.TOMLKey(s[:clipAt(s)]+"…"), len(s))
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }
