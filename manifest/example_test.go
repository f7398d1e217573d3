package manifest_test

import (
	"context"
	"fmt"

	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/tokens"
)

func ExampleLoad() {
	project := []byte(`
[worker.tool_output]
default_max_bytes = 16384

[worker.tool_output.per_tool]
Read = 32768
"mcp.fs.read_file" = 8192
`)
	m, err := manifest.Load(context.Background(),
		manifest.Bytes("toolcap.toml", project),
		manifest.Environ([]string{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Grep=4096"}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	limits := m.Limits()
	for _, tool := range []string{"Glob", "Read", "Grep", "mcp.fs.read_file"} {
		fmt.Println(tool, limits.For(tool))
	}
	// Output:
	// Glob 16384
	// Read 32768
	// Grep 4096
	// mcp.fs.read_file 8192
}

func ExampleLoad_error() {
	_, err := manifest.Load(context.Background(), manifest.Bytes("toolcap.toml", []byte(`
[worker.tool_output.per_tool]
Read = "32k"
`)))
	fmt.Println(err)
	// Output:
	// manifest: toolcap.toml: worker.tool_output.per_tool.Read = "32k": a string, not an integer (write the number without quotes)
}

func ExampleToolOutputLimits_For() {
	// A section that sets only per_tool still caps
	// every other tool at the default.
	limits := &manifest.ToolOutputLimits{PerTool: map[string]manifest.ToolEntry{"Read": {MaxBytes: 32768}}}
	fmt.Println(limits.For("Read"), limits.For("Glob"))

	var none *manifest.ToolOutputLimits
	fmt.Println(none.For("Glob"))
	// Output:
	// 32768 16384
	// 16384
}

func ExampleResolve() {
	r, err := manifest.Resolve(context.Background(),
		manifest.Bytes("user.toml", []byte("[worker.tool_output.per_tool]\nRead = 32768\n")),
		manifest.Environ([]string{"TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read=4096"}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("default:", r.Default.Value, "from", r.Default.Source)
	fmt.Println("Read:", r.PerTool["Read"].Value, "from", r.PerTool["Read"].Source)
	// Output:
	// default: 16384 from built-in default
	// Read: 4096 from env TOOLCAP_WORKER__TOOL_OUTPUT__PER_TOOL__Read
}

func ExamplePolicies_For() {
	m, err := manifest.Load(context.Background(), manifest.Bytes("toolcap.toml", []byte(`
[worker.tool_output]
default_max_tokens = 4000

[worker.tool_output.per_tool]
Read = 32768
Bash = { max_bytes = 12000, max_tokens = 2500, keep = "head_tail", keep_lines = ['FAIL'] }
`)))
	if err != nil {
		fmt.Println(err)
		return
	}
	policies, err := m.Policies()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, tool := range []string{"Read", "Bash", "Glob"} {
		p := policies.For(tool)
		fmt.Printf("%s: %d bytes, %d tokens, keep %q, %d keep_lines, holds tokens: %v\n",
			tool, p.MaxBytes, p.MaxTokens, p.Spec.Keep, len(p.Spec.KeepLines), p.HoldsTokens())
	}
	// A front end that counts tokens passes its counter; the policies then
	// hold the token limits too.
	counted := policies.WithCounter(tokens.NewCalibrated())
	fmt.Println("Bash with a counter:", counted.For("Bash").HoldsTokens())
	// Output:
	// Read: 32768 bytes, 4000 tokens, keep "", 0 keep_lines, holds tokens: false
	// Bash: 12000 bytes, 2500 tokens, keep "head_tail", 1 keep_lines, holds tokens: false
	// Glob: 16384 bytes, 4000 tokens, keep "", 0 keep_lines, holds tokens: false
	// Bash with a counter: true
}
