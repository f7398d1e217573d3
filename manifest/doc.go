// Package manifest holds toolcap's part of a worker manifest, the
// [worker.tool_output] table, and loads it through koanf layers.
//
// A manifest file is TOML; toolcap reads only its [worker.tool_output] table
// and ignores the rest of a larger manifest:
//
//	[worker.tool_output]
//	default_max_bytes = 16384     # every tool; 16384 when omitted
//
//	[worker.tool_output.per_tool]
//	Read = 32768                  # by registered tool name
//	"mcp.fs.read_file" = 8192     # names may hold dots, dashes, slashes
//	Bash = { max_bytes = 32768, keep = "head_tail", keep_lines = ['(?i)\b(error|fail|panic)\b'] }
//
// # Strategies
//
// Which bytes of an over-long result are kept is a [Strategy] of package
// cut: keep = "head" (the default), "head_tail" (with tail_share and
// keep_lines) or "json" (with fallback). default_keep, default_tail_share,
// default_keep_lines and default_fallback set it for every tool; a per_tool
// entry's long form, an inline table, sets it for one tool, field by field
// over the defaults. Its max_bytes is the tool's limit (a max_tokens may
// join it). The short form, Read = 32768, sets the limit only, so a layer
// that writes it keeps the max_tokens and strategy a lower layer set.
//
// # Keeping the rest
//
// keep_rest (true when no layer sets it) says that a cut keeps what it
// drops, so that the model can read on, where the front end has a store
// (package rest); a per_tool entry's keep_rest = false turns it off for
// one tool. The [worker.tool_output.rest] table bounds the store:
//
//	[worker.tool_output.rest]
//	dir = "/var/cache/toolcap/rest"  # a directory store's directory
//	max_bytes = 1073741824           # the quota; at most 1 TiB
//	max_entry_bytes = 268435456      # the most one entry keeps; at most max_bytes
//	ttl = "24h"                      # a Go duration; at most a year
//	tool = "toolcap_read"            # the read tool's name
//	store = "dir"                    # "memory" or "dir"
//
// Every key is optional and a [RestConfig] field left zero takes the front
// end's store's default: this package names the bounds, package rest owns
// the store and its defaults; manifest does not import it.
//
// # One value per tool
//
// In Go, a per_tool entry is a [ToolEntry] (MaxBytes, MaxTokens, Strategy,
// KeepRest; a zero field is not set) in [ToolOutputLimits.PerTool].
// [ToolOutputLimits.Policies] validates the limits and resolves each tool,
// once, to a [shape.Policy]: its byte and token limits, its compiled
// [cut.Spec] and its KeepRest, the tool's own fields over the defaults. [Policies.For] is
// what every front end fits a result with; [Policies.WithCounter] adds the
// token counter of a front end that counts tokens. One table of keys, in
// this package, drives parsing, the environment's variable names,
// validation, [Overrides] and [Resolution].
//
// # Layers
//
// [Load] builds a [WorkerManifest] from layers, lowest precedence first: the
// built-in default ([DefaultMaxBytes]), then each [Option] that names a layer,
// in the order given. The usual order is the user's manifest, the project's,
// the environment ([Env]) and explicit overrides ([Overrides]):
//
//	m, err := manifest.Load(context.Background(),
//		manifest.OptionalFile(userPath),
//		manifest.File("toolcap.toml"),
//		manifest.Env(),
//		manifest.WithLogger(logger),
//	)
//
// Maps merge key by key: a project file that sets per_tool.Read leaves the
// user file's per_tool.Grep in force. A later layer cannot remove a key, only
// override it. [Resolve] also reports which layer each limit came from.
//
// # Errors and warnings
//
// A bad value is an [*Error] that names the layer (file or environment
// variable), the key and the value: a value that is not an integer, zero,
// negative, below [MinMaxBytes] or above [MaxMaxBytes]. A broken or missing
// file is an error naming the file. A bad manifest never falls back to "no
// cap". Unknown keys inside [worker.tool_output] and unknown TOOLCAP_
// variables are warnings, logged through the [WithLogger] logger and kept in
// [Resolution.Warnings], as are toolcap's keys in the wrong table or case
// ([Worker.tool_output], a top-level [tool_output]). Errors and warnings
// show at most 64 bytes of a value or unknown name.
//
// # Bounds
//
// A file or [Bytes] layer over [settings.MaxManifestBytes], [maxNestingDepth],
// [maxTableKeys] or [maxPerToolEntries] is an error, found by a linear scan
// before the TOML parser, whose cost grows with the square of a table's keys
// and of nesting depth. [LoadContext] and [ResolveContext] stop reading a
// file (a FIFO with no writer, say) when their context is done.
//
// Tool names are arbitrary strings. koanf's usual "." delimiter would split a
// name such as "mcp.fs.read" into nested keys, so this package runs koanf with
// a delimiter no tool name contains (NUL) and rejects names that contain it.
package manifest
