package wire

import "encoding/binary"

// plainEnd returns the index of the first byte of b at or after i that
// does not stand for itself in a JSON string (a quote, a backslash or a
// control character; see plain), or len(b). It tests eight bytes at a
// time: a string's text is read once or twice whatever its size, and most
// of it is plain runs, which a byte-at-a-time table lookup reads at about
// a byte a nanosecond.
func plainEnd(b []byte, i int) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		// The classic tests for a byte below n, (v - n) &^ v, on x for
		// 0x20 and on x^'"' and x^'\\' for 1 (a zero byte): a byte found
		// sets its high bit. A byte of 0x80 or more sets none (^v clears
		// it), and none is missed; bits above the first byte found may be
		// set wrongly by the borrow, so that word is read byte by byte.
		q := x ^ (ones * '"')
		s := x ^ (ones * '\\')
		if ((x-ones*0x20)&^x|(q-ones)&^q|(s-ones)&^s)&highs != 0 {
			break
		}
	}
	for i < len(b) && plain[b[i]] {
		i++
	}
	return i
}
