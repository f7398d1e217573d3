package tiktoken_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolcap/toolcap/tiktoken"
	"github.com/toolcap/toolcap/tokens"
)

// A sample is a fixed text of testdata, each under cut.TokenWindow(4000) =
// 128,000 bytes so that a cut to 4,000 tokens counts it whole.
type sample struct {
	name, file string
	json       bool // a JSON document: cut with KeepJSON as well
}

var samples = []sample{
	{name: "go", file: "go_source.txt"},  // Go source of this repository
	{name: "log", file: "build_log.txt"}, // a go build / go test failure log
	{name: "json", file: "records.json", json: true},
	{name: "ja", file: "ja_prose.txt"}, // Japanese prose
}

func readSample(tb testing.TB, file string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func mustNew(tb testing.TB, name string) tokens.Tokenizer {
	tb.Helper()
	tok, err := tiktoken.New(name)
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

// tokenMarker matches a token marker, capturing its N.
var tokenMarker = regexp.MustCompile(`\n\[truncated: (\d+) tokens dropped, refine your query\]`)

// splitTokenMarker splits the output of a cut by tokens around its marker:
// the text before it, N, and the text after the marker's line (head_tail
// only; the marker then stands on a line of its own). ok is false when out
// holds no token marker where the strategy puts it.
func splitTokenMarker(out string, headTail bool) (before string, n int, after string, ok bool) {
	locs := tokenMarker.FindAllStringSubmatchIndex(out, -1)
	if len(locs) == 0 {
		return "", 0, "", false
	}
	loc := locs[len(locs)-1]
	if headTail {
		loc = locs[0]
		if loc[1] >= len(out) || out[loc[1]] != '\n' {
			return "", 0, "", false
		}
		after = out[loc[1]+1:]
	} else if loc[1] != len(out) {
		return "", 0, "", false
	}
	n, err := strconv.Atoi(out[loc[2]:loc[3]])
	if err != nil {
		return "", 0, "", false
	}
	return out[:loc[0]], n, after, true
}

// chunks returns ten pieces of s of 2 KB to 40 KB, spread over s and cut at
// character boundaries.
func chunks(s string) []string {
	var out []string
	for i, size := range chunkSizes {
		out = append(out, chunkOf(s, i, size))
	}
	return out
}

var chunkSizes = []int{2 << 10, 3 << 10, 5 << 10, 8 << 10, 12 << 10, 16 << 10, 20 << 10, 26 << 10, 32 << 10, 40 << 10}

// chunkOf returns the piece of s of about size bytes that starts i tenths
// into s (earlier when it would run past the end).
func chunkOf(s string, i, size int) string {
	size = min(size, len(s))
	start := min(i*len(s)/10, len(s)-size)
	end := start + size
	for start < end && !utf8.RuneStart(s[start]) {
		start++
	}
	for end < len(s) && end > start && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[start:end]
}

// repeatTo repeats s, whole, until the result is at least n bytes long.
func repeatTo(s string, n int) string {
	return strings.Repeat(s, (n+len(s)-1)/len(s))
}
