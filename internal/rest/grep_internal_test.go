package rest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolcap/toolcap/internal/shape"
)

// The description tells the model the bounds the search holds to.
func TestDescriptionNamesTheGrepBounds(t *testing.T) {
	for _, want := range []string{
		"longer than " + size(maxMatchLine),
		size(maxMatchLine) + " around each match",
		"longer than " + size(grepWindow) + " is searched in parts",
		"a match longer than " + size(maxMatchBytes) + " may be missed",
	} {
		if !strings.Contains(description, want) {
			t.Errorf("the description does not say %q:\n%s", want, description)
		}
	}
}

// grepEntry is one entry of an answer with a pattern: where its text
// starts in the output and the text, without the "…" that say the line
// goes on.
type grepEntry struct {
	At   int
	Text string
}

// parseGrep returns the entries of an answer with a pattern that names
// no next read.
func parseGrep(t *testing.T, ans string) []grepEntry {
	t.Helper()
	if strings.HasPrefix(ans, "no line matches ") {
		return nil
	}
	var es []grepEntry
	for _, line := range strings.Split(strings.TrimSuffix(ans, "\n"), "\n") {
		at, text, ok := strings.Cut(line, ":")
		n, err := strconv.Atoi(at)
		if !ok || err != nil {
			t.Fatalf("entry %q: want OFFSET:text", line)
		}
		text = strings.TrimSuffix(strings.TrimPrefix(text, "…"), "…")
		es = append(es, grepEntry{n, text})
	}
	return es
}

// matchStarts returns where pattern matches in each line of data from
// offset from on, as a search of the whole line finds them, each with the
// length of its leftmost-first match: anchored at each character, with the
// one before as context.
func matchStarts(t *testing.T, data string, pattern string, from int) map[int]int {
	t.Helper()
	atStart := regexp.MustCompile(`^(?:` + pattern + `)`)
	inside := regexp.MustCompile(`^(?s:.)(?:` + pattern + `)`)
	starts := map[int]int{}
	lineStart := 0
	for lineStart <= len(data) {
		end := strings.IndexByte(data[lineStart:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += lineStart
		}
		line := data[lineStart:end]
		for i := 0; i <= len(line); {
			at := lineStart + i
			if at >= from {
				var loc []int
				if i == 0 || at == from && data[at-1] == '\n' {
					loc = atStart.FindStringIndex(line[i:])
					if loc != nil {
						starts[at] = loc[1]
					}
				} else {
					_, w := utf8.DecodeLastRuneInString(line[:i])
					if loc = inside.FindStringIndex(line[i-w:]); loc != nil {
						starts[at] = loc[1] - w
					}
				}
			}
			if i == len(line) {
				break
			}
			_, w := utf8.DecodeRuneInString(line[i:])
			i += w
		}
		if end == len(data) || end == len(data)-1 {
			break // a newline ends the last line: no empty line follows
		}
		lineStart = end + 1
	}
	return starts
}

// A search in windows of 64 bytes overlapping by 16 finds what a search of
// each whole line finds: every entry shows the output's own bytes around a
// match (the first from the entry's start on), and every match of at most
// 16 bytes is in an entry or in the match of one, whether the pattern's
// assertions fall at a window's edge or not, and from an offset inside a
// line too.
func TestGrepWindowsFindWhatLinesHold(t *testing.T) {
	const window, overlap = 64, 16
	patterns := []string{
		`a`, `ab+`, `^a`, `b$`, `\bab`, `a\b`, `\Ba`, `(?m)^b`, `(?m)a$`, `é+a`,
		`a|ba`, `\ba\b`, `b{3,}`, `a.*b`, `x`, `é\b`, `\Bé`, ` \w+$`, `^$`, `b*`, `a[ab ]*$`, `[ab]+\b`, `a[abc]*\b`, `[ab]{5,}\B`,
	}
	rng := rand.New(rand.NewPCG(1, 2))
	m := NewMemory(Config{})
	k, err := NewKeeper(m)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// The rounds' texts, by the weights of their characters: é ending
	// every line (runs of [abc ] that end nowhere but at a window's edge),
	// long runs of letters, a mix.
	kinds := []struct {
		weights string // a, b, c, space, é, of 100
		endsInE bool
	}{
		{"40 35 2 23 0", true},
		{"48 47 3 2 0", false},
		{"40 35 2 13 10", false},
	}
	for round := range 90 {
		kind := kinds[round%len(kinds)]
		var w [5]int
		fmt.Sscan(kind.weights, &w[0], &w[1], &w[2], &w[3], &w[4])
		var b strings.Builder
		for b.Len() < 300+rng.IntN(900) {
			if rng.IntN(300) == 0 {
				if kind.endsInE {
					b.WriteString("é")
				}
				b.WriteByte('\n')
				continue
			}
			n := rng.IntN(100)
			for i, c := range []string{"a", "b", "c", " ", "é"} {
				if n < w[i] {
					b.WriteString(c)
					break
				}
				n -= w[i]
			}
		}
		if kind.endsInE {
			b.WriteString("é")
		}
		data := b.String()
		e, err := m.Create(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
		info, err := e.Commit()
		if err != nil {
			t.Fatal(err)
		}
		r, err := m.Open(ctx, "", info.Ref)
		if err != nil {
			t.Fatal(err)
		}
		for _, pattern := range patterns {
			from := 0
			if round%2 == 1 {
				from = rng.IntN(len(data))
				for from > 0 && !utf8.RuneStart(data[from]) {
					from-- // a read from inside a character is refused (checkOffset)
				}
			}
			name := fmt.Sprintf("round %d, %q from %d", round, pattern, from)
			re := regexp.MustCompile(pattern)
			a := ReadArgs{Ref: info.Ref, Offset: int64(from), Pattern: pattern}
			ans, err := k.grepSized(ctx, r, info, a, re, shape.Policy{MaxBytes: 1 << 20}, window, overlap)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			entries := parseGrep(t, ans)
			starts := matchStarts(t, data, pattern, from)
			covered := map[int]bool{}
			last := from
			for _, en := range entries {
				if en.At < last || en.At+len(en.Text) > len(data) || data[en.At:en.At+len(en.Text)] != en.Text {
					t.Fatalf("%s: entry %+v is not the output's bytes after the last entry (%d)", name, en, last)
				}
				// The entry's match is the first from its start on: in the
				// stretch, and the matches inside it are its own.
				s := en.At
				for ; s <= len(data); s++ {
					if _, ok := starts[s]; ok {
						break
					}
				}
				if s > en.At+len(en.Text) {
					t.Errorf("%s: entry %+v shows no match\n%q", name, en, data)
				}
				for i := en.At; i <= max(en.At+len(en.Text), s+starts[s]-1); i++ {
					covered[i] = true
				}
				last = en.At + len(en.Text)
			}
			for at, n := range starts {
				if n <= overlap && !covered[at] {
					t.Errorf("%s: the match at %d (%d bytes) is in no entry: %+v\n%q", name, at, n, entries, data)
				}
			}
		}
		_ = r.Close()
	}
}
