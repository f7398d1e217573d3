package rest

import (
	"math"
	"time"
)

// dirIndex is a store's index of its directory's entry files, with what
// each use asks of it kept as the index changes, so that a use costs
// nothing per entry: the bytes they hold, their least and largest quota,
// and a bound of the first expiry.
type dirIndex struct {
	ents map[string]*dirEnt
	held int64
	// least and most are the least and largest quota, when not stale.
	least, most int64
	stale       bool
	// nextExp is no later than the first expiry: zero when there is no
	// entry. A renewal leaves it early; a sweep sets it exactly.
	nextExp time.Time
}

// reset makes the index hold ents (nil: none).
func (x *dirIndex) reset(ents map[string]*dirEnt) {
	if ents == nil {
		ents = make(map[string]*dirEnt)
	}
	*x = dirIndex{ents: ents, stale: true}
	for _, e := range ents {
		x.held += e.size
		x.nextExp = earliest(x.nextExp, e.used.Add(e.ttl))
	}
}

// add indexes e under key, in the place of what was there.
func (x *dirIndex) add(key string, e *dirEnt) {
	if x.ents == nil {
		x.reset(nil)
	}
	x.drop(key)
	x.ents[key] = e
	x.held += e.size
	if !x.stale {
		x.least, x.most = min(x.least, e.quota), max(x.most, e.quota)
	}
	x.nextExp = earliest(x.nextExp, e.used.Add(e.ttl))
}

// drop forgets the entry of key.
func (x *dirIndex) drop(key string) {
	e, ok := x.ents[key]
	if !ok {
		return
	}
	delete(x.ents, key)
	x.held -= e.size
	if e.quota == x.least || e.quota == x.most {
		x.stale = true
	}
	if len(x.ents) == 0 {
		x.nextExp = time.Time{}
	}
}

// quotas returns the least and the largest quota of the entries:
// math.MaxInt64 and 0 when there is none.
func (x *dirIndex) quotas() (least, most int64) {
	if x.stale {
		x.least, x.most, x.stale = math.MaxInt64, 0, false
		for _, e := range x.ents {
			x.least, x.most = min(x.least, e.quota), max(x.most, e.quota)
		}
	}
	return x.least, x.most
}

// due reports whether an entry may have expired at now.
func (x *dirIndex) due(now time.Time) bool {
	return !x.nextExp.IsZero() && !now.Before(x.nextExp)
}

// earliest returns the earlier of a and b, a zero time being none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}
