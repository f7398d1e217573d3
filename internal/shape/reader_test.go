package shape_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/capcheck"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
)

// streamRuns counts like a BPE tokenizer without its vocabulary: a run of ASCII
// letters is a token per up to four of its bytes, any other character a
// token. It is not additive across a cut inside a run, as real tokenizers
// are not, and it never counts more tokens than bytes.
type streamRuns struct{}

var streamCounter streamRuns

func (streamRuns) Count(s string) int {
	n, run := 0, 0
	for _, r := range s {
		if r < unicode.MaxASCII && unicode.IsLetter(r) {
			run++
			continue
		}
		n += (run+3)/4 + 1
		run = 0
	}
	return n + (run+3)/4
}

// chunkedReader reads its text in pieces of random length, from one byte to
// most, so that a stream's cut is tested at every kind of piece boundary.
type chunkedReader struct {
	rest string
	rnd  *rand.Rand
	most int
}

func (c *chunkedReader) Read(p []byte) (int, error) {
	if c.rest == "" {
		return 0, io.EOF
	}
	n := min(len(p), len(c.rest), 1+c.rnd.IntN(c.most))
	copy(p, c.rest[:n])
	c.rest = c.rest[n:]
	return n, nil
}

// Test inputs: a test log with failures deep inside, UTF-8 streamProse, a JSON
// document and the same document streamIndented.
var (
	streamLog = func() string {
		var b strings.Builder
		for i := range 4000 {
			if i%997 == 500 {
				fmt.Fprintf(&b, "--- FAIL: TestParse/case_%d (0.01s)\n", i)
				continue
			}
			fmt.Fprintf(&b, "=== RUN   TestParse/case_%d\n--- PASS: TestParse/case_%d (0.00s)\n", i, i)
		}
		return b.String()
	}()
	streamProse   = strings.Repeat("Grüße aus Köln — 日本語のテキスト, und noch ein Satz. ", 800)
	streamRecords = func() []any {
		var out []any
		for i := range 600 {
			out = append(out, map[string]any{"id": i, "name": fmt.Sprintf("record %d", i), "tags": []any{"a", "b"}})
		}
		return out
	}()
	streamDoc, _      = json.Marshal(map[string]any{"rows": streamRecords, "count": len(streamRecords)})
	streamIndented, _ = json.MarshalIndent(map[string]any{"rows": streamRecords[:40]}, "", "    ")
	streamFailLines   = []*regexp.Regexp{regexp.MustCompile(`FAIL`)}
	streamHeadTail    = cut.Spec{Keep: cut.KeepHeadTail, TailShare: 0.3, KeepLines: streamFailLines}
)

func TestReadEqualsText(t *testing.T) {
	specs := []struct {
		name string
		spec cut.Spec
	}{
		{"head", cut.Spec{}},
		{"head_tail", streamHeadTail},
		{"json", cut.Spec{Keep: cut.KeepJSON}},
		{"json, head_tail fallback", cut.Spec{Keep: cut.KeepJSON, Fallback: cut.KeepHeadTail, KeepLines: streamFailLines}},
	}
	limits := []struct {
		name string
		p    shape.Policy
	}{
		{"bytes", shape.Policy{MaxBytes: 4096}},
		{"small bytes", shape.Policy{MaxBytes: 300}},
		{"tokens cut", shape.Policy{MaxBytes: 65536, MaxTokens: 9000, Counter: streamRuns{}}},
		{"bytes cut under a token limit", shape.Policy{MaxBytes: 2000, MaxTokens: 4000, Counter: streamRuns{}}},
		{"a token limit no streamCounter holds", shape.Policy{MaxBytes: 4096, MaxTokens: 10}},
	}
	inputs := []struct {
		name string
		text string
	}{
		{"empty", ""},
		{"short", "ok\n"},
		{"log", streamLog},
		{"streamProse", streamProse},
		{"json", string(streamDoc)},
		{"streamIndented json", string(streamIndented)},
		{"invalid utf-8", strings.Repeat("ab\xff\xfe日", 3000)},
	}
	units := map[string]bool{} // the units the markers counted in
	for _, sp := range specs {
		for _, lim := range limits {
			p := lim.p
			p.Spec = sp.spec
			for _, in := range inputs {
				t.Run(sp.name+"/"+lim.name+"/"+in.name, func(t *testing.T) {
					want := readResult{}
					want.Out, want.T, want.Changed = shape.Text(in.text, p)
					units[want.T.Unit] = true
					for seed := range uint64(4) {
						r := &chunkedReader{rest: in.text, rnd: rand.New(rand.NewPCG(seed, 18)), most: []int{1, 7, 300, 70000}[seed]}
						var got readResult
						var err error
						got.Out, got.T, got.Changed, err = shape.Read(r, p)
						if err != nil {
							t.Fatalf("Read: %v", err)
						}
						if diff := cmp.Diff(want, got); diff != "" {
							t.Fatalf("Read in pieces of at most %d bytes differs from Text (-want +got):\n%s", r.most, diff)
						}
					}
				})
			}
		}
	}
	if !units["tokens"] || !units[""] {
		t.Errorf("the cases cut in the units %v, want both bytes and tokens", units)
	}
}

type readResult struct {
	Out     string
	T       chain.Truncation
	Changed bool
}

// Input longer than the token window is cut as it streams, by the token
// limit as well (cut.Writer.ResultTokens): byte for byte what Text makes of
// it held whole, within both limits, its one marker counting bytes.
func TestReadBeyondTheTokenWindow(t *testing.T) {
	tests := []struct {
		name string
		spec cut.Spec
	}{
		{"head", cut.Spec{}},
		{"head_tail", streamHeadTail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := shape.Policy{MaxBytes: 8192, MaxTokens: 300, Spec: tt.spec, Counter: streamRuns{}}
			if len(streamLog) <= cut.TokenWindow(p.MaxTokens) {
				t.Fatalf("the input, %d bytes, is within the token window, %d", len(streamLog), cut.TokenWindow(p.MaxTokens))
			}
			out, tr, changed, err := shape.Read(&chunkedReader{rest: streamLog, rnd: rand.New(rand.NewPCG(1, 2)), most: 5000}, p)
			if err != nil || !changed {
				t.Fatalf("Read: changed %v, err %v", changed, err)
			}
			want, wantT, _ := shape.Text(streamLog, p)
			if diff := cmp.Diff(readResult{want, wantT, true}, readResult{out, tr, changed}); diff != "" {
				t.Errorf("Read differs from Text (-want +got):\n%s", diff)
			}
			if err := capcheck.Text(streamLog, out, p); err != nil {
				t.Error(err)
			}
			if ms := cut.FindMarkers(out); len(ms) != 1 || ms[0].Unit != cut.UnitBytes {
				t.Errorf("markers %+v, want one counting bytes", ms)
			}
		})
	}
}

// endlessReader yields n bytes of a repeated line without allocating, and
// measures the live heap every 4 MiB.
type endlessReader struct {
	line     string
	n, at    int
	next     int    // bytes left when the heap is measured next
	peakHeap uint64 // the most live heap measured
}

func (e *endlessReader) Read(p []byte) (int, error) {
	if e.n == 0 {
		return 0, io.EOF
	}
	if e.n <= e.next {
		e.next = e.n - 4<<20
		e.peakHeap = max(e.peakHeap, liveHeap())
	}
	k := 0
	for k < len(p) && e.n > 0 {
		c := copy(p[k:min(len(p), k+e.n)], e.line[e.at:])
		k += c
		e.n -= c
		e.at = (e.at + c) % len(e.line)
	}
	return k, nil
}

// liveHeap returns the bytes of the heap still in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A stream many times the limit is read holding memory bounded by the
// limit.
func TestReadBoundedMemory(t *testing.T) {
	const input = 64 << 20
	tests := []struct {
		name string
		p    shape.Policy
	}{
		{"head", shape.Policy{MaxBytes: 16384}},
		{"head_tail", shape.Policy{MaxBytes: 16384, Spec: streamHeadTail}},
		{"json", shape.Policy{MaxBytes: 16384, Spec: cut.Spec{Keep: cut.KeepJSON}}},
		{"head under a token limit", shape.Policy{MaxBytes: 16384, MaxTokens: 4000, Counter: streamCounter}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := liveHeap()
			// Measured past the first 12 MiB: json holds the document
			// while it is short enough to be cut as one (8 MiB here), and
			// every strategy lets go of it past that.
			r := &endlessReader{line: "--- PASS: TestParse (0.00s)\n", n: input, next: input - 12<<20}
			out, tr, _, err := shape.Read(r, tt.p)
			if err != nil || tr.OriginalBytes != input || len(out) > tt.p.MaxBytes {
				t.Fatalf("Read: %d bytes out, original %d, err %v", len(out), tr.OriginalBytes, err)
			}
			const most = 2 << 20
			if held := r.peakHeap - min(base, r.peakHeap); held > most {
				t.Errorf("reading %d MiB held %d bytes at its peak, want at most %d", input>>20, held, most)
			}
		})
	}
}

var errStreamBroken = errors.New("broken pipe")

type failingReader struct{ sent bool }

func (f *failingReader) Read(p []byte) (int, error) {
	if !f.sent {
		f.sent = true
		return copy(p, "partial output"), nil
	}
	return 0, errStreamBroken
}

func TestReadError(t *testing.T) {
	for _, p := range []shape.Policy{{MaxBytes: 4096}, {MaxBytes: 4096, MaxTokens: 100, Counter: streamRuns{}}} {
		out, tr, changed, err := shape.Read(&failingReader{}, p)
		if !errors.Is(err, errStreamBroken) || out != "" || changed || tr != (chain.Truncation{}) {
			t.Errorf("Read(%+v) = %q, %+v, %v, %v; want only the read error", p, out, tr, changed, err)
		}
	}
}
