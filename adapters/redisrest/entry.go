package redisrest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolcap/toolcap/internal/rest"
)

// appendScript appends ARGV[2] and ARGV[3] to the temp key KEYS[1] and
// renews its time to live (ARGV[4], milliseconds), only when the key
// holds ARGV[1] bytes: a temp key that expired, was evicted or got a
// write twice (a retried round trip) fails the entry instead of making it
// hold the wrong bytes. It returns the new length, or -1.
var appendScript = redis.NewScript(`
if redis.call('STRLEN', KEYS[1]) ~= tonumber(ARGV[1]) then return -1 end
if #ARGV[2] > 0 then redis.call('APPEND', KEYS[1], ARGV[2]) end
local n = redis.call('APPEND', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return n
`)

// commitScript checks the temp key KEYS[1] as appendScript does (ARGV[1]
// bytes), appends ARGV[2], writes the header ARGV[3] over its start and
// renames it to the entry's key KEYS[2] with the entry's time to live
// (ARGV[4], milliseconds): one script, so a reader sees all of the entry
// or nothing. It returns 1, or -1.
var commitScript = redis.NewScript(`
if redis.call('STRLEN', KEYS[1]) ~= tonumber(ARGV[1]) then return -1 end
if #ARGV[2] > 0 then redis.call('APPEND', KEYS[1], ARGV[2]) end
redis.call('SETRANGE', KEYS[1], 0, ARGV[3])
redis.call('RENAME', KEYS[1], KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1
`)

// bufs holds the buffers of entries, each of room for the first round
// trip: an entry gathers up to a round trip's bytes before it sends them,
// and Commit or Abort gives the buffer back, so that a busy front end
// reuses a few buffers instead of allocating one per cut.
var bufs = sync.Pool{New: func() any {
	b := make([]byte, 0, ChunkBytes+headerLen)
	return &b
}}

// getBuf returns an empty buffer from the pool, with room for a header.
func getBuf() []byte { return (*bufs.Get().(*[]byte))[:headerLen] }

// putBuf gives b back to the pool.
func putBuf(b []byte) {
	if cap(b) == ChunkBytes+headerLen {
		b = b[:0]
		bufs.Put(&b)
	}
}

// errLost is the error of an entry whose temp key is gone (expired,
// evicted) or was written twice.
var errLost = errors.New("the entry's temp key was lost (expired or evicted) before its commit")

// entry is an entry being written. Its bytes wait in buf until they make
// a round trip of ChunkBytes; until the first round trip, buf starts with
// room for the header, so that an entry that fits one round trip is one
// SET at Commit.
type entry struct {
	s     *Store
	ctx   context.Context // of Create: every round trip of the entry runs under it
	ref   string
	final string
	temp  string

	mu      sync.Mutex
	b       rest.Bounded // bytes kept and written; the sticky error
	buf     []byte
	sent    int64 // the temp key's length: header and bytes sent so far
	renewed time.Time
}

func (e *entry) Ref() string { return e.ref }

// Write keeps p up to the store's bound on one entry and counts the rest,
// sending a round trip for each ChunkBytes it gathers, and one for a
// buffer older than a quarter of TempTTL, so that the temp key outlives a
// slow stream.
func (e *entry) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	n, err := e.b.Write(p, e.keep)
	if err != nil {
		return 0, err
	}
	if e.sent > 0 && time.Since(e.renewed) > TempTTL/4 {
		if err := e.send(nil); err != nil {
			return 0, e.b.Fail(err)
		}
	}
	return n, nil
}

// keep gathers p in the buffer, sending a round trip each time the buffer
// and p make one.
func (e *entry) keep(p []byte) error {
	for len(p) > 0 {
		// A round trip carries ChunkBytes of the output, and the header's
		// room in the first.
		trip := ChunkBytes
		if e.sent == 0 {
			trip += headerLen
		}
		if len(e.buf)+len(p) <= trip {
			e.buf = append(e.buf, p...)
			return nil
		}
		// The buffer and the head of p make one round trip, p's bytes
		// sent from where they are.
		n := max(trip-len(e.buf), 0)
		if err := e.send(p[:n]); err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}

// send appends the buffer, then more, to the temp key, and empties the
// buffer.
func (e *entry) send(more []byte) error {
	ctx, cancel, err := e.s.op(e.ctx, "write")
	if err != nil {
		return err
	}
	defer cancel()
	args := []any{e.sent, e.buf, more, TempTTL.Milliseconds()}
	n, err := appendScript.Run(ctx, e.s.client, []string{e.temp}, args...).Int64()
	switch {
	case err != nil:
		return e.s.failed(e.ctx, "write entry "+e.ref, err)
	case n < 0:
		return fmt.Errorf("rest: redis %s: write entry %s: %w", e.s.where, e.ref, errLost)
	}
	e.sent = n
	e.buf = e.buf[:0]
	e.renewed = time.Now()
	return nil
}

// Commit makes the entry readable under its ref with the store's time to
// live: one SET of header and bytes when nothing was sent yet, otherwise
// the commit script.
func (e *entry) Commit() (rest.Info, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.b.Err(); err != nil {
		return rest.Info{}, err
	}
	ctx, cancel, err := e.s.op(e.ctx, "commit")
	if err != nil {
		return rest.Info{}, e.b.Fail(err)
	}
	defer cancel()
	h := header(e.b.Original(), e.b.Size())
	ttl := max(e.s.ttl, time.Millisecond)
	if e.sent == 0 {
		copy(e.buf, h[:])
		err = e.s.client.Set(ctx, e.final, e.buf, ttl).Err()
	} else {
		var n int64
		n, err = commitScript.Run(ctx, e.s.client, []string{e.temp, e.final},
			e.sent, e.buf, h[:], ttl.Milliseconds()).Int64()
		if err == nil && n < 0 {
			return rest.Info{}, e.b.Fail(fmt.Errorf("rest: redis %s: commit entry %s: %w", e.s.where, e.ref, errLost))
		}
	}
	if err != nil {
		return rest.Info{}, e.b.Fail(e.s.failed(e.ctx, "commit entry "+e.ref, err))
	}
	e.b.Finish()
	putBuf(e.buf)
	e.buf = nil
	return e.b.Info(e.ref), nil
}

// Abort discards the entry: its buffer, and its temp key when a round
// trip made one. The temp key's time to live removes it when Redis
// cannot be told.
func (e *entry) Abort() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.b.Finish() {
		return nil
	}
	putBuf(e.buf)
	e.buf = nil
	if e.sent == 0 {
		return nil
	}
	ctx, cancel, err := e.s.op(context.WithoutCancel(e.ctx), "abort")
	if err != nil {
		return nil // the temp key expires on its own
	}
	defer cancel()
	if err := e.s.client.Del(ctx, e.temp).Err(); err != nil {
		return e.s.failed(ctx, "abort entry "+e.ref, err)
	}
	return nil
}

// errClosed is the error of a ReadAt after Close.
var errClosed = errors.New("rest: redis: reader closed")

// reader reads a committed entry, a GETRANGE per ReadAt.
type reader struct {
	s    *Store
	ctx  context.Context // of Open: every read runs under it
	key  string
	info rest.Info

	mu     sync.Mutex
	closed bool
}

func (r *reader) Info() rest.Info { return r.info }

func (r *reader) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	return nil
}

// ReadAt follows the io.ReaderAt contract: fewer bytes than len(p) come
// with an error, io.EOF at the end of what the entry holds. An entry
// evicted or expired since Open is an error wrapping [rest.ErrUnknown].
func (r *reader) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return 0, errClosed
	}
	if off < 0 {
		return 0, fmt.Errorf("rest: redis: read of entry %s at negative offset %d", r.info.Ref, off)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if off >= r.info.Size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), r.info.Size-off)
	ctx, cancel, err := r.s.op(r.ctx, "read")
	if err != nil {
		return 0, err
	}
	defer cancel()
	start := headerLen + off
	got, err := r.s.client.GetRange(ctx, r.key, start, start+want-1).Result()
	if err != nil {
		return 0, r.s.failed(r.ctx, "read entry "+r.info.Ref, err)
	}
	n := copy(p, got)
	switch {
	case int64(n) < want:
		return n, fmt.Errorf("rest: redis: entry %s gone while read (%d of %d bytes at offset %s): %w",
			r.info.Ref, n, want, strconv.FormatInt(off, 10), rest.ErrUnknown)
	case n < len(p):
		return n, io.EOF
	}
	return n, nil
}
