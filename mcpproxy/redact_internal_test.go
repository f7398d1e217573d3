package mcpproxy

import (
	"bufio"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/shape"
	"github.com/toolcap/toolcap/internal/wire"
	"github.com/toolcap/toolcap/redact"
)

// stringRawRedacted cuts a string where wire.Scanner.StringRaw cuts it,
// for every bound, escapes and multi-byte characters at the cut included,
// but before a secret the cut would split, which no scan of the head
// could find; a string within the bound is whole.
func TestStringRawRedacted(t *testing.T) {
	const aws = "AKIAQMI2Q4ZOZQPK3563"
	scanner := func(s string) *wire.Scanner {
		return wire.NewScanner(bufio.NewReader(strings.NewReader(s)))
	}
	type cutAt struct {
		Head    string
		Written int64
		Whole   bool
	}
	d := redact.Default()
	for _, tc := range []struct {
		name    string
		written string // the string as written, quotes included
	}{
		{"plain", `"` + strings.Repeat("abc ", 40) + `"`},
		{"escapes and characters", `"` + strings.Repeat(`a\"b\\c\n é 日本 \u2713 \ud83d\ude00 `, 8) + `"`},
	} {
		for max := 0; max < len(tc.written); max++ {
			want, written, whole, err := scanner(tc.written).StringRaw(max)
			if err != nil {
				t.Fatal(err)
			}
			head, gw, gwhole, err := stringRawRedacted(scanner(tc.written), max, d)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(cutAt{string(want), written, whole}, cutAt{string(head), gw, gwhole}); diff != "" {
				t.Fatalf("%s, max %d (-StringRaw +stringRawRedacted):\n%s", tc.name, max, diff)
			}
		}
	}
	// A secret across the cut: the head ends before it, wherever the cut
	// falls in it; one the head holds whole stays (it is redacted later).
	pad := strings.Repeat("x", 50) + `\n`
	s := `"` + pad + aws + ` ` + strings.Repeat("y", 100) + `"`
	for max := len(pad); max < len(pad)+len(aws)+20; max++ {
		head, _, whole, err := stringRawRedacted(scanner(s), max, d)
		if err != nil {
			t.Fatal(err)
		}
		want := pad
		if max+1 >= len(pad)+len(aws) {
			want = s[1 : max+2] // StringRaw keeps up to max+1 bytes
		}
		if whole || string(head) != want {
			t.Errorf("max %d: head %q (whole %v), want %q", max, head, whole, want)
		}
	}
}

// redactJSON redacts string values only, leaves keys, the members it is
// told to skip and everything between strings as they are, and says
// where each string it wrote again went.
func TestRedactJSON(t *testing.T) {
	const aws = "AKIAQMI2Q4ZOZQPK3563"
	d := redact.Default()
	in := fmt.Sprintf(`{"%s": "k", "a" : "%s", "data":"%s","n":[1.50, "x\"%s", {"data": ["%s"]}], "blob":{"s":"%s"}}`, aws, aws, aws, aws, aws, aws)
	want := `{"` + aws + `": "k", "a" : "[redacted: aws-access-token]", "data":"` + aws + `","n":[1.50, "x\"[redacted: aws-access-token]", {"data": ["[redacted: aws-access-token]"]}], "blob":{"s":"[redacted: aws-access-token]"}}`
	out, counts, edits := redactJSON([]byte(in), d, binaryMembers)
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"aws-access-token": 4}, counts); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	for _, e := range edits {
		if got := string(out[e.at : e.at+e.n]); !strings.HasPrefix(got, `"`) || !strings.HasSuffix(got, `"`) || !strings.Contains(got, "[redacted:") {
			t.Errorf("edit %+v: %q", e, got)
		}
	}
	// An offset past the edits moves by what they changed.
	if got, want := movedBy(edits, len(in)-1), len(out)-1; got != want {
		t.Errorf("movedBy the end: %d, want %d", got, want)
	}
	if got, _, _ := redactJSON([]byte(`{"a":"no secret"}`), d, nil); string(got) != `{"a":"no secret"}` {
		t.Errorf("no secret: %s", got)
	}
}

// detectorOf gives the one detector the calls share, none when none
// redacts, and all of them together when they differ.
func TestDetectorOf(t *testing.T) {
	const aws = "AKIAQMI2Q4ZOZQPK3563"
	custom := redact.New([]redact.Rule{{ID: "custom", Pattern: regexp.MustCompile(`tok-[0-9]{6}`), MaxLen: 10}}, nil)
	call := func(d redact.Detector) *pendingCall { return &pendingCall{policy: shape.Policy{Redact: d}} }
	text := "a " + aws + " b tok-123456 c"
	for _, tc := range []struct {
		name  string
		calls []*pendingCall
		want  string
	}{
		{"one", []*pendingCall{call(custom)}, "a " + aws + " b [redacted: custom] c"},
		{"none", []*pendingCall{call(nil), call(nil)}, text},
		{"the same", []*pendingCall{call(redact.Default()), call(nil), call(redact.Default())}, "a [redacted: aws-access-token] b tok-123456 c"},
		{"both", []*pendingCall{call(redact.Default()), call(custom)}, "a [redacted: aws-access-token] b [redacted: custom] c"},
	} {
		got, _ := redact.Text(text, detectorOf(tc.calls))
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	if _, ok := detectorOf([]*pendingCall{call(redact.Default()), call(redact.Default())}).(anyDetector); ok {
		t.Errorf("two calls of the same detector: an anyDetector")
	}
}
