package wire

import "encoding/binary"

// plainEnd returns the index of the first byte of b at or after i that
// does not stand for itself in a JSON string (a quote, a backslash or a
// control character; see plain), or len(b). It tests eight bytes at a
// time: a string's text is read once or twice whatever its size, and most
// of it is plain runs, which a byte-at-a-time table lookup reads at about
// a byte a nanosecond.
//
// The run is of one of two kinds, which the last two arguments give,
// constants at every call so that plainEnd is inlined with them folded
// in: text, (0, &plain), every byte that stands for itself, UTF-8 passed
// on unchecked (the Scanner); or ASCII, (highs, &plainASCII), which also
// ends at each byte of 0x80 or more, for a decoder that checks UTF-8 as it
// goes ([AppendUnquoted], [StringDecoder]).
func plainEnd(b []byte, i int, high uint64, table *[256]bool) int {
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		// The classic tests for a byte below n, (v - n) &^ v, on x for
		// 0x20 and on x^'"' and x^'\\' for 1 (a zero byte): a byte found
		// sets its high bit. A byte of 0x80 or more sets none (^v clears
		// it), and none is missed, but for ASCII, where x&high sets it;
		// bits above the first byte found may be set wrongly by the
		// borrow, so that word is read byte by byte.
		q := x ^ (ones * '"')
		s := x ^ (ones * '\\')
		if (x&high|(x-ones*0x20)&^x|(q-ones)&^q|(s-ones)&^s)&highs != 0 {
			break
		}
	}
	for i < len(b) && table[b[i]] {
		i++
	}
	return i
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plain marks the bytes that stand for themselves in a JSON string, and
// plainASCII those of them that are ASCII.
var plain, plainASCII = func() (t, ascii [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
		ascii[c] = t[c] && c < 0x80
	}
	return t, ascii
}()
