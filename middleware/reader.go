package middleware

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"unicode/utf8"
)

// TruncateReader reads r to its end and returns what [Truncate] would return
// for its whole content at limit, while holding at most limit+4 bytes of it
// in memory: the rest is counted, not kept. It is for content too large to
// hold, such as a command's output piped through toolcap.
//
// On a read error it returns the error and no content.
func TruncateReader(r io.Reader, limit int) (capped string, dropped int64, err error) {
	// limit+UTFMax bytes are enough to place any cut (see cut); a limit
	// that large is never reached by a real input anyway.
	keep := int64(max(0, limit))
	if keep <= math.MaxInt64-utf8.UTFMax {
		keep += utf8.UTFMax
	}
	var buf bytes.Buffer
	buf.Grow(int(min(keep, 64<<10)))
	if _, err := io.CopyN(&buf, r, keep); err != nil && err != io.EOF {
		return "", 0, fmt.Errorf("read: %w", err)
	}
	rest, err := io.Copy(io.Discard, r)
	if err != nil {
		return "", 0, fmt.Errorf("read: %w", err)
	}
	total := int64(buf.Len()) + rest
	if total <= int64(limit) {
		return buf.String(), 0, nil
	}
	s, d := cut(buf.String(), int(total), limit)
	return s, int64(d), nil
}
