package rest

import "errors"

// ErrDone is the error of a Write or Commit of an entry already committed
// or aborted.
var ErrDone = errors.New("rest: entry already committed or aborted")

// Bounded is the bookkeeping every store's [Entry] shares: it keeps at
// most a bound of the bytes written (the first ones), counts all of them
// ([Info].Original), makes the first failure sticky and every Write or
// Commit after the entry is done an error. A store's Write is
//
//	func (e *entry) Write(p []byte) (int, error) {
//		e.mu.Lock()
//		defer e.mu.Unlock()
//		return e.b.Write(p, e.keep) // keep stores the head of p
//	}
//
// Bounded is not safe for concurrent use: an entry holds it under its own
// lock.
type Bounded struct {
	max      int64
	size     int64
	original int64
	err      error
	done     bool
}

// NewBounded returns the bookkeeping of an entry that keeps at most max
// bytes; a negative max keeps nothing.
func NewBounded(max int64) Bounded { return Bounded{max: max} }

// Write hands keep the head of p that the bound still has room for, when
// there is any, and counts all of p: it returns len(p), nil however much
// of p was kept. An error of keep is Write's (0 bytes written), and that
// of every Write and Commit after it; keep may have stored part of the
// head, which the entry discards on Abort.
func (b *Bounded) Write(p []byte, keep func([]byte) error) (int, error) {
	if err := b.Err(); err != nil {
		return 0, err
	}
	if k := min(int64(len(p)), b.max-b.size); k > 0 {
		if err := keep(p[:k]); err != nil {
			b.err = err
			return 0, err
		}
		b.size += k
	}
	b.original += int64(len(p))
	return len(p), nil
}

// Err returns the error a Write or Commit meets now: [ErrDone] once the
// entry is done, else the first failure, else nil.
func (b *Bounded) Err() error {
	if b.done {
		return ErrDone
	}
	return b.err
}

// Fail makes err the entry's sticky failure (a Commit that failed half
// way) and returns it.
func (b *Bounded) Fail(err error) error {
	if b.err == nil {
		b.err = err
	}
	return err
}

// Finish marks the entry done, committed or aborted, and reports whether
// it was not done before: an Abort after Commit, or a second Abort, finds
// false and does nothing.
func (b *Bounded) Finish() bool {
	if b.done {
		return false
	}
	b.done = true
	return true
}

// Size is the number of bytes kept.
func (b *Bounded) Size() int64 { return b.size }

// Original is the number of bytes written, kept or not.
func (b *Bounded) Original() int64 { return b.original }

// Info returns what the entry ref holds.
func (b *Bounded) Info(ref string) Info { return Info{Ref: ref, Size: b.size, Original: b.original} }
