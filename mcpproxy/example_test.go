package mcpproxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/toolcap/toolcap/manifest"
	"github.com/toolcap/toolcap/mcpproxy"
)

// conn joins a reader and a writer into a stream for mcpproxy.StreamConn.
type conn struct {
	io.Reader
	io.WriteCloser
}

// A Proxy between a client and a server that answers one tools/call with
// a text of 315 bytes: the client receives it cut to the tool's limit,
// with the figures in _meta.
func ExampleProxy_Serve() {
	m := &manifest.WorkerManifest{ToolOutput: &manifest.ToolOutputLimits{
		PerTool: map[string]manifest.ToolEntry{"read": {MaxBytes: 128}},
	}}
	policies, err := m.Policies()
	if err != nil {
		fmt.Println(err)
		return
	}
	proxy, err := mcpproxy.New(mcpproxy.Options{Policies: policies})
	if err != nil {
		fmt.Println(err)
		return
	}

	// The server: reads one request, answers it.
	toServer, serverIn := io.Pipe()
	serverOut, fromServer := io.Pipe()
	go func() {
		line, _ := bufio.NewReader(toServer).ReadString('\n')
		var req struct{ ID int }
		_ = json.Unmarshal([]byte(line), &req)
		text, _ := json.Marshal(strings.Repeat("all work and no play\n", 15))
		fmt.Fprintf(fromServer, `{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":%s}]}}`+"\n", req.ID, text)
	}()

	// The client: sends the call, reads the answer.
	clientOut, toProxy := io.Pipe()
	fromProxy, clientIn := io.Pipe()
	go func() {
		_ = proxy.Serve(context.Background(),
			mcpproxy.StreamConn(conn{clientOut, clientIn}), mcpproxy.StreamConn(conn{serverOut, serverIn}))
	}()
	fmt.Fprintln(toProxy, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read"}}`)
	line, _ := bufio.NewReader(fromProxy).ReadString('\n')
	toProxy.Close()

	var resp struct {
		Result struct {
			Content []struct{ Text string }
			Meta    map[string]json.RawMessage `json:"_meta"`
		}
	}
	_ = json.Unmarshal([]byte(line), &resp)
	fmt.Println(resp.Result.Content[0].Text)
	fmt.Println(string(resp.Result.Meta["toolcap/truncation"]))
	// Output:
	// all work and no play
	// all work and no play
	// all work and no play
	// all work and no
	// [truncated: 237 bytes dropped, refine your query]
	// {"unit":"bytes","limit":128,"original":315,"kept":78,"dropped":237}
}
