package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
)

// Read answers a call of the read tool with arguments args, under the
// scope of ctx, held to p (the read tool's own policy): a page of the
// output from the offset asked, whose marker names the next offset, or
// with a pattern the matching lines. The answer is within p's limits, so
// a chain's cap passes it unchanged. An error is the answer of a failed
// call, in words for the model: malformed arguments, an unknown, expired
// or foreign ref ([ErrUnknown]), an offset past the end.
func (k *Keeper) Read(ctx context.Context, args json.RawMessage, p shape.Policy) (string, error) {
	a, err := ParseReadArgs(args)
	if err != nil {
		return "", fmt.Errorf("%s: %w", k.tool, err)
	}
	var re *regexp.Regexp
	if a.Pattern != "" {
		if re, err = regexp.Compile(a.Pattern); err != nil {
			return "", fmt.Errorf("%s: pattern: %w", k.tool, err)
		}
	}
	if !ValidRef(a.Ref) {
		return "", k.unknown(a.Ref)
	}
	r, err := k.store.Open(ctx, k.scopeOf(ctx), a.Ref)
	if err != nil {
		if errors.Is(err, ErrUnknown) {
			return "", k.unknown(a.Ref)
		}
		k.fail("open", err)
		return "", &storeFailed{fmt.Sprintf("%s: ref %s: the store failed; run the tool again", k.tool, strconv.Quote(a.Ref)), err}
	}
	defer r.Close()
	info := r.Info()
	switch {
	case a.Offset > info.Original:
		return "", fmt.Errorf("%s: offset %d is past the end of the output (%d bytes)", k.tool, a.Offset, info.Original)
	case a.Offset == info.Original:
		return "", fmt.Errorf("%s: offset %d is the end of the output (%d bytes): nothing left to read", k.tool, a.Offset, info.Original)
	case a.Offset >= info.Size:
		return "", fmt.Errorf("%s: bytes from offset %d on were not kept: the store keeps the first %d bytes of an output (max_entry_bytes); run the tool again, narrower", k.tool, a.Offset, info.Size)
	}
	if err := k.checkOffset(r, info, a); err != nil {
		return "", err
	}
	if re != nil {
		return k.grep(ctx, r, info, a, re, p)
	}
	return k.page(r, info, a, p)
}

// checkOffset refuses an offset that falls inside a UTF-8 character of
// the entry: a page from there would begin with the character's last
// bytes, which no client decodes (issue 39, item 11). The error names the
// offsets where the character starts and where the next one does. A byte
// that is not part of a valid sequence (a stray continuation byte) is a
// character of its own, shown as U+FFFD: an offset at it is a boundary.
func (k *Keeper) checkOffset(r Reader, info Info, a ReadArgs) error {
	if a.Offset == 0 {
		return nil
	}
	from := max(0, a.Offset-(utf8.UTFMax-1))
	var buf [2*utf8.UTFMax - 1]byte
	b := buf[:min(int64(len(buf)), info.Size-from)]
	if n, err := r.ReadAt(b, from); n < len(b) {
		return fmt.Errorf("%s: reading ref %s: %w", k.tool, strconv.Quote(a.Ref), err)
	}
	at := int(a.Offset - from)
	for i := at - 1; i >= 0; i-- {
		if !utf8.RuneStart(b[i]) {
			continue
		}
		c, size := utf8.DecodeRune(b[i:])
		if (c != utf8.RuneError || size > 1) && i+size > at {
			start := from + int64(i)
			return fmt.Errorf("%s: offset %d is inside a UTF-8 character of %d bytes, which starts at offset %d: read from offset %d, or %d for the character after it",
				k.tool, a.Offset, size, start, start, start+int64(size))
		}
		return nil
	}
	return nil
}

// unknown is the error of a ref the scope cannot read, the same for every
// reason.
func (k *Keeper) unknown(ref string) error {
	if len(ref) > 64 {
		ref = ref[:cut.FloorCharBoundary(ref, 61)] + "..."
	}
	return fmt.Errorf("%s: ref %s: %w", k.tool, strconv.Quote(ref), ErrUnknown)
}

// page answers a read without a pattern: the bytes from a.Offset, as many
// as p holds (and at most a.Length), with a marker naming the next offset
// when any are left.
func (k *Keeper) page(r Reader, info Info, a ReadArgs, p shape.Policy) (string, error) {
	off := int(a.Offset)
	end := int(info.Size)
	if a.Length > 0 && a.Length < info.Size-a.Offset {
		end = off + int(a.Length)
	}
	// A page shows at most the byte limit (and at most length); a few
	// bytes more, where the output has them, find the character boundary
	// at the cut.
	want := min(end-off, p.MaxBytes) + min(utf8.UTFMax, int(info.Size)-min(end, off+p.MaxBytes))
	buf := make([]byte, want)
	if n, err := r.ReadAt(buf, int64(off)); n < want && err != nil {
		return "", fmt.Errorf("%s: reading ref %s: %w", k.tool, strconv.Quote(a.Ref), err)
	}
	if c, size := utf8.DecodeRune(buf); a.Length > 0 && int64(size) > a.Length && (c != utf8.RuneError || size > 1) {
		// Not one character in the page: fitPage would find no room.
		return "", fmt.Errorf("%s: length %d is shorter than the UTF-8 character at offset %d, of %d bytes: ask for a length of at least %d", k.tool, a.Length, off, size, size)
	}
	// buf is never written again: the page may share it.
	window := unsafe.String(unsafe.SliceData(buf), len(buf))
	last := end == int(info.Original) // nothing would be left after a whole page
	if end-off <= p.MaxBytes && last {
		if whole, _ := cut.ReplaceInvalid(window[:end-off]); len(whole) <= p.MaxBytes && fits(whole, p) {
			return whole, nil
		}
	}
	marker := func(shown int) string {
		next := off + shown
		if next >= int(info.Size) {
			// Past what the store kept: nothing more to read.
			return cut.Marker(int(info.Original) - next)
		}
		return cut.RestMarker(int(info.Original)-next, cut.UnitBytes, cut.Rest{Tool: k.tool, Args: readArgs(a.Ref, next, int(a.Length))})
	}
	page, ok := fitPage(window, end-off, p, marker)
	if !ok {
		return "", k.tooSmall(p)
	}
	return page, nil
}

// fitPage returns the longest head of the window (total bytes, of which
// window holds the first) that fits p followed by marker(its length), cut on
// a character boundary, and false when not even the marker alone fits.
// The head is shown as a client decodes it: a byte of the entry that is
// not valid UTF-8 is a U+FFFD of 3 bytes, measured so; the offsets stay
// the entry's.
func fitPage(window string, total int, p shape.Policy, marker func(shown int) string) (string, bool) {
	k := min(total, len(window))
	// The marker's length changes with the digits of its numbers only:
	// step down until the head and its marker fit.
	for {
		k = cut.FloorCharBoundary(window, k)
		if k == 0 {
			return "", false
		}
		m := marker(k)
		head, _ := cut.ReplaceInvalid(window[:k])
		over := len(head) + len(m) - p.MaxBytes
		if over <= 0 {
			page := head + m
			if fits(page, p) {
				return page, true
			}
			// Over the token limit: give up a share of the head.
			over = max(1, k/8)
		} else if len(head) > k {
			// A byte of the window is 1 to 3 of the head: give up a
			// third of the excess, which never gives up too much.
			over = max(1, over/3)
		}
		if k <= over {
			// Not a byte beside the marker: a page that shows nothing
			// would name its own offset again.
			return "", false
		}
		k -= over
	}
}

// tooSmall is the error of a read tool whose limit cannot hold an answer
// beside the marker that names the next read.
func (k *Keeper) tooSmall(p shape.Policy) error {
	return fmt.Errorf("%s: its limit of %d bytes cannot hold a page and the marker naming the next read; raise its max_bytes", k.tool, p.MaxBytes)
}

// storeFailed is the error of a read whose store failed: its words are
// the model's, naming no address of the store, and it wraps the store's
// own error for a program that reports it to a person, as toolcap read
// does.
type storeFailed struct {
	msg string
	err error
}

func (e *storeFailed) Error() string { return e.msg }
func (e *storeFailed) Unwrap() error { return e.err }
