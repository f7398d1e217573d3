package cut_test

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/toolcap/toolcap/internal/cut"
)

func ExampleCut_headTail() {
	var log strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&log, "ok %d\n", i)
		if i == 15 {
			log.WriteString("error: disk full\n")
		}
	}
	log.WriteString("FAIL: TestX")

	spec := cut.Spec{
		Keep:      cut.KeepHeadTail,
		KeepLines: []*regexp.Regexp{regexp.MustCompile(`(?i)\b(error|fail|panic)\b`)},
	}
	out, st := cut.Cut(log.String(), 128, spec)
	fmt.Println(out)
	fmt.Printf("%d bytes, %d of %d dropped, %d line rescued\n", len(out), st.Dropped, st.Original, st.Rescued)
	// Output:
	// ok 1
	// ok 2
	// ok 3
	// ok 4
	// ok 5
	// ok 6
	// [truncated: 124 bytes dropped, refine your query]
	// error: disk full
	// ok 28
	// ok 29
	// ok 30
	// FAIL: TestX
	// 126 bytes, 124 of 199 dropped, 1 line rescued
}

func ExampleCut_json() {
	doc := `{"name": "graph", "entities": [` + strings.Repeat(`{"id": 1}, `, 40) + `{"id": 2}]}`
	out, st := cut.Cut(doc, 160, cut.Spec{Keep: cut.KeepJSON})
	fmt.Println(out)
	for _, l := range st.Levels {
		fmt.Printf("%q: kept %d of %d\n", l.Pointer, l.Kept, l.Total)
	}
	// Output:
	// {"name":"graph","entities":[{"id":1},{"id":1},{"id":1},{"id":1},{"id":1},{"id":1},{"id":1},{"id":1},{"id":1}]}
	// [truncated: 372 bytes dropped, refine your query]
	// "": kept 2 of 2
	// "/entities": kept 9 of 41
}

func ExampleJSONValue() {
	raw := []byte(`{"items": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "next": "cursor"}`)
	out, st, ok := cut.JSONValue(raw, 30)
	fmt.Println(string(out), ok, st.Dropped)
	// Output:
	// {"items":[1,2,3,4,5,6,7,8,9]} true 31
}

func ExampleWriter() {
	w := cut.NewWriter(200, cut.Spec{Keep: cut.KeepHeadTail})
	for i := range 1000 {
		fmt.Fprintf(w, "line %d\n", i)
	}
	out, st := w.Result()
	fmt.Print(out)
	fmt.Println(len(out), st.Dropped)
	// Output:
	// line 0
	// line 1
	// line 2
	// line 3
	// line 4
	// line 5
	// line 6
	// line 7
	// line 8
	// line 9
	// [truncated: 8749 bytes dropped, refine your query]
	// line 992
	// line 993
	// line 994
	// line 995
	// line 996
	// line 997
	// line 998
	// line 999
	// 193 8749
}
