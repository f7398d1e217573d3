package shape_test

import (
	"fmt"
	"strings"

	"github.com/toolcap/toolcap/redact"
	"github.com/toolcap/toolcap/shape"
)

// A text over its limit keeps its head and ends with the marker; the
// figures say what was dropped.
func ExampleText() {
	out, t, changed := shape.Text(strings.Repeat("x", 100), shape.Bytes(60))
	fmt.Println(changed, len(out), t.OriginalBytes, t.DroppedBytes)
	fmt.Println(out)
	// Output:
	// true 60 100 89
	// xxxxxxxxxxx
	// [truncated: 89 bytes dropped, refine your query]
}

// head_tail keeps the end too, where a build log says how it ended.
func ExampleText_headTail() {
	var log strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&log, "step %d ok\n", i)
	}
	log.WriteString("FAIL: step 31\n")
	p := shape.Policy{MaxBytes: 126, Spec: shape.Spec{Keep: shape.KeepHeadTail}}
	out, _, _ := shape.Text(log.String(), p)
	fmt.Print(out)
	// Output:
	// step 1 ok
	// step 2 ok
	// step 3 ok
	// step 4 ok
	// [truncated: 260 bytes dropped, refine your query]
	// step 29 ok
	// step 30 ok
	// FAIL: step 31
}

// Read fits a stream in bounded memory, as Text fits the whole.
func ExampleRead() {
	r := strings.NewReader(strings.Repeat("line\n", 1000))
	out, t, _, err := shape.Read(r, shape.Bytes(64))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(out) <= 64, t.DroppedBytes)
	// Output:
	// true 4987
}

// A policy with a detector replaces each secret before the cut measures
// the text.
func ExampleText_redact() {
	p := shape.Policy{MaxBytes: 200, Redact: redact.Default()}
	out, _, changed := shape.Text("AWS_ACCESS_KEY_ID=AKIA2OGYBAH6STMMNXNN\nAWS_REGION=eu-west-1\n", p)
	fmt.Print(changed, "\n", out)
	// Output:
	// true
	// AWS_ACCESS_KEY_ID=[redacted: aws-access-token]
	// AWS_REGION=eu-west-1
}
