package shape_test

import (
	"fmt"

	"github.com/toolcap/toolcap/internal/shape"
)

// JSON fits a structured result to a tool's limit: every member of the
// object stays (a schema may require them), the members share the limit,
// and the note says what the cut kept.
func ExampleJSON() {
	raw := []byte(`{"files":["a.go","b.go","c.go","d.go","e.go","f.go"],"truncated":false}`)
	sc, ok := shape.JSON(raw, shape.Bytes(60), nil)
	fmt.Println(ok, sc.Cut)
	fmt.Println(string(sc.Raw))
	fmt.Println(sc.Note.Long)
	// Output:
	// true true
	// {"files":["a.go","b.go","c.go","d.go"],"truncated":false}
	// [toolcap: structuredContent cut to this tool's limit of 60 bytes: kept 4 of 6 items of /files; refine your query]
}
