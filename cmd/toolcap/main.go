// Command toolcap shows and applies toolcap's byte cap on tool results.
//
// Usage:
//
//	toolcap demo [--manifest FILE]... [-v] [DIR]
//	toolcap cap --tool NAME [--keep STRATEGY] [--keep-rest] [--manifest FILE]... [-v] < output
//	toolcap read REF [--offset K] [--pattern RE] [--all] [--manifest FILE]...
//	toolcap config [--manifest FILE]... [--tool NAME]... [--json]
//	toolcap mcp [--manifest FILE]... [-v] -- SERVER_COMMAND [ARGS...]
//	toolcap hook claude-code [--manifest FILE]... [-v] < payload
//	toolcap version
//
// Every command also takes --log-format text|json and --log-level LEVEL.
//
// demo runs a model's batch of Glob, Read and Grep calls over DIR through a
// worker and shows what the cap kept out of the history. cap is a filter: it
// caps its standard input with the limit a worker would apply to one tool;
// with --keep-rest it keeps the whole input, and read pages it.
// config prints the limits in force and the layer each came from.
//
// Limits come from layers, lowest precedence first: the built-in default
// (16384 bytes), each --manifest file in the order given, then the TOOLCAP_
// environment variables. Exit status: 0 on success, 1 when the command
// failed (a read or write error), 2 for a usage or configuration error
// (but hook exits 1 on a configuration error: Claude Code shows a hook's
// exit 2 to the model).
//
// Install it with
//
//	go install github.com/toolcap/toolcap/cmd/toolcap@latest
//
// This build has everything: the exact tokenizers o200k_base and
// cl100k_base (module github.com/toolcap/toolcap/tiktoken) and the Redis
// store of what cuts drop (module github.com/toolcap/toolcap/adapters/redisrest).
// It is a module of its own, so that the core module, which Go programs
// import, requires neither.
//
// Built with -tags toolcap_nomcp, toolcap has every command but mcp, and
// neither the exact tokenizers nor the Redis store: a small build for the
// Claude Code hook alone, which starts without the MCP relay's packages
// (net/http, TLS, JSON Schema); see docs/adapters/claude-code.md.
//
// The commands live in package [github.com/toolcap/toolcap/cli]. See
// docs/cli.md for every flag and example output.
package main

import (
	"os"

	"github.com/toolcap/toolcap/cli"
)

func main() { os.Exit(cli.Main(options()...)) }
