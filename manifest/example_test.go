package manifest_test

import (
	"fmt"

	"github.com/toolcap/toolcap/manifest"
)

func ExampleLoad() {
	project := []byte(`
[worker.tool_output]
default_max_bytes = 16384

[worker.tool_output.per_tool]
Read = 32768
"mcp.fs.read_file" = 8192
`)
	m, err := manifest.Load(
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
	_, err := manifest.Load(manifest.Bytes("toolcap.toml", []byte(`
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
	limits := &manifest.ToolOutputLimits{PerTool: map[string]int{"Read": 32768}}
	fmt.Println(limits.For("Read"), limits.For("Glob"))

	var none *manifest.ToolOutputLimits
	fmt.Println(none.For("Glob"))
	// Output:
	// 32768 16384
	// 16384
}

func ExampleResolve() {
	r, err := manifest.Resolve(
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
