package rest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
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
	if re != nil {
		return k.grep(ctx, r, info, a, re, p)
	}
	return k.page(r, info, a, p)
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
	// buf is never written again: the page may share it.
	window := unsafe.String(unsafe.SliceData(buf), len(buf))
	last := end == int(info.Original) // nothing would be left after a whole page
	if end-off <= p.MaxBytes && last && fits(window[:end-off], p) {
		return window[:end-off], nil
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
		over := k + len(m) - p.MaxBytes
		if over <= 0 {
			page := window[:k] + m
			if fits(page, p) {
				return page, true
			}
			// Over the token limit: give up a share of the head.
			over = max(1, k/8)
		}
		if k <= over {
			// Not a byte beside the marker: a page that shows nothing
			// would name its own offset again.
			return "", false
		}
		k -= over
	}
}

// maxMatchLine is the most bytes of one matching line an answer shows.
const maxMatchLine = 1024

// grep answers a read with a pattern: the lines of the output from
// a.Offset on that match re, each as "OFFSET:line", as many as p holds,
// with a marker naming the read of the next ones.
func (k *Keeper) grep(ctx context.Context, r Reader, info Info, a ReadArgs, re *regexp.Regexp, p shape.Policy) (string, error) {
	br := bufio.NewReaderSize(io.NewSectionReader(r, a.Offset, info.Size-a.Offset), 64<<10)
	g := grepped{k: k, info: info, a: a}
	at := a.Offset
	for i := 0; ; i++ {
		if i%4096 == 0 && ctx.Err() != nil {
			return "", fmt.Errorf("%s: %w", k.tool, ctx.Err())
		}
		line, size, err := readLine(br)
		if size == 0 {
			if err != nil && err != io.EOF {
				return "", fmt.Errorf("%s: reading ref %s: %w", k.tool, strconv.Quote(a.Ref), err)
			}
			break
		}
		if re.Match(line) {
			if len(line) > maxMatchLine {
				b := cut.FloorCharBoundary(string(line), maxMatchLine)
				line = append(line[:b:b], "…"...)
			}
			entry := strconv.FormatInt(at, 10) + ":" + string(line) + "\n"
			if g.b.Len()+len(entry)+len(g.marker(at)) > p.MaxBytes {
				return g.end(len(g.ends), at, p)
			}
			g.b.WriteString(entry)
			g.ends = append(g.ends, g.b.Len())
			g.ats = append(g.ats, at)
		}
		at += int64(size)
	}
	out := g.b.String()
	if len(g.ends) == 0 {
		out = fmt.Sprintf("no line matches %s from offset %d to the end (%d bytes)", clip([]byte(strconv.Quote(a.Pattern))), a.Offset, info.Size)
	}
	if info.Size < info.Original {
		out += cut.Marker(int(info.Original - info.Size))
	}
	if !fits(out, p) {
		if len(g.ends) == 0 {
			return "", k.tooSmall(p)
		}
		// A token limit tighter than the byte limit: show fewer lines.
		return g.end(len(g.ends)-1, g.ats[len(g.ats)-1], p)
	}
	return out, nil
}

// tooSmall is the error of a read tool whose limit cannot hold an answer
// beside the marker that names the next read.
func (k *Keeper) tooSmall(p shape.Policy) error {
	return fmt.Errorf("%s: its limit of %d bytes cannot hold a page and the marker naming the next read; raise its max_bytes", k.tool, p.MaxBytes)
}

// grepped is the answer of a read with a pattern, as it is built.
type grepped struct {
	k    *Keeper
	info Info
	a    ReadArgs
	b    strings.Builder
	ends []int   // where each shown line ends in b
	ats  []int64 // where each shown line starts in the output
}

// marker returns the marker naming the read of the matching lines from
// offset at.
func (g *grepped) marker(at int64) string {
	return cut.RestMarker(int(g.info.Original-at), cut.UnitBytes, cut.Rest{Tool: g.k.tool, Args: grepArgs(g.a.Ref, at, g.a.Pattern)})
}

// end returns the first n lines shown, or fewer when they do not fit p
// with their marker, and the marker naming the read from the first line
// not shown (next, when all n are shown); an error when not one line fits
// beside the marker.
func (g *grepped) end(n int, next int64, p shape.Policy) (string, error) {
	text := g.b.String()
	for ; n > 0; n-- {
		at := next
		if n < len(g.ats) {
			at = g.ats[n]
		}
		out := strings.TrimSuffix(text[:g.ends[n-1]], "\n") + g.marker(at)
		if fits(out, p) {
			return out, nil
		}
	}
	// Not one line beside the marker: an answer of the marker alone would
	// name the same read again.
	return "", g.k.tooSmall(p)
}

// grepArgs returns the arguments of the read of the matching lines of ref
// from offset.
func grepArgs(ref string, offset int64, pattern string) string {
	q, _ := json.Marshal(pattern) // a string always marshals
	return `{"ref":"` + ref + `","offset":` + strconv.FormatInt(offset, 10) + `,"pattern":` + string(q) + `}`
}

// readLine returns the next line of br without its newline, and the bytes
// it spans with its newline. A line longer than br's buffer is returned
// as its first bufferful, the rest skipped (and counted).
func readLine(br *bufio.Reader) ([]byte, int, error) {
	line, err := br.ReadSlice('\n')
	size := len(line)
	if err == bufio.ErrBufferFull {
		line = append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			var more []byte
			more, err = br.ReadSlice('\n')
			size += len(more)
		}
	}
	if err != nil && err != io.EOF {
		return nil, size, err
	}
	line = trimNewline(line)
	if size == 0 {
		return nil, 0, io.EOF
	}
	return line, size, nil
}

func trimNewline(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
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
