package capvalue_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolcap/toolcap/internal/capvalue"
	"github.com/toolcap/toolcap/internal/shape"
)

// A tool result as adk-go's AfterToolCallback receives it: a map. Capping it
// keeps its keys and its numbers, cuts the long string, and keeps the JSON
// encoding within the limit, marker included; the marker counts the bytes
// of the string as encoded (each newline is two: \n).
func ExampleCap() {
	result := map[string]any{
		"exit_code": 0,
		"output":    strings.Repeat("line of build output\n", 5000),
	}
	capped, t, _ := capvalue.Cap(result, shape.Bytes(200))
	enc, _ := json.Marshal(capped)
	fmt.Println(len(enc), "bytes of", t.OriginalBytes)
	fmt.Println(string(enc))
	// Output:
	// 200 bytes of 110027
	// {"exit_code":0,"output":"line of build output\nline of build output\nline of build output\nline of build output\nline of build output\nline of b\n[truncated: 109881 bytes dropped, refine your query]"}
}

// Inside adk-go's AfterToolCallback (its module is not a dependency here;
// the callback's shape is
// func(ctx tool.Context, t tool.Tool, args, result map[string]any, err error) (map[string]any, error)),
// returning the capped map replaces what the model reads:
//
//	llmagent.Config{
//		AfterToolCallbacks: []llmagent.AfterToolCallback{
//			func(ctx tool.Context, t tool.Tool, args, result map[string]any, err error) (map[string]any, error) {
//				if capped, _, changed := capvalue.Cap(result, policies.For(t.Name())); changed {
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
	out, t, _ := capvalue.Strings([]string{stdout, stderr}, shape.Bytes(120))
	fmt.Printf("%q\n%q\n%d dropped\n", out[0], out[1], t.DroppedBytes)
	// Output:
	// "ok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\n\n[truncated: 29955 bytes dropped, refine your query]"
	// "FAIL: TestParse (0.01s)"
	// 29955 dropped
}
