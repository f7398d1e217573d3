package claudecode

import (
	"encoding/json"
	"fmt"

	"github.com/toolcap/toolcap/internal/wire"
)

// The hook reads a payload of any size once. A JSON text is split into the
// values of its members or elements by scanning its bytes
// (wire.SplitObject: strings are skipped by searching for their closing
// quote), nothing is decoded while splitting, and a member is decoded only
// when a cut needs it, at most once (decoder, with wire.UnquoteTo): the
// tool's output, which is nearly all of a payload, is decoded in one pass. What is written back unchanged is the payload's own
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
	// redactions counts the secrets the cut redacted, by rule.
	redactions map[string]int
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
		return wire.Unquote(raw)
	}
	k := rawKey{&raw[0], len(raw)}
	if s, ok := d.strs[k]; ok {
		return s, nil
	}
	s, used, err := wire.UnquoteTo(d.spare, raw)
	if err == nil {
		d.strs[k] = s
		d.spare = d.spare[used:]
	}
	return s, err
}

// object splits raw, a JSON object, into its members; ok is false when
// raw is not an object.
func (d *decoder) object(raw []byte) (object, bool) {
	m, err := wire.SplitObject(raw)
	if err != nil {
		return object{}, false
	}
	return object{m: m, d: d}, true
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
	elems, err := wire.SplitArray(raw)
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
