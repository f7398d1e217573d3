package capvalue_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolcap/toolcap/adapters/capvalue"
)

// A tool result as adk-go's AfterToolCallback receives it: a map. Capping it
// keeps its keys and its numbers, cuts the long string, and keeps the JSON
// encoding within the limit, marker included.
func ExampleCap() {
	result := map[string]any{
		"exit_code": 0,
		"output":    strings.Repeat("line of build output\n", 5000),
	}
	capped, dropped := capvalue.Cap(result, 200)
	enc, _ := json.Marshal(capped)
	fmt.Println(len(enc), "bytes,", dropped, "dropped")
	fmt.Println(string(enc))
	// Output:
	// 200 bytes, 104886 dropped
	// {"exit_code":0,"output":"line of build output\nline of build output\nline of build output\nline of build output\nline of build output\nline of b\n[truncated: 104886 bytes dropped, refine your query]"}
}

// Inside adk-go's AfterToolCallback (its module is not a dependency here;
// the callback's shape is
// func(ctx tool.Context, t tool.Tool, args, result map[string]any, err error) (map[string]any, error)),
// returning the capped map replaces what the model reads:
//
//	llmagent.Config{
//		AfterToolCallbacks: []llmagent.AfterToolCallback{
//			func(ctx tool.Context, t tool.Tool, args, result map[string]any, err error) (map[string]any, error) {
//				if capped, dropped := capvalue.Cap(result, limits.For(t.Name())); dropped > 0 {
//					if m, ok := capped.(map[string]any); ok {
//						return m, nil
//					}
//					return map[string]any{"result": capped}, nil
//				}
//				return nil, nil // nil keeps the tool's result
//			},
//		},
//	}
func ExampleStrings() {
	stdout := strings.Repeat("ok\n", 10000)
	stderr := "FAIL: TestParse (0.01s)"
	out, dropped := capvalue.Strings([]string{stdout, stderr}, 120)
	fmt.Printf("%q\n%q\n%d dropped\n", out[0], out[1], dropped)
	// Output:
	// "ok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\n\n[truncated: 29955 bytes dropped, refine your query]"
	// "FAIL: TestParse (0.01s)"
	// 29955 dropped
}
