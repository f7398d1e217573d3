// Package tiktoken counts tokens exactly, in OpenAI's "o200k_base" (GPT-4o,
// GPT-4.1, GPT-5, o-series) and "cl100k_base" (GPT-4, GPT-3.5) encodings,
// for toolcap's token limits. [New] returns a [tokens.Tokenizer] that a
// worker counts its manifest's token limits with.
//
// # Why a module of its own
//
// The encodings come from github.com/tiktoken-go/tokenizer, which compiles
// its vocabularies into the binary (about 16 MB of Go source, some 12 MB
// added to a program that links them: no download at run time, no cache
// directory, it works offline) and requires Go 1.26. The core module, github.com/toolcap/toolcap, stays on
// go 1.25 and links none of that: its own tokenizer is [tokens.Calibrated],
// an estimate that needs no vocabulary. A program that wants exact counts
// requires this module, github.com/toolcap/toolcap/tiktoken, as well.
//
// # Use
//
// A manifest names its tokenizer beside its token limits:
//
//	[worker.tool_output]
//	default_max_tokens = 4000
//	tokenizer = "o200k_base"
//
// and the program gives the worker the tokenizer it names, with
// worker.WithTokenizer (a worker whose manifest names an exact tokenizer it
// was not given fails to start):
//
//	m, err := manifest.Load(context.Background())
//	...
//	tok, err := tiktoken.New(m.Limits().TokenizerName())
//	...
//	policies, err := m.Policies()
//	...
//	w, err := worker.New(tools, worker.WithPolicies(policies), worker.WithTokenizer(tok))
//
// New knows only the exact encodings: a program that also runs manifests
// naming "calibrated" (the default) gets that one from tokens.Builtin.
//
// # Counting
//
// Count counts the token ids of a text's encoding, special tokens such as
// "<|endoftext|>" encoded as the ordinary text they are written with, as
// in a tool result; invalid UTF-8 counts as the U+FFFD characters a JSON encoder
// sends in its place. It counts 6 to 13 MB a second (a regexp splits the
// text, then byte-pair merges encode each piece) and allocates about 100
// bytes per byte counted, which the library's splitting costs. So a
// cut.CutTokens to 4,000 tokens, which counts an input of at most
// cut.TokenWindow(4000) = 128,000 bytes whole and then a few outputs of
// about 16 KB, costs about 20 ms, and about the same for an input of any
// length over the window, of which it counts only outputs.
//
// One kind of input would be slow: the library's generated regexp takes
// time quadratic in the length of a run of whitespace that spans lines
// (blank lines that hold spaces, tabs, form feeds, no-break or ideographic
// spaces), 1.7 to 3.8 s for 100 KB of such a run. Count therefore counts
// such a run in segments of about 512 bytes, each ending after a line break
// that other whitespace follows, where the pattern ends a piece, so the
// count is the same (TestCountLongWhitespace checks it against counting
// whole) and 100 KB of such runs costs 23 to 36 ms, about what 100 KB of a
// log costs.
package tiktoken
