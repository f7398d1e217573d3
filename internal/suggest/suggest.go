// Package suggest finds the closest known name to a mistyped one, for
// "did you mean" hints in warnings and errors.
package suggest

import "strings"

// Closest returns the candidate closest to name, or "" when none is close
// enough to be a likely typo: an edit distance of at most a third of the
// longer name's length (at least 1), ignoring case. Ties go to the earlier
// candidate.
func Closest(name string, candidates []string) string {
	best, bestDist := "", -1
	lname := strings.ToLower(name)
	for _, c := range candidates {
		if c == name {
			continue
		}
		d := distance(lname, strings.ToLower(c))
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist < 0 {
		return ""
	}
	maxLen := max(len([]rune(name)), len([]rune(best)))
	if bestDist > max(1, maxLen/3) {
		return ""
	}
	return best
}

// distance is the Levenshtein distance between a and b, in runes.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
