package cut

import (
	"strconv"
	"strings"
)

// Found is one marker [FindMarkers] found in a text: it spans
// text[Start:End], leading newline included, and counts N of Unit.
type Found struct {
	Start, End int
	N          int
	Unit       Unit
	// Rest is the read the marker names, nil for a plain marker.
	Rest *Rest
}

// FindMarkers returns every marker of either unit ([Marker], [TokenMarker]),
// plain or naming a read ([RestMarker]), in text, in order. It is the one place outside the cuts themselves that
// recognizes a marker, for checks and for front ends that must tell a
// marker from content.
func FindMarkers(text string) []Found {
	var out []Found
	for at := 0; ; {
		i := strings.Index(text[at:], markerPrefix)
		if i < 0 {
			return out
		}
		start := at + i
		at = start + 1
		rest := text[start+len(markerPrefix):]
		j := 0
		for j < len(rest) && j < 20 && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j == 0 {
			continue
		}
		n, err := strconv.Atoi(rest[:j])
		if err != nil {
			continue
		}
		end := start + len(markerPrefix) + j
		var unit Unit
		var plain string
		switch {
		case strings.HasPrefix(rest[j:], markerSuffix[:len(markerSuffix)-1]):
			unit, plain = UnitBytes, markerSuffix
		case strings.HasPrefix(rest[j:], tokenSuffix[:len(tokenSuffix)-1]):
			unit, plain = UnitTokens, tokenSuffix
		default:
			continue
		}
		after := rest[j+len(plain)-1:]
		switch {
		case strings.HasPrefix(after, "]"):
			out = append(out, Found{Start: start, End: end + len(plain), N: n, Unit: unit})
		default:
			r, size, ok := parseRest(after)
			if !ok {
				continue
			}
			out = append(out, Found{Start: start, End: end + len(plain) - 1 + size, N: n, Unit: unit, Rest: &r})
		}
		at = out[len(out)-1].End
	}
}
