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
}

// FindMarkers returns every marker of either unit ([Marker], [TokenMarker])
// in text, in order. It is the one place outside the cuts themselves that
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
		switch {
		case strings.HasPrefix(rest[j:], markerSuffix):
			out = append(out, Found{Start: start, End: end + len(markerSuffix), N: n, Unit: UnitBytes})
		case strings.HasPrefix(rest[j:], tokenSuffix):
			out = append(out, Found{Start: start, End: end + len(tokenSuffix), N: n, Unit: UnitTokens})
		default:
			continue
		}
		at = out[len(out)-1].End
	}
}
