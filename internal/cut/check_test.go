package cut_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolcap/toolcap/internal/cut"
)

// markerRE finds a marker anywhere in an output.
var markerRE = regexp.MustCompile(`\n\[truncated: (\d+) bytes dropped, refine your query\]`)

// check returns what is wrong with out, the cut of in at limit with spec
// and figures st, or "": the properties every cut has.
func check(in string, limit int, spec cut.Spec, out string, st cut.Stats) string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	// Issue 22: the limit holds in what the client decodes, each invalid
	// byte a U+FFFD; the cut's input, and its figures, are that text. Input
	// that fits even at 3 bytes a byte is left as it is, unread.
	if len(in) <= limit/3 {
		if out != in || st.Changed() {
			fail("input within a third of the limit changed (figures %+v)", st)
		}
		return strings.Join(errs, "; ")
	}
	fixed, replaced := cut.ReplaceInvalid(in)
	switch {
	case st.Replaced == 0 && replaced > 0 && len(in) > limit && limit > 0 &&
		spec.Keep != cut.KeepJSON && len(spec.KeepLines) == 0:
		// A head or head_tail cut reads only the parts it can show; when
		// those are valid, the invalid bytes past them count as they are,
		// and the output must still be valid UTF-8 (checked below).
	case st.Replaced != replaced:
		fail("figures say %d bytes replaced, the input has %d invalid bytes", st.Replaced, replaced)
		in = fixed
	default:
		in = fixed
	}
	if !utf8.ValidString(out) {
		fail("the output is not valid UTF-8: %.200q", out)
	}
	if len(in) <= limit {
		if out != in || st.Changed() != (replaced > 0) {
			fail("input within the limit changed (figures %+v)", st)
		}
		return strings.Join(errs, "; ")
	}
	if len(out) > max(limit, 0) {
		fail("output of %d bytes over the limit %d", len(out), limit)
	}
	if st.Original != len(in) || st.Kept+st.Dropped != st.Original {
		fail("figures %+v do not add up for an input of %d bytes", st, len(in))
	}
	again, st2 := cut.Cut(out, limit, spec)
	if again != out || st2.Changed() {
		fail("not idempotent: a second cut changed the output (%d to %d bytes)", len(out), len(again))
	}
	// The marker: at most one outside JSON strings, reporting Dropped.
	doc, n, hasMarker := splitDocument(out, st)
	switch {
	case st.Compacted:
		if hasMarker || st.Dropped != 0 || !json.Valid([]byte(out)) {
			fail("compacted output has a marker or is not JSON")
		}
	case st.Strategy == cut.KeepJSON:
		if !json.Valid([]byte(doc)) {
			fail("document part is not valid JSON: %.200q", doc)
		}
		if !hasMarker || n != st.Dropped || st.Dropped != len(in)-len(doc) {
			fail("JSON marker reports %d (present %v), figures say %d, input less document is %d", n, hasMarker, st.Dropped, len(in)-len(doc))
		}
	case st.Dropped > 0 && limit >= 2*cut.MarkerLen(len(in)):
		if !hasMarker || n != st.Dropped {
			fail("marker reports %d (present %v), figures say %d", n, hasMarker, st.Dropped)
		}
		if c := len(markerRE.FindAllString(out, -1)); c != 1 && st.Strategy != cut.KeepHeadTail {
			fail("%d markers", c)
		}
		extra := 0
		if st.Strategy == cut.KeepHeadTail {
			extra = 1
		}
		if got := len(out) - cut.MarkerLen(n) - extra; got != st.Kept {
			fail("output shows %d bytes of input, figures say %d", got, st.Kept)
		}
	}
	if st.Strategy == cut.KeepHeadTail && hasMarker {
		if msg := checkHeadTail(in, out, st, spec); msg != "" {
			fail("%s", msg)
		}
	}
	return strings.Join(errs, "; ")
}

// splitDocument splits a cut's output into its text or document part and
// the N of its marker. A head_tail marker sits inside; it returns the N of
// the last marker that follows a line break or the head.
func splitDocument(out string, st cut.Stats) (doc string, n int, ok bool) {
	ms := markerRE.FindAllStringSubmatchIndex(out, -1)
	if len(ms) == 0 {
		return out, 0, false
	}
	m := ms[len(ms)-1]
	if st.Strategy == cut.KeepHeadTail {
		// The marker the cut wrote is the first one at a position whose N
		// equals Dropped; a marker copied from the input may come earlier.
		for _, mm := range ms {
			v, _ := strconv.Atoi(out[mm[2]:mm[3]])
			if v == st.Dropped {
				m = mm
				break
			}
		}
	}
	v, err := strconv.Atoi(out[m[2]:m[3]])
	if err != nil {
		return out, 0, false
	}
	return out[:m[0]], v, true
}

// checkHeadTail checks that a head_tail output is a prefix of in, the
// marker and a newline, lines of in in order, and a suffix of in.
func checkHeadTail(in, out string, st cut.Stats, spec cut.Spec) string {
	mk := cut.Marker(st.Dropped) + "\n"
	// Find a split where the head is a prefix of in.
	for i := strings.Index(out, mk); i >= 0; {
		head, rest := out[:i], out[i+len(mk):]
		if strings.HasPrefix(in, head) {
			// rest = rescued lines + tail; peel the rescued lines off.
			pos := len(head)
			for r := 0; r < st.Rescued; r++ {
				j := strings.IndexByte(rest, '\n')
				if j < 0 {
					return "fewer rescued lines than Rescued"
				}
				l := rest[:j+1]
				k := strings.Index(in[pos:], "\n"+l)
				if k < 0 && !(pos == 0 && strings.HasPrefix(in, l)) {
					return fmt.Sprintf("rescued line %q is not a line of the input after the head", l)
				}
				if !matchesAny(spec.KeepLines, l[:len(l)-1]) {
					return fmt.Sprintf("rescued line %q matches no pattern", l)
				}
				pos += k + 1 + len(l)
				rest = rest[j+1:]
			}
			if !strings.HasSuffix(in, rest) || len(in)-len(rest) < pos {
				return "the part after the marker and the rescued lines is not a suffix of the input after them"
			}
			return ""
		}
		j := strings.Index(out[i+1:], mk)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return "no split into a prefix of the input, the marker line and the rest"
}

func matchesAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}
