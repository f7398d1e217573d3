// Package fault holds what the fault server (test/faultserver) and the tests
// that drive it must agree on: the deterministic text of its big results and
// the exact bytes of its non-MCP result.
//
// The text of n bytes is a run of fixed-length units followed by dots. Unit i
// is [UnitLen] bytes: i as ten zero-padded digits, then a mix of JSON escapes
// (a quote, a backslash, a tab, a newline) and multi-byte UTF-8 (two-, three-
// and four-byte characters). [WriteJSON] writes it as the inside of a JSON
// string, encoding some characters as \u escapes (one as a surrogate pair), so
// that a proxy's streaming decoder meets every kind of escape. The last
// n mod UnitLen bytes are ASCII dots, so that the text is exactly n bytes and
// valid UTF-8 for every n.
package fault

import (
	"io"
	"strconv"
	"strings"
)

// unitTail is a unit after its ten digits, as raw text. It holds a quote, a
// backslash, a tab and a newline (escaped on the wire), "é" (2 bytes), "日本"
// (3 bytes each), "✓" (3 bytes, sent as \u2713) and "😀" (4 bytes, sent as
// the surrogate pair \ud83d\ude00).
const unitTail = ` "quoted" back\slash	tab é 日本 ✓ 😀 abcdefghijklmnopqrstuvwxyz` + "\n"

// unitTailJSON is unitTail as it is written inside a JSON string.
const unitTailJSON = ` \"quoted\" back\\slash\ttab é 日本 \u2713 \ud83d\ude00 abcdefghijklmnopqrstuvwxyz\n`

// UnitLen is the length in bytes of one unit of the text.
const UnitLen = 10 + int64(len(unitTail))

// NonMCPResult is the result of the fault server's nonmcp tool, byte for byte
// as it writes it: keys in no sorted order, fields MCP does not define, a
// _meta, escapes that a re-encoder would change (\u00e9, \/) and characters
// Go's encoding/json escapes by default (<, >, &). A relay that forwards
// results as they came delivers exactly these bytes.
const NonMCPResult = `{"zeta":"unknown field","content":[{"type":"text","text":"plain <b>&amp;</b> caf\u00e9 a\/b"}],` +
	`"_meta":{"z":1,"a":{"y":[3,2,1]},"vendor.example/trace":"t-1"},"isError":false,"alpha":{"b":2,"a":1.50}}`

// unit appends unit i of the text to b, raw or JSON-escaped.
func unit(b []byte, i int64, json bool) []byte {
	var num [20]byte
	d := strconv.AppendInt(num[:0], i, 10)
	for range 10 - len(d) {
		b = append(b, '0')
	}
	b = append(b, d...)
	if json {
		return append(b, unitTailJSON...)
	}
	return append(b, unitTail...)
}

// Prefix returns the first k bytes of the text of n bytes (k is clamped to
// [0, n]).
func Prefix(n, k int64) string {
	k = max(0, min(k, n))
	full := n / UnitLen
	var b strings.Builder
	b.Grow(int(k + UnitLen))
	buf := make([]byte, 0, UnitLen)
	for i := int64(0); int64(b.Len()) < k && i < full; i++ {
		buf = unit(buf[:0], i, false)
		b.Write(buf)
	}
	s := b.String()
	if int64(len(s)) >= k {
		return s[:k]
	}
	return s + strings.Repeat(".", int(k)-len(s))
}

// WriteJSON writes the text of n bytes to w as the contents of a JSON string
// (no quotes), in chunks of about 64 KiB, never holding more than one chunk.
func WriteJSON(w io.Writer, n int64) error {
	const chunk = 64 << 10
	buf := make([]byte, 0, chunk+2*UnitLen)
	full := n / UnitLen
	for i := int64(0); i < full; i++ {
		buf = unit(buf, i, true)
		if len(buf) >= chunk {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	for range n - full*UnitLen {
		if len(buf) >= chunk {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
		buf = append(buf, '.')
	}
	_, err := w.Write(buf)
	return err
}
