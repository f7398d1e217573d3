package claudecode

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// The hook reads a payload of any size once. A JSON text is split into the
// values of its members or elements by scanning its bytes (strings are
// skipped by searching for their closing quote), nothing is decoded while
// splitting, and a member is decoded only when a cut needs it, at most once
// (decoder): the tool's output, which is nearly all of a payload, is
// decoded in one pass. What is written back unchanged is the payload's own
// bytes, which encoding/json checks as it writes them (json.RawMessage).

// decoder decodes the strings of one payload, each once: the Bash stdout a
// check for Claude Code's own saved output, the store of the rest and the
// cut all read is decoded by the first of them. Strings are remembered by
// where their JSON sits in memory, so that the same member reached through
// two splits of the same bytes is found, and a member written anew (a new
// slice) never is. The zero decoder and a nil one decode without
// remembering.
type decoder struct {
	strs map[rawKey]string
	// st is the stream a streamed output was read by, whose long texts
	// its placeholders stand for (long.go); nil for an output held whole.
	st *respStream
	// spare is memory a long string is decoded into while it fits: the
	// bytes of the payload's buffer past the payload (readPrefix), pages
	// the payload's own adjoin, not fresh ones of their own.
	spare []byte
}

// rawKey names a JSON value by where it sits in memory.
type rawKey struct {
	p *byte
	n int
}

// rememberedLen is the shortest string a decoder remembers: shorter ones
// cost less to decode again than to look up.
const rememberedLen = 256

// newDecoder returns a decoder that remembers what it decoded.
func newDecoder() *decoder { return &decoder{strs: map[rawKey]string{}} }

// str decodes raw, one JSON string with its quotes.
func (d *decoder) str(raw []byte) (string, error) {
	if d != nil && d.st != nil {
		if lt := d.st.placeholder(raw); lt != nil {
			if lt.err != nil {
				return "", lt.err
			}
			return lt.text, nil
		}
	}
	if d == nil || d.strs == nil || len(raw) < rememberedLen {
		return unquote(raw)
	}
	k := rawKey{&raw[0], len(raw)}
	if s, ok := d.strs[k]; ok {
		return s, nil
	}
	s, used, err := unquoteTo(d.spare, raw)
	if err == nil {
		d.strs[k] = s
		d.spare = d.spare[used:]
	}
	return s, err
}

// object splits raw, a JSON object, into its members; ok is false when
// raw is not an object.
func (d *decoder) object(raw []byte) (object, bool) {
	m, err := splitObject(raw)
	if err != nil {
		return object{}, false
	}
	return object{m: m, d: d}, true
}

// errNotString is unquote's error for a value that is not one JSON string.
var errNotString = errors.New("not a JSON string")

// unquote decodes raw, one JSON string with its quotes, in one pass, as
// encoding/json decodes one: invalid UTF-8 and unpaired surrogates become
// U+FFFD, a control character or a bad escape is an error.
func unquote(raw []byte) (string, error) {
	s, _, err := unquoteTo(nil, raw)
	return s, err
}

// unquoteTo is unquote, decoding into dst when the string, as written,
// fits in it: used is how many bytes of dst the string took (0 when it
// went to memory of its own, which a string that decodes longer than
// written does, after writing its head to dst). Nothing past the
// string's length as written is written to dst.
func unquoteTo(dst, raw []byte) (s string, used int, err error) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", 0, errNotString
	}
	w := raw[1 : len(raw)-1]
	i := plainRun(w, 0)
	if i == len(w) && len(w) > len(dst) {
		return string(w), 0, nil
	}
	// Decoded, a string is no longer than written, but for invalid UTF-8
	// (a byte becomes U+FFFD's three): append grows b only then, into
	// memory of its own.
	var b []byte
	if len(w) <= len(dst) {
		b = dst[:i:len(w)]
	} else {
		b = make([]byte, i, len(w))
	}
	copy(b, w[:i])
	b, err = decodeRest(b, w, i)
	if err != nil {
		return "", 0, err
	}
	if len(b) > 0 && len(w) <= len(dst) && unsafe.SliceData(b) == unsafe.SliceData(dst) {
		used = len(b)
	}
	// b is not written again: the string can share its memory, as
	// strings.Builder's does, rather than copy a text of any size.
	return unsafe.String(unsafe.SliceData(b), len(b)), used, nil
}

// decodeRest appends to b the decoding of s from s[i] on, s being a JSON
// string's bytes between its quotes.
func decodeRest(b, s []byte, i int) ([]byte, error) {
	for i < len(s) {
		switch c := s[i]; {
		case c == '\\':
			if i+1 >= len(s) {
				return nil, errNotString
			}
			switch e := s[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := hex4(s[i+2:])
				if !ok {
					return nil, fmt.Errorf("%w: bad \\u escape", errNotString)
				}
				if utf16.IsSurrogate(r) {
					// A pair makes one rune; anything else is U+FFFD and
					// the next escape stands on its own.
					r2, ok := rune(-1), false
					if i+12 <= len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
						r2, ok = hex4(s[i+8:])
					}
					if dec := utf16.DecodeRune(r, r2); ok && dec != unicode.ReplacementChar {
						r = dec
						i += 6
					} else {
						r = unicode.ReplacementChar
					}
				}
				b = utf8.AppendRune(b, r)
				i += 4
			default:
				return nil, fmt.Errorf("%w: bad escape \\%c", errNotString, e)
			}
			i += 2
		case c == '"' || c < 0x20:
			return nil, fmt.Errorf("%w: unescaped %q", errNotString, c)
		case c < utf8.RuneSelf:
			j := plainRun(s, i)
			b = append(b, s[i:j]...)
			i = j
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, unicode.ReplacementChar)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
		}
	}
	return b, nil
}

// plainRun returns the end of the run of bytes from s[i] that a JSON
// string holds as they are: ASCII, no quote, backslash or control. It
// looks at eight bytes at a time while none of them is one of those.
func plainRun(s []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for i+8 <= len(s) {
		v := binary.LittleEndian.Uint64(s[i:])
		q, bs := v^(ones*'"'), v^(ones*'\\')
		// Each term has a byte's high bit set when the byte is, in
		// order, 0x80 or above, below 0x20, a quote, a backslash.
		if (v|(v-ones*0x20)&^v|(q-ones)&^q|(bs-ones)&^bs)&highs != 0 {
			break
		}
		i += 8
	}
	for i < len(s) && plainByte[s[i]] {
		i++
	}
	return i
}

// plainByte says which bytes plainRun takes: a table is faster than the
// four comparisons on a text with an escaped newline every few bytes.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// hex4 decodes the four hex digits that open s.
func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// splitObject splits data, a JSON object, into its members' values, as
// slices of data, without decoding them. It checks the object's own
// syntax, and of each value only where it ends (strings and brackets
// balanced; a value written back unchanged is checked as it is written);
// a member named twice keeps its last value, as encoding/json does.
func splitObject(data []byte) (map[string]json.RawMessage, error) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, errors.New("not a JSON object")
	}
	members := map[string]json.RawMessage{}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return members, trailing(data, i+1)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return nil, fmt.Errorf("offset %d: want a member name", i)
		}
		end, err := skipString(data, i)
		if err != nil {
			return nil, err
		}
		name, err := unquote(data[i:end])
		if err != nil {
			return nil, fmt.Errorf("offset %d: member name: %w", i, err)
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return nil, fmt.Errorf("offset %d: want ':' after %q", i, name)
		}
		start := skipSpace(data, i+1)
		end, err = skipValue(data, start)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		members[name] = data[start:end:end]
		i = skipSpace(data, end)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
			continue
		}
		if i < len(data) && data[i] == '}' {
			return members, trailing(data, i+1)
		}
		return nil, fmt.Errorf("offset %d: want ',' or '}'", i)
	}
}

// splitArray splits data, a JSON array, into its elements, as slices of
// data, as splitObject splits an object.
func splitArray(data []byte) ([]json.RawMessage, error) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, errors.New("not a JSON array")
	}
	var elems []json.RawMessage
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return []json.RawMessage{}, trailing(data, i+1)
	}
	for {
		end, err := skipValue(data, i)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", len(elems), err)
		}
		elems = append(elems, data[i:end:end])
		i = skipSpace(data, end)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
			continue
		}
		if i < len(data) && data[i] == ']' {
			return elems, trailing(data, i+1)
		}
		return nil, fmt.Errorf("offset %d: want ',' or ']'", i)
	}
}

// trailing checks that nothing but space follows the value.
func trailing(data []byte, i int) error {
	if i = skipSpace(data, i); i != len(data) {
		return fmt.Errorf("offset %d: data after the value", i)
	}
	return nil
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the end of the string that starts at data[i], a
// quote: the index past its closing quote, the first quote after it that
// an even run of backslashes precedes. Each quote is found by a search for
// the byte, not byte by byte: a megabyte of text is skipped in
// microseconds.
func skipString(data []byte, i int) (int, error) {
	for j := i + 1; j < len(data); j++ {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			break
		}
		j += k
		escapes := 0
		for m := j - 1; m > i && data[m] == '\\'; m-- {
			escapes++
		}
		if escapes%2 == 0 {
			return j + 1, nil
		}
	}
	return 0, fmt.Errorf("offset %d: unterminated string", i)
}

// skipValue returns the end of the value that starts at data[i]: a
// string, an object or array (brackets counted, at any depth), or a
// literal or number (up to the next delimiter).
func skipValue(data []byte, i int) (int, error) {
	if i >= len(data) {
		return 0, errors.New("missing value")
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, err := skipString(data, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, fmt.Errorf("offset %d: unterminated value", i)
	}
	j := i
	for j < len(data) && !isDelim(data[j]) {
		j++
	}
	if j == i || !json.Valid(data[i:j]) {
		return 0, fmt.Errorf("offset %d: invalid value", i)
	}
	return j, nil
}

// isDelim reports whether c ends a literal or a number.
func isDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// object is a JSON object split into its members, decoded only when a cut
// needs them (by its decoder, once); the others are written back byte for
// byte. The zero object is no object.
type object struct {
	m map[string]json.RawMessage
	d *decoder
}

// ok reports whether o is an object.
func (o object) ok() bool { return o.m != nil }

// raw returns the member key as written; nil when it is missing.
func (o object) raw(key string) json.RawMessage { return o.m[key] }

// clone returns a copy of o whose members can be set without changing o's.
func (o object) clone() object {
	m := make(map[string]json.RawMessage, len(o.m))
	for k, v := range o.m {
		m[k] = v
	}
	return object{m: m, d: o.d}
}

// encode returns o as JSON (members sorted by name, as encoding/json
// writes a map), checking the members written back unchanged.
func (o object) encode() ([]byte, error) { return marshal(o.m) }

// MarshalJSON writes o as [object.encode] does, for an object set as the
// member of another or an element of an array.
func (o object) MarshalJSON() ([]byte, error) { return o.encode() }

// obj returns the member key split as an object; ok is false when it is
// missing or not an object.
func (o object) obj(key string) (object, bool) {
	raw, found := o.m[key]
	if !found {
		return object{}, false
	}
	return o.d.object(raw)
}

// str returns the string member key; a missing or null member is "".
func (o object) str(key string) (string, error) {
	raw, ok := o.m[key]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	s, err := o.d.str(raw)
	if err != nil {
		return "", fmt.Errorf("%s is not a string", key)
	}
	return s, nil
}

// strs returns the member key, an array of strings; a missing or null
// member is nil.
func (o object) strs(key string) ([]string, error) {
	raw, ok := o.m[key]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	elems, err := splitArray(raw)
	if err != nil {
		return nil, fmt.Errorf("%s is not an array of strings", key)
	}
	s := make([]string, len(elems))
	for i, e := range elems {
		if string(e) == "null" {
			continue // "", as encoding/json decodes it
		}
		if s[i], err = o.d.str(e); err != nil {
			return nil, fmt.Errorf("%s is not an array of strings", key)
		}
	}
	return s, nil
}

// int returns the member key as an int; 0 when it is not one.
func (o object) int(key string) int {
	var n int
	if raw := o.m[key]; len(raw) > 0 {
		_ = json.Unmarshal(raw, &n)
	}
	return n
}

// set writes v as the member key.
func (o object) set(key string, v any) error {
	raw, err := marshal(v)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	o.m[key] = raw
	return nil
}

// is reports whether the member key is the string want.
func (o object) is(key, want string) bool {
	raw, ok := o.m[key]
	if !ok || len(raw) > len(want)*6+2 {
		// Not decoded: it cannot be want, every rune of which is written
		// in at most 6 bytes.
		return false
	}
	s, err := o.str(key)
	return err == nil && s == want
}
