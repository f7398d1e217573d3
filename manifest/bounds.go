package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/settings"
)

// Bounds on one manifest layer. A file or [Bytes] layer is checked against
// them before the TOML parser sees it, so that an adversarial or broken
// manifest fails fast instead of taking the parser's quadratic time or
// memory. docs/manifest.md explains the numbers.
const (
	// maxNestingDepth is the deepest a value may sit in a manifest,
	// counting every key on its path (table header segments and dotted-key
	// segments) and every array around it. toolcap's own keys sit at depth
	// 4 (worker.tool_output.per_tool.Read).
	maxNestingDepth = 32

	// maxTableKeys is the most keys any one table may hold directly, sub-
	// tables included; it applies to every table of the file, including the
	// top level and tables toolcap ignores.
	maxTableKeys = 4096

	// maxPerToolEntries is the most entries worker.tool_output.per_tool may
	// hold, in any one layer and in all layers together.
	maxPerToolEntries = 4096
)

// checkBounds reports the first bound that data, the text of one manifest
// layer, exceeds. It is a linear pre-scan of the TOML text, not a parser:
// for valid TOML it counts depth and keys exactly as the bounds define them,
// and for invalid TOML it may return nil and leave the error to the parser.
func checkBounds(data []byte) error {
	if len(data) > settings.MaxManifestBytes {
		return errTooLarge
	}
	s := scanner{
		data:   data,
		kids:   map[nodeKey]int{},
		nodes:  []node{{parent: -1}},
		worker: -1, toolOutput: -1, perTool: -1,
	}
	return s.run()
}

// errTooLarge says that a layer is over settings.MaxManifestBytes.
var errTooLarge = errors.New("larger than the limit of " + strconv.Itoa(settings.MaxManifestBytes) + " bytes (1 MiB)")

// nodeKey names a key inside its table: the table's node and the key.
type nodeKey struct {
	parent int
	name   string
}

// node is one table, array element or key seen by the scanner.
type node struct {
	parent int    // -1 for the top level
	name   string // the key that names it ("" for the top level)
	keys   int    // keys directly inside it
}

type scanner struct {
	data  []byte
	pos   int
	kids  map[nodeKey]int
	nodes []node
	// The nodes of worker, worker.tool_output and its per_tool table, or -1.
	worker, toolOutput, perTool int
}

func (s *scanner) run() error {
	if bytes.HasPrefix(s.data, []byte("\uFEFF")) {
		s.pos = 3
	}
	table, depth := 0, 0
	for s.pos < len(s.data) {
		s.skipSpace()
		if s.pos >= len(s.data) {
			break
		}
		switch c := s.data[s.pos]; c {
		case '\n', '\r':
			s.pos++
			continue
		case '#':
			s.skipLine()
			continue
		case '[':
			start := s.pos
			arr := s.at("[[")
			s.pos++
			if arr {
				s.pos++
			}
			path, ok := s.keyPath()
			if !ok || len(path) == 0 {
				s.skipLine()
				continue
			}
			d := len(path)
			if arr {
				d++
			}
			if d > maxNestingDepth {
				return s.deep(start)
			}
			n := 0
			for _, name := range path[:len(path)-1] {
				var err error
				if n, err = s.child(n, name, start); err != nil {
					return err
				}
			}
			last := path[len(path)-1]
			leaf, err := s.child(n, last, start)
			if err != nil {
				return err
			}
			if arr {
				// Each [[header]] starts a new element with keys of its own;
				// later headers under this path refer to the newest one.
				leaf = s.newNode(n, last)
				s.kids[nodeKey{n, last}] = leaf
			}
			table, depth = leaf, d
			s.skipLine()
		default:
			if err := s.keyValue(table, depth, false); err != nil {
				return err
			}
			s.skipLine()
		}
	}
	return nil
}

// keyValue scans "key = value" whose keys go into table, at depth. It
// consumes at least one byte.
func (s *scanner) keyValue(table, depth int, inline bool) error {
	start := s.pos
	path, ok := s.keyPath()
	if !ok || len(path) == 0 {
		if s.pos == start {
			s.pos++
		}
		return nil
	}
	d := depth + len(path)
	if d > maxNestingDepth {
		return s.deep(start)
	}
	n := table
	for _, name := range path {
		var err error
		if n, err = s.child(n, name, start); err != nil {
			return err
		}
	}
	s.skipSpace()
	if !s.at("=") {
		return nil
	}
	s.pos++
	if err := s.value(n, d); err != nil {
		return err
	}
	s.skipAfterValue()
	return nil
}

// value scans one value of the key n, which sits at depth d.
func (s *scanner) value(n, d int) error {
	s.skipSpace()
	if s.pos >= len(s.data) {
		return nil
	}
	switch s.data[s.pos] {
	case '"', '\'':
		s.skipString()
	case '[':
		s.pos++
		return s.array(n, d)
	case '{':
		s.pos++
		return s.inlineTable(n, d)
	default:
		s.skipScalar()
	}
	return nil
}

// array scans the elements of an array held by key n at depth d, up to and
// including its "]". The elements sit at depth d+1.
func (s *scanner) array(n, d int) error {
	for {
		s.skipBlank()
		if s.pos >= len(s.data) {
			return nil
		}
		switch s.data[s.pos] {
		case ']':
			s.pos++
			return nil
		case ',':
			s.pos++
			continue
		}
		if d+1 > maxNestingDepth {
			return s.deep(s.pos)
		}
		switch s.data[s.pos] {
		case '{':
			s.pos++
			// Every inline table in an array is a table of its own.
			if err := s.inlineTable(s.newNode(n, s.nodes[n].name), d+1); err != nil {
				return err
			}
		case '[':
			s.pos++
			if err := s.array(n, d+1); err != nil {
				return err
			}
		case '"', '\'':
			s.skipString()
		default:
			s.skipScalar()
		}
		s.skipAfterValue()
	}
}

// inlineTable scans the keys of the inline table n, whose keys sit at depth
// d plus their own segments, up to and including its "}".
func (s *scanner) inlineTable(n, d int) error {
	for {
		s.skipBlank()
		if s.pos >= len(s.data) {
			return nil
		}
		switch s.data[s.pos] {
		case '}':
			s.pos++
			return nil
		case ',':
			s.pos++
			continue
		}
		if err := s.keyValue(n, d, true); err != nil {
			return err
		}
	}
}

// child returns the node of key name in table parent, counting the key the
// first time it is seen. at is where the key was written, for the error.
func (s *scanner) child(parent int, name string, at int) (int, error) {
	k := nodeKey{parent, name}
	if id, ok := s.kids[k]; ok {
		return id, nil
	}
	s.nodes[parent].keys++
	if parent == s.perTool && s.nodes[parent].keys > maxPerToolEntries {
		return 0, fmt.Errorf("line %d: more than %d entries in [worker.tool_output.per_tool]",
			s.line(at), maxPerToolEntries)
	}
	if s.nodes[parent].keys > maxTableKeys {
		return 0, fmt.Errorf("line %d: more than %d keys in %s", s.line(at), maxTableKeys, s.describe(parent))
	}
	id := s.newNode(parent, name)
	s.kids[k] = id
	switch {
	case parent == 0 && name == "worker":
		s.worker = id
	case parent == s.worker && name == "tool_output":
		s.toolOutput = id
	case parent == s.toolOutput && name == "per_tool":
		s.perTool = id
	}
	return id, nil
}

func (s *scanner) newNode(parent int, name string) int {
	s.nodes = append(s.nodes, node{parent: parent, name: name})
	return len(s.nodes) - 1
}

// describe names the table n for an error: "the top level" or "[a.b]".
func (s *scanner) describe(n int) string {
	if n == 0 {
		return "the top level"
	}
	var path []string
	for ; n > 0; n = s.nodes[n].parent {
		path = append(path, settings.TOMLKey(s.nodes[n].name))
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return "[" + shorten(strings.Join(path, ".")) + "]"
}

func (s *scanner) deep(at int) error {
	return fmt.Errorf("line %d: nested deeper than %d levels", s.line(at), maxNestingDepth)
}

func (s *scanner) line(at int) int {
	return bytes.Count(s.data[:at], []byte("\n")) + 1
}

// keyPath scans a dotted key. It stops, with what it has, once the key is
// deeper than any bound allows.
func (s *scanner) keyPath() ([]string, bool) {
	var path []string
	for {
		s.skipSpace()
		name, ok := s.simpleKey()
		if !ok {
			return path, false
		}
		path = append(path, name)
		s.skipSpace()
		if !s.at(".") || len(path) > maxNestingDepth {
			return path, true
		}
		s.pos++
	}
}

// simpleKey scans a bare, basic-string or literal-string key and returns it
// as TOML reads it.
func (s *scanner) simpleKey() (string, bool) {
	start := s.pos
	if s.pos >= len(s.data) {
		return "", false
	}
	switch s.data[s.pos] {
	case '"':
		s.pos++
		escaped := false
		for s.pos < len(s.data) {
			switch s.data[s.pos] {
			case '\\':
				escaped = true
				s.pos = min(s.pos+2, len(s.data))
				continue
			case '"':
				s.pos++
				raw := s.data[start+1 : s.pos-1]
				if escaped {
					return unescape(raw), true
				}
				return string(raw), true
			case '\n':
				return "", false
			}
			s.pos++
		}
		return "", false
	case '\'':
		end := bytes.IndexAny(s.data[s.pos+1:], "'\n")
		if end < 0 || s.data[s.pos+1+end] != '\'' {
			s.pos = len(s.data)
			return "", false
		}
		s.pos += end + 2
		return string(s.data[start+1 : s.pos-1]), true
	}
	for s.pos < len(s.data) && isBare(s.data[s.pos]) {
		s.pos++
	}
	if s.pos == start {
		return "", false
	}
	return string(s.data[start:s.pos]), true
}

func isBare(c byte) bool {
	return c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// unescape decodes the escapes of a TOML basic string; an escape TOML does
// not have is kept as written (the parser rejects it).
func unescape(raw []byte) string {
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			b.WriteByte(c)
			continue
		}
		i++
		switch raw[i] {
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'f':
			b.WriteByte('\f')
		case 'r':
			b.WriteByte('\r')
		case '"':
			b.WriteByte('"')
		case '\\':
			b.WriteByte('\\')
		case 'u', 'U':
			width := 4
			if raw[i] == 'U' {
				width = 8
			}
			var r rune
			ok := i+width < len(raw)
			for j := 1; ok && j <= width; j++ {
				h := raw[i+j]
				switch {
				case h >= '0' && h <= '9':
					r = r<<4 | rune(h-'0')
				case h >= 'a' && h <= 'f':
					r = r<<4 | rune(h-'a'+10)
				case h >= 'A' && h <= 'F':
					r = r<<4 | rune(h-'A'+10)
				default:
					ok = false
				}
			}
			if !ok {
				b.WriteByte('\\')
				b.WriteByte(raw[i])
				continue
			}
			b.WriteRune(r)
			i += width
		default:
			b.WriteByte('\\')
			b.WriteByte(raw[i])
		}
	}
	return b.String()
}

func (s *scanner) at(p string) bool {
	return bytes.HasPrefix(s.data[s.pos:], []byte(p))
}

// skipString skips a basic, literal or multi-line string.
func (s *scanner) skipString() {
	q := s.data[s.pos]
	if s.at(string([]byte{q, q, q})) {
		s.pos += 3
		for s.pos < len(s.data) {
			c := s.data[s.pos]
			if c == '\\' && q == '"' {
				s.pos = min(s.pos+2, len(s.data))
				continue
			}
			if c == q && s.at(string([]byte{q, q, q})) {
				s.pos += 3
				// Up to two more quotes belong to the string's content.
				for i := 0; i < 2 && s.pos < len(s.data) && s.data[s.pos] == q; i++ {
					s.pos++
				}
				return
			}
			s.pos++
		}
		return
	}
	s.pos++
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '\n':
			return
		case c == '\\' && q == '"':
			s.pos = min(s.pos+2, len(s.data))
			continue
		case c == q:
			s.pos++
			return
		}
		s.pos++
	}
}

// skipScalar skips a number, boolean or date, at least one byte.
func (s *scanner) skipScalar() {
	s.pos++
	for s.pos < len(s.data) && !strings.ContainsRune(" \t\r\n,]}#", rune(s.data[s.pos])) {
		s.pos++
	}
}

// skipAfterValue skips what may follow a value before its separator, such
// as the time of a date-time written with a space.
func (s *scanner) skipAfterValue() {
	for s.pos < len(s.data) && !strings.ContainsRune(",]}#\n\"'[{", rune(s.data[s.pos])) {
		s.pos++
	}
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.data) && (s.data[s.pos] == ' ' || s.data[s.pos] == '\t') {
		s.pos++
	}
}

// skipBlank skips spaces, newlines and comments.
func (s *scanner) skipBlank() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.pos++
		case '#':
			s.skipLine()
		default:
			return
		}
	}
}

// skipLine skips to the end of the line, leaving the newline.
func (s *scanner) skipLine() {
	if i := bytes.IndexByte(s.data[s.pos:], '\n'); i >= 0 {
		s.pos += i
		return
	}
	s.pos = len(s.data)
}

// maxEcho is how many bytes of a value an error or warning shows.
const maxEcho = 64

// clipAt returns the length of s's shown prefix: maxEcho bytes, backed off
// so as not to split a UTF-8 character ([cut.FloorCharBoundary], the one
// boundary search).
func clipAt(s string) int {
	return cut.FloorCharBoundary(s, maxEcho)
}

// shorten returns s whole when it is at most maxEcho bytes long, otherwise
// its first maxEcho bytes, "…" and its length: `aaaa… (100000 bytes)`.
func shorten(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:clipAt(s)], len(s))
}
