package claudecode_test

import (
	"fmt"
	"strings"

	"github.com/toolcap/toolcap/internal/claudecode"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
)

// A hook's whole work on one payload: read it, cap the tool's output to the
// tool's policy, print the reply. Bash's stdout and stderr share the 160
// bytes; the short stderr stays whole, and stdout keeps its head and the
// marker.
func Example() {
	payload := `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_01",` +
		`"tool_input":{"command":"make test"},` +
		`"tool_response":{"stdout":"` + strings.Repeat(`ok\n`, 100) + `","stderr":"FAIL: TestParse","interrupted":false}}`

	in, err := claudecode.ReadInput(strings.NewReader(payload))
	if err != nil {
		fmt.Println(err)
		return
	}
	out, t, changed, err := claudecode.CapToolResponse(in.ToolName, in.ToolResponse, shape.Bytes(160))
	if err != nil || !changed {
		fmt.Println("left as it is:", err)
		return
	}
	reply, err := claudecode.MarshalReply(out)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(reply))
	fmt.Printf("%d of %d bytes kept\n", t.KeptBytes, t.OriginalBytes)
	// Output:
	// {"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":{"interrupted":false,"stderr":"FAIL: TestParse","stdout":"ok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\nok\n[truncated: 205 bytes dropped, refine your query]"}}}
	// 110 of 315 bytes kept
}

// An MCP tool's text is cut as toolcap cap and toolcap mcp cut it, here by
// the head_tail strategy: the start and the end, the marker on a line of
// its own between them.
func ExampleCapToolResponse() {
	var log strings.Builder
	for i := range 30 {
		fmt.Fprintf(&log, "step %02d ok\n", i)
	}
	resp := []byte(fmt.Sprintf("%q", log.String()))
	p := shape.Policy{MaxBytes: 120, Spec: cut.Spec{Keep: cut.KeepHeadTail}}
	out, _, _, err := claudecode.CapToolResponse("mcp__ci__log", resp, p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(out))
	// Output:
	// "step 00 ok\nstep 01 ok\nstep 02 ok\n[truncated: 261 bytes dropped, refine your query]\n ok\nstep 27 ok\nstep 28 ok\nstep 29 ok\n"
}

// What toolcap hook claude-code runs: ReadCap reads the payload from
// standard input, whatever its length, asks for the tool's policy once the
// tool is named, and caps the output as Cap does. Here the policy keeps 200
// bytes of any tool's output.
func ExampleHook_ReadCap() {
	payload := `{"session_id":"abc","hook_event_name":"PostToolUse","tool_name":"mcp__ci__log","tool_use_id":"toolu_01",` +
		`"tool_response":[{"type":"text","text":"` + strings.Repeat(`step ok\n`, 40) + `"}]}`

	h := &claudecode.Hook{}
	c, err := h.ReadCap(strings.NewReader(payload), func(tool string) (claudecode.Setup, error) {
		return claudecode.Setup{Policy: shape.Bytes(200)}, nil
	})
	if err != nil || !c.Changed {
		fmt.Println("left as it is:", err)
		return
	}
	reply, err := claudecode.MarshalReply(c.Out)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(reply))
	fmt.Printf("%s: %d of %d bytes kept\n", c.Input.ToolName, c.Truncation.KeptBytes, c.Truncation.OriginalBytes)
	// Output:
	// {"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":[{"text":"step ok\nstep ok\nstep ok\nstep ok\nstep ok\nstep ok\nstep ok\nstep ok\nstep ok\nstep ok\nstep ok\nstep ok\nstep ok\nstep ok\nstep ok\nstep ok\nstep ok\nstep ok\nstep o\n[truncated: 170 bytes dropped, refine your query]","type":"text"}]}}
	// mcp__ci__log: 150 of 320 bytes kept
}
