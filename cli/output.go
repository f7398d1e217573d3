package cli

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// writeTable prints rows as columns separated by two spaces, each column as
// wide as its widest cell; right[i] aligns column i to the right. The last
// column is not padded.
func writeTable(w io.Writer, indent string, rows [][]string, right []bool) {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			switch {
			case i < len(right) && right[i]:
				b.WriteString(pad + c)
			case i == len(r)-1:
				b.WriteString(c)
			default:
				b.WriteString(c + pad)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// size renders a byte count for people: "512 B", "16.0 KiB", "1.3 MiB".
func size(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1024*1024))
	}
}

// printable returns s safe to show on a terminal, at most width runes: tabs
// become spaces, other control characters and invalid UTF-8 become '.', and
// a longer line ends with "…".
func printable(s string, width int) string {
	var b strings.Builder
	n := 0
	for i, r := range s {
		if n == width {
			if i < len(s) {
				b.WriteString("…")
			}
			break
		}
		switch {
		case r == '\t':
			r = ' '
		case r == utf8.RuneError || !unicode.IsPrint(r) && r != ' ':
			r = '.'
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// lastLines returns the last n lines of s ("a\nb\n" ends with an empty
// line only if s ends with two newlines).
func lastLines(s string, n int) []string {
	s = strings.TrimSuffix(s, "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// plural returns "1 file", "2 files".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
