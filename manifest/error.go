package manifest

import "fmt"

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
	// Value is the offending value as written, empty with Key.
	Value string
	// Err says what is wrong.
	Err error
}

// Error formats e as "manifest: SOURCE: KEY = VALUE: REASON".
func (e *Error) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("manifest: %s: %v", e.Source, e.Err)
	}
	return fmt.Sprintf("manifest: %s: %s = %s: %v", e.Source, e.Key, e.Value, e.Err)
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }
