package rest

import "time"

// expiry is a store's timer of its next expiry (the memory quota's and the
// directory's): it calls its fire function once, at the earliest time it
// was armed for, and the store arms it again from there. Its methods are
// called under the store's lock.
type expiry struct {
	timer *time.Timer // made when first armed
	due   time.Time   // when timer fires, by the store's clock; zero when not armed
}

// arm makes the timer call fire at at, by a clock that reads now, unless
// it already fires no later. A timer that fires earlier (the entry was
// used since) is left: the store arms it again for what is first then.
// A clock that is not time.Now (a test's) still runs the timer in real
// time: it fires, finds nothing expired by that clock, and is armed
// again, at most once per TTL.
func (e *expiry) arm(at, now time.Time, fire func()) {
	if !e.due.IsZero() && !at.Before(e.due) {
		return
	}
	d := max(at.Sub(now), 0)
	if e.timer == nil {
		e.timer = time.AfterFunc(d, fire)
	} else {
		e.timer.Reset(d)
	}
	e.due = at
}

// stop disarms the timer.
func (e *expiry) stop() {
	if e.timer != nil && !e.due.IsZero() {
		e.timer.Stop()
	}
	e.due = time.Time{}
}

// fired records that the timer fired: it is no longer armed.
func (e *expiry) fired() { e.due = time.Time{} }
