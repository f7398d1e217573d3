package wire

import (
	"encoding/json"
	"errors"
	"fmt"
)

// This file splits a JSON text held in memory into the values of its
// members or elements, as slices of it, without decoding them: a reader
// that decodes only what it needs (the Claude Code hook) finds a value's
// end by scanning its bytes, strings by searching for their closing quote
// ([StringEnd]), containers by counting brackets, and a literal up to the
// next delimiter, checked as the Scanner checks one ([Literal]). Nothing
// else of a value is checked: a value written back unchanged is checked
// as it is written (json.RawMessage), one decoded as it is decoded.

// SplitObject splits data, a JSON object, into its members' values, as
// slices of data, without decoding them. It checks the object's own
// syntax, and of each value only where it ends ([ValueEnd]); a member
// named twice keeps its last value, as encoding/json does.
func SplitObject(data []byte) (map[string]json.RawMessage, error) {
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
		end, err := stringEnd(data, i)
		if err != nil {
			return nil, err
		}
		name, err := Unquote(data[i:end])
		if err != nil {
			return nil, fmt.Errorf("offset %d: member name: %w", i, err)
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return nil, fmt.Errorf("offset %d: want ':' after %q", i, name)
		}
		start := skipSpace(data, i+1)
		end, err = ValueEnd(data, start)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		members[name] = data[start:end:end]
		var more bool
		if i, more, err = after(data, end, '}'); err != nil {
			return nil, err
		} else if !more {
			return members, nil
		}
	}
}

// SplitArray splits data, a JSON array, into its elements, as slices of
// data, as SplitObject splits an object. An empty array is an empty slice,
// not nil.
func SplitArray(data []byte) ([]json.RawMessage, error) {
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
		end, err := ValueEnd(data, i)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", len(elems), err)
		}
		elems = append(elems, data[i:end:end])
		var more bool
		if i, more, err = after(data, end, ']'); err != nil {
			return nil, err
		} else if !more {
			return elems, nil
		}
	}
}

// after reads what follows a member or element of a container that close
// closes, which ended at data[end]: more is true after a comma, with i
// where the next one starts; false at close, with an error when more than
// space follows it, or at any other byte, an error.
func after(data []byte, end int, close byte) (i int, more bool, err error) {
	i = skipSpace(data, end)
	switch {
	case i < len(data) && data[i] == ',':
		return skipSpace(data, i+1), true, nil
	case i < len(data) && data[i] == close:
		return i + 1, false, trailing(data, i+1)
	}
	return i, false, fmt.Errorf("offset %d: want ',' or '%c'", i, close)
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

// stringEnd returns the index past the closing quote of the string whose
// opening quote is data[i].
func stringEnd(data []byte, i int) (int, error) {
	if end, _ := StringEnd(data[i+1:], 0); end >= 0 {
		return i + 1 + end + 1, nil
	}
	return 0, fmt.Errorf("offset %d: unterminated string", i)
}

// ValueEnd returns the end of the value that starts at data[i]: a string
// (to its closing quote), an object or array (brackets counted, at any
// depth, strings skipped), or a literal (up to the next delimiter, and
// checked).
func ValueEnd(data []byte, i int) (int, error) {
	if i >= len(data) {
		return 0, errors.New("missing value")
	}
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, err := stringEnd(data, j)
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
	var lit Literal
	j := i
	for j < len(data) && !EndsLiteral(data[j]) {
		lit.Add(data[j])
		j++
	}
	if !lit.Valid() {
		return 0, fmt.Errorf("offset %d: invalid value", i)
	}
	return j, nil
}

// EndsLiteral reports whether c ends a literal or a number: a delimiter
// or JSON white space.
func EndsLiteral(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// A Literal checks a literal given a byte at a time, with no bound on its
// length: one of true, false and null, or a number, checked by the states
// the Scanner reads numbers with. The zero Literal has no byte.
type Literal struct {
	n    int
	word [5]byte
	st   int
	bad  bool
}

// Add adds the literal's next byte.
func (l *Literal) Add(c byte) {
	if l.n < len(l.word) {
		l.word[l.n] = c
	}
	l.n++
	if l.bad {
		return
	}
	switch next := numStep(l.st, c); next {
	case numEnd, numBad:
		l.bad = true
	default:
		l.st = next
	}
}

// Valid reports whether the bytes added are a literal, as json.Valid
// reports it of them alone.
func (l *Literal) Valid() bool {
	switch w := string(l.word[:min(l.n, len(l.word))]); {
	case l.n <= len(l.word) && (w == "true" || w == "false" || w == "null"):
		return true
	case l.n == 0 || l.bad:
		return false
	}
	return numFinal(l.st)
}
