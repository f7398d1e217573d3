package rest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The timer costs nothing while the store holds nothing: none is armed
// before the first entry nor after the last goes, and none after Close.
func TestQuotaTimerArmedOnlyForEntries(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { return now }
	m := NewMemory(Config{TTL: time.Hour, Now: clock})
	type state struct {
		Armed bool
		Due   time.Time
	}
	at := func() state {
		m.q.mu.Lock()
		defer m.q.mu.Unlock()
		return state{!m.q.exp.due.IsZero(), m.q.exp.due}
	}
	put := func() {
		e, err := m.Create(context.Background(), "s")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	got := []state{at()}
	put()
	got = append(got, at())
	now = now.Add(30 * time.Minute)
	put() // the first still expires first
	got = append(got, at())
	now = now.Add(45 * time.Minute)
	m.q.expire() // as the timer does: the first expired, the second is due
	got = append(got, at())
	now = now.Add(time.Hour)
	m.q.expire() // nothing left: the timer stops
	got = append(got, at())
	put()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	got = append(got, at())
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	want := []state{
		{},
		{true, t0.Add(time.Hour)},
		{true, t0.Add(time.Hour)},
		{true, t0.Add(30*time.Minute + time.Hour)},
		{},
		{},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the timer before an entry, after one, two, the first's expiry, the last's, Close (-want +got):\n%s", diff)
	}
	if u := m.Usage(); u.Entries != 1 {
		t.Errorf("Usage() after Close = %+v; want the live entry kept", u)
	}
}
