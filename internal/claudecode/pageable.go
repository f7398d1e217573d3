package claudecode

import (
	"encoding/json"
	"sort"
	"strings"
)

// A text the hook keeps is read back with Read, which pages by lines: a
// JSON document of one line (an MCP tool's structuredContent, as Claude
// Code hands it to the hook, {"content":"…80 KB…"}) could be read only as
// its first page, whatever the marker named. So a JSON text is kept with
// the line breaks its strings hold as line breaks of the file: each \n
// escape inside a string is written as a newline, every other byte as it
// is. Nothing is lost (a newline inside a string of the file stands for
// \n, and a JSON text holds no raw newline inside a string), and the
// document's text reads, and pages, as the text it is.

// pageableJSON reports whether s is a JSON text (an object or an array) the
// hook keeps in its pageable form.
func pageableJSON(s string) bool {
	return len(s) > 0 && (s[0] == '{' || s[0] == '[') && strings.Contains(s, `\n`) && json.Valid([]byte(s))
}

// pageable returns the pageable form of s, a JSON text (see pageableJSON),
// and at, which maps an offset in s to the offset of the same byte in that
// form (an offset inside a \n escape maps to its newline).
func pageable(s string) (string, func(int) int) {
	var b strings.Builder
	b.Grow(len(s))
	// escapes holds the offsets in s of the \n escapes written as
	// newlines, in order.
	var escapes []int
	inString := false
	last := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			inString = !inString
		case c == '\\' && inString && i+1 < len(s):
			if s[i+1] == 'n' {
				b.WriteString(s[last:i])
				b.WriteByte('\n')
				escapes = append(escapes, i)
				last = i + 2
			}
			i++ // the escaped byte: a quote it escapes does not end the string
		}
	}
	b.WriteString(s[last:])
	at := func(pos int) int {
		// Each \n escape before pos is one byte shorter in the form (one
		// that pos falls inside maps pos to its newline).
		return pos - sort.SearchInts(escapes, pos)
	}
	return b.String(), at
}
