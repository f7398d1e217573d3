package bench

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolcap/toolcap/internal/cut"
)

// logText is a go test log of about n bytes: "ok N" lines, an error line
// in the middle, FAIL at the end.
func logText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n-20; i++ {
		fmt.Fprintf(&b, "ok %d\n", i)
		if i == 40000 {
			b.WriteString("error: disk full\n")
		}
	}
	b.WriteString("FAIL: TestX")
	return b.String()
}

// lockJSON is an npm-style package-lock.json of about n bytes, indented.
func lockJSON(n int) string {
	var b strings.Builder
	b.WriteString("{\n  \"name\": \"app\",\n  \"lockfileVersion\": 3,\n  \"packages\": {\n")
	for i := 0; b.Len() < n-200; i++ {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "    \"node_modules/pkg-%06d\": {\n      \"version\": \"1.%d.0\",\n      \"resolved\": \"https://registry.npmjs.org/pkg-%06d/-/pkg-%06d-1.0.0.tgz\",\n      \"integrity\": \"sha512-Ab9+Ab9+Ab9+Ab9+Ab9+Ab9+==\",\n      \"dev\": %v\n    }", i, i%50, i, i, i%3 == 0)
	}
	b.WriteString("\n  }\n}\n")
	return b.String()
}

var keepErrors = []*regexp.Regexp{regexp.MustCompile(`(?i)\b(error|fail|panic)\b`)}

// strategyInputs are the texts BenchmarkStrategy cuts, 1 MiB each, one per
// shape of line a head_tail cut must find its ends in: prose lines of 45
// bytes (ascii), of 94 bytes of 3-byte characters (cjk) and of 4-byte ones
// (emoji), a go test log of 5 to 10-byte lines (log) and the same with
// CRLF ends (crlf), lines of 2 bytes (tiny: a candidate head end every
// other byte), no newline at all (noline), and a log whose last line is
// longer than the tail window (longline: the tail finds no line start).
func strategyInputs() []struct{ name, s string } {
	const n = 1 << 20
	return []struct{ name, s string }{
		{"ascii/1MiB", text(alphabets[0].unit, n)},
		{"cjk/1MiB", text(alphabets[1].unit, n)},
		{"emoji/1MiB", text(alphabets[2].unit, n)},
		{"log/1MiB", logText(n)},
		{"crlf/1MiB", strings.ReplaceAll(logText(n*7/8), "\n", "\r\n")},
		{"tiny/1MiB", text("0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n", n)},
		{"noline/1MiB", text("The quick brown fox jumps over the lazy dog. ", n)},
		{"longline/1MiB", logText(n-4*limit) + "\n" + text("0123456789abcdef", 4*limit)},
	}
}

// BenchmarkStrategy cuts 1 MiB to 16 KiB with each text strategy: head
// (impl=head, the rule of middleware.Truncate), head_tail (impl=head_tail)
// and head_tail with keep_lines (impl=head_tail_lines, which must match
// every line of the dropped middle).
func BenchmarkStrategy(b *testing.B) {
	for _, in := range strategyInputs() {
		for _, impl := range []struct {
			name string
			spec cut.Spec
		}{
			{"head", cut.Spec{}},
			{"head_tail", cut.Spec{Keep: cut.KeepHeadTail}},
			{"head_tail_lines", cut.Spec{Keep: cut.KeepHeadTail, KeepLines: keepErrors}},
		} {
			b.Run(in.name+"/impl="+impl.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(in.s)))
				var out string
				for b.Loop() {
					out, _ = cut.Cut(in.s, limit, impl.spec)
				}
				sinkString = out
			})
		}
	}
}

// BenchmarkJSON cuts a package-lock.json to 16 KiB with the json strategy
// (impl=json) against json.Valid on the same bytes (impl=valid), the floor
// of any cut that must know whether its input is JSON.
func BenchmarkJSON(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"1MiB", 1 << 20}, {"4MiB", 4 << 20}} {
		doc := lockJSON(size.n)
		raw := []byte(doc)
		b.Run("lock/"+size.name+"/impl=valid", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			ok := false
			for b.Loop() {
				ok = json.Valid(raw)
			}
			if !ok {
				b.Fatal("invalid document")
			}
		})
		b.Run("lock/"+size.name+"/impl=json", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			var out string
			for b.Loop() {
				out, _ = cut.Cut(doc, limit, cut.Spec{Keep: cut.KeepJSON})
			}
			sinkString = out
		})
	}
}

// TestStrategyInputs checks what BenchmarkStrategy and BenchmarkJSON rely
// on: each input is over the limit, each cut fills most of it, and the
// JSON cut is structural.
func TestStrategyInputs(t *testing.T) {
	for _, in := range strategyInputs() {
		if len(in.s) < 900<<10 || len(in.s) > 1<<20 || !utf8.ValidString(in.s) {
			t.Fatalf("%s: %d bytes, valid UTF-8 %v", in.name, len(in.s), utf8.ValidString(in.s))
		}
		for _, spec := range []cut.Spec{{}, {Keep: cut.KeepHeadTail}, {Keep: cut.KeepHeadTail, KeepLines: keepErrors}} {
			out, st := cut.Cut(in.s, limit, spec)
			if len(out) > limit || len(out) < limit-100 || st.Dropped == 0 || st.Replaced != 0 {
				t.Errorf("%s, %q: %d bytes, dropped %d, replaced %d", in.name, spec.Keep, len(out), st.Dropped, st.Replaced)
			}
		}
	}
	doc := lockJSON(1 << 20)
	out, st := cut.Cut(doc, limit, cut.Spec{Keep: cut.KeepJSON})
	if st.Strategy != cut.KeepJSON || len(out) > limit || len(out) < limit*9/10 {
		t.Errorf("json: strategy %q, %d bytes", st.Strategy, len(out))
	}
}
