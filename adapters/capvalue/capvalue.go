// Package capvalue caps tool results that are Go values rather than one
// string: a map[string]any, a []any, a string or any value encoding/json
// can encode. It is for frameworks whose tools return such values and that
// give the caller a hook to replace them, such as adk-go's
// AfterToolCallback, and it needs no framework.
//
// # The measure
//
// [Cap] measures a value by its JSON encoding (encoding/json, HTML left
// unescaped): what a framework serializes into the request its model reads.
// When the encoding fits the limit the value is returned as it is. Otherwise
// only strings are cut, each by the text rule of [middleware.Truncate] (the
// marker "\n[truncated: N bytes dropped, refine your query]" within its
// share), so the result has the same JSON shape (the same keys, the same array
// lengths, numbers, booleans and nulls untouched) and its encoding is at most
// limit bytes, escapes included.
//
// [Strings] cuts several strings that share one budget, for outputs the model
// reads as text, such as a command's stdout and stderr.
//
// # Sharing the budget
//
// The strings share the budget fairly (max-min): strings shorter than an
// equal share keep whole, and the longest ones are cut to equal shares, so
// a short stderr survives next to a 1 MiB stdout. When the equal share is too
// small to hold a marker (many long strings), the budget goes to the strings
// in order instead: the first ones keep whole, one is cut with the marker, and
// the rest are emptied. Either way the number of bytes dropped is exact.
//
// [middleware.Truncate]: https://pkg.go.dev/github.com/toolcap/toolcap/middleware#Truncate
package capvalue

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/toolcap/toolcap/middleware"
)

// Cap returns v capped so that its JSON encoding is at most limit bytes, and
// the number of string bytes dropped; dropped == 0 means v is returned
// unchanged.
//
// A cut value comes back as the generic form encoding/json decodes: objects
// as map[string]any, arrays as []any, numbers as [json.Number], so a struct
// becomes a map with its JSON field names. When the value without its
// strings' contents takes more than half the limit (long arrays of records,
// of numbers), every array is cut to the same number of first elements, as
// many as leave half the limit to the strings, and a cut array ends with one
// more element, the string "[truncated: N bytes dropped, refine your query]"
// (N: the encoded bytes of the elements it lost). When even empty arrays do
// not fit (an object with too many keys), Cap returns the value's JSON text
// as one string, cut by the text rule so that it encodes within the limit:
// the shape is lost, the limit holds. A value
// encoding/json cannot encode (a channel, a func, a cycle) is returned
// unchanged with dropped == 0, as no framework can send it either. Cap never
// panics.
func Cap(v any, limit int) (capped any, dropped int) {
	enc, err := encode(v)
	if err != nil || len(enc) <= limit {
		return v, 0
	}
	var tree any
	dec := json.NewDecoder(bytes.NewReader(enc))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return v, 0
	}

	root := []any{tree} // so that a bare string is a leaf like any other
	leaves := collect(root, nil)
	fixed := len(enc)
	sizes := make([]int, len(leaves))
	for i, l := range leaves {
		sizes[i] = encodedLen(l.get()) - 2
		fixed -= sizes[i]
	}
	if fixed > limit/2 {
		// The structure alone takes more than half the limit: keep the
		// head of each long array, and leave the strings the other half.
		n, d, ok := pruneArrays(root[0], limit/2)
		if !ok {
			s, d := cutEncoded(string(enc), limit-2)
			return s, d
		}
		root[0], dropped = n, d
		return capStrings(root, limit, dropped)
	}
	return capStrings(root, limit, 0)
}

// capStrings cuts the strings of root[0] so that its encoding fits limit;
// dropped is what was dropped before.
func capStrings(root []any, limit, dropped int) (any, int) {
	var leaves []leaf
	for _, l := range collect(root, nil) {
		if !isMarker(l.get()) { // an array's marker is not cut
			leaves = append(leaves, l)
		}
	}
	enc, _ := encode(root[0])
	fixed := len(enc)
	sizes := make([]int, len(leaves))
	for i, l := range leaves {
		sizes[i] = encodedLen(l.get()) - 2
		fixed -= sizes[i]
	}
	for i, share := range shares(sizes, limit-fixed) {
		if share >= sizes[i] {
			continue
		}
		s, d := cutEncoded(leaves[i].get(), share)
		leaves[i].set(s)
		dropped += d
	}
	return root[0], dropped
}

// pruneArrays returns v with every array cut to its first m elements, for
// the largest m that makes the encoding of v, strings emptied, at most
// budget bytes. A cut array ends with one more element, the string
// "[truncated: N bytes dropped, refine your query]", N being the bytes of the
// elements it lost, so the model is told. ok is false when even m = 0 does
// not fit. v is not changed: the result shares only its strings with it.
func pruneArrays(v any, budget int) (pruned any, dropped int, ok bool) {
	longest := 0
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case []any:
			longest = max(longest, len(x))
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	fits := func(m int) (any, int, bool) {
		p, d := prune(v, m)
		enc, err := encode(emptied(p))
		return p, d, err == nil && len(enc) <= budget
	}
	if _, _, ok := fits(0); !ok {
		return nil, 0, false
	}
	// The largest m in [0, longest) that fits; m = longest cuts nothing,
	// and the caller knows that does not fit.
	lo, hi := 0, longest-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if _, _, ok := fits(mid); ok {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	pruned, dropped, _ = fits(lo)
	return pruned, dropped, true
}

// prune copies v with every array longer than m cut to m elements and the
// marker element.
func prune(v any, m int) (any, int) {
	switch x := v.(type) {
	case []any:
		n := min(len(x), m)
		out := make([]any, 0, n+1)
		dropped := 0
		for _, e := range x[:n] {
			p, d := prune(e, m)
			out = append(out, p)
			dropped += d
		}
		if len(x) > n {
			lost, _ := encode(x[n:]) // "[a,b]": the brackets stand for the commas
			d := len(lost) - 2 + min(n, 1)
			out = append(out, strings.TrimPrefix(middleware.Marker(d), "\n"))
			dropped += d
		}
		return out, dropped
	case map[string]any:
		out := make(map[string]any, len(x))
		dropped := 0
		for k, e := range x {
			p, d := prune(e, m)
			out[k] = p
			dropped += d
		}
		return out, dropped
	default:
		return v, 0
	}
}

// emptied copies v with every string replaced by "", but for the markers
// prune adds, which are not cut.
func emptied(v any) any {
	switch x := v.(type) {
	case string:
		if isMarker(x) {
			return x
		}
		return ""
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = emptied(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = emptied(e)
		}
		return out
	default:
		return v
	}
}

func isMarker(s string) bool {
	return strings.HasPrefix(s, "[truncated: ") && strings.HasSuffix(s, " bytes dropped, refine your query]")
}

// Strings cuts ss so that the sum of their lengths, markers included, is at
// most limit bytes, and returns the cut strings (a new slice, in the same
// order) and the number of bytes dropped. When they fit, ss itself is
// returned with dropped == 0.
func Strings(ss []string, limit int) (capped []string, dropped int) {
	sizes := make([]int, len(ss))
	total := 0
	for i, s := range ss {
		sizes[i] = len(s)
		total += len(s)
	}
	if total <= limit {
		return ss, 0
	}
	capped = make([]string, len(ss))
	for i, share := range shares(sizes, limit) {
		var d int
		capped[i], d = middleware.Truncate(ss[i], share)
		dropped += d
	}
	return capped, dropped
}

// leaf is one string of a decoded JSON value, in place: element i of a, or
// entry k of m.
type leaf struct {
	a []any
	i int
	m map[string]any
	k string
}

func (l leaf) get() string {
	if l.m != nil {
		return l.m[l.k].(string)
	}
	return l.a[l.i].(string)
}

func (l leaf) set(s string) {
	if l.m != nil {
		l.m[l.k] = s
	} else {
		l.a[l.i] = s
	}
}

// collect walks a decoded JSON value in the order encoding/json writes it
// (object keys sorted) and returns its strings, in place. A value that is
// itself a string is boxed in a one-element slice by the caller.
func collect(v any, leaves []leaf) []leaf {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			if _, ok := e.(string); ok {
				leaves = append(leaves, leaf{a: x, i: i})
			} else {
				leaves = collect(e, leaves)
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if _, ok := x[k].(string); ok {
				leaves = append(leaves, leaf{m: x, k: k})
			} else {
				leaves = collect(x[k], leaves)
			}
		}
	}
	return leaves
}

// encode is json.Marshal without HTML escaping and without the newline
// json.Encoder adds.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// encodedLen returns the length of s encoded as a JSON string, quotes
// included.
func encodedLen(s string) int {
	enc, err := encode(s)
	if err != nil {
		return len(s) + 2
	}
	return len(enc)
}

// cutEncoded cuts s by the text rule so that its JSON encoding, quotes
// excluded, is at most share bytes, and returns it with the number of bytes
// of s dropped. Escapes make the encoding longer than the text; each round
// gives the text less room by the excess, so it ends after a few rounds.
func cutEncoded(s string, share int) (string, int) {
	room := share
	for {
		c, d := middleware.Truncate(s, max(room, 0))
		over := encodedLen(c) - 2 - share
		if over <= 0 || room <= 0 {
			return c, d
		}
		room -= over
	}
}

// shares splits budget among strings of the given sizes: max-min fair when
// the fair share can hold a marker, in order otherwise (see the package
// doc). A share >= its size means "keep whole". The shares sum to at most
// max(budget, 0).
func shares(sizes []int, budget int) []int {
	budget = max(budget, 0)
	out := make([]int, len(sizes))
	order := make([]int, len(sizes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return sizes[a] - sizes[b] })
	left := budget
	for pos, i := range order {
		n := len(order) - pos
		fair := left / n
		if sizes[i] <= fair {
			out[i] = sizes[i]
			left -= sizes[i]
			continue
		}
		// Every string from here on is longer than the fair share: each gets
		// it, the first ones one byte more for the remainder.
		if fair < middleware.MarkerLen(sizes[i]) {
			return inOrder(sizes, budget)
		}
		extra := left % n
		for _, j := range order[pos:] {
			out[j] = fair
			if extra > 0 {
				out[j]++
				extra--
			}
		}
		return out
	}
	return out
}

// inOrder gives the budget to the strings in order: whole while they fit,
// then the rest to the first that does not, then nothing. When the rest is
// too small for that string's marker, the string before it is cut instead,
// with its own share and the rest, so that a cut carries its marker whenever
// the budget can hold one.
func inOrder(sizes []int, budget int) []int {
	out := make([]int, len(sizes))
	left := budget
	cut := -1
	for i, n := range sizes {
		out[i] = min(n, left)
		left -= out[i]
		if cut < 0 && out[i] < n {
			cut = i
		}
	}
	for cut > 0 && out[cut] < middleware.MarkerLen(sizes[cut]) {
		out[cut-1] = min(out[cut-1]+out[cut], sizes[cut-1]-1) // < its size: it is cut
		out[cut] = 0
		cut--
	}
	return out
}
