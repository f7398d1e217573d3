package tokens_test

import (
	"fmt"
	"strings"

	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/tokens"
)

// A Calibrated estimate starts at 2 bytes a token and learns from what the
// provider billed: here a request of 36,000 bytes billed 9,000 input
// tokens (4 bytes a token), counted with a 10% margin.
func ExampleCalibrated() {
	c := tokens.NewCalibrated()
	text := strings.Repeat("func main() {}\n", 100) // 1,500 bytes
	fmt.Println(c.Count(text))
	c.Observe(36000, 9000)
	fmt.Printf("%.1f bytes a token: %d\n", c.BytesPerToken(), c.Count(text))

	// A cut under a token limit names its unit in the marker.
	out, st := cut.CutTokens(text, 16384, 200, c, cut.Spec{})
	fmt.Println(c.Count(out) <= 200, st.Unit, strings.HasSuffix(out, cut.TokenMarker(st.DroppedTokens)))
	// Output:
	// 750
	// 3.6 bytes a token: 417
	// true tokens true
}
