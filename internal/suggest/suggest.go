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

// distance is the optimal string alignment distance between a and b, in
// runes: insertions, deletions, substitutions and transpositions of adjacent
// runes each cost 1, so "Raed" is one edit from "Read".
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// d[i][j] is the distance between ra[:i] and rb[:j].
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
