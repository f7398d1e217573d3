package rest_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/rest"
)

func TestMemoryDefaults(t *testing.T) {
	cases := []struct {
		name string
		cfg  rest.Config
		want int64
	}{
		{"zero", rest.Config{}, rest.DefaultMemoryMaxBytes},
		{"negative", rest.Config{MaxBytes: -5}, rest.DefaultMemoryMaxBytes},
		{"set", rest.Config{MaxBytes: 1 << 20}, 1 << 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(rest.Usage{MaxBytes: c.want}, rest.NewMemory(c.cfg).Usage()); diff != "" {
				t.Errorf("Usage() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMemoryUsageCountsKeptBytes(t *testing.T) {
	// A memory entry costs the quota what it keeps, byte for byte, from
	// its first Write on.
	m := rest.NewMemory(rest.Config{MaxEntryBytes: 100_000})
	var got []rest.Usage
	e, err := m.Create(t.Context(), "scope")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	got = append(got, m.Usage())
	if err := storeWrite(e, storeBytes(60, 150_000), 40_000); err != nil {
		t.Fatalf("Write: %v", err)
	}
	got = append(got, m.Usage())
	if _, err := e.Commit(); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	got = append(got, m.Usage())
	max := int64(rest.DefaultMemoryMaxBytes)
	want := []rest.Usage{
		{MaxBytes: max},
		{Writing: 100_000, MaxBytes: max},
		{Entries: 1, Bytes: 100_000, MaxBytes: max},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Usage() after Create, Write, Commit mismatch (-want +got):\n%s", diff)
	}
}
