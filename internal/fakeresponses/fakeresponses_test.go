package fakeresponses_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/toolcap/toolcap/internal/fakeresponses"
)

// event is one Server-Sent Event.
type event struct {
	name string
	data map[string]any
}

// readEvents reads a whole event stream.
func readEvents(t *testing.T, r io.Reader) []event {
	t.Helper()
	var out []event
	var cur event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.name != "" {
				out = append(out, cur)
			}
			cur = event{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.data); err != nil {
				t.Fatalf("event %s: data is not JSON: %v", cur.name, err)
			}
		default:
			t.Fatalf("unexpected line in the stream: %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func post(t *testing.T, url string, body []byte, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// A second request, as Codex sends it after a tool call: the call and its
// output in the input, a namespace of MCP tools in the tools list and
// Codex's additional_tools item.
const secondRequest = `{
  "model": "local-model",
  "stream": true,
  "input": [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "read it"}]},
    {"type": "additional_tools", "role": "developer", "tools": [{"type": "namespace", "name": "functions", "tools": [{"type": "custom", "name": "exec"}]}]},
    {"type": "function_call", "name": "read_text_file", "namespace": "mcp__fs", "arguments": "{\"path\":\"/x\"}", "call_id": "call_1"},
    {"type": "function_call_output", "call_id": "call_1", "output": "Wall time: 0.0100 seconds\nOutput:\n{\"content\":\"abc\"}"},
    {"type": "custom_tool_call", "name": "exec", "input": "text(1)", "call_id": "call_2"},
    {"type": "custom_tool_call_output", "call_id": "call_2", "output": [{"type": "input_text", "text": "Script completed\n"}, {"type": "input_text", "text": "1"}]},
    {"type": "tool_search_call", "call_id": "search_1", "execution": "client", "arguments": {"query": "read"}},
    {"type": "tool_search_output", "call_id": "search_1", "execution": "client", "tools": [{"type": "namespace", "name": "mcp__gh", "tools": [{"type": "function", "name": "get_issue"}]}]}
  ],
  "tools": [
    {"type": "function", "name": "exec_command"},
    {"type": "namespace", "name": "mcp__fs", "tools": [{"type": "function", "name": "read_text_file"}]},
    {"type": "tool_search", "execution": "client"}
  ]
}`

func TestStreamAndRecord(t *testing.T) {
	var seen *fakeresponses.Request
	srv, err := fakeresponses.New(func(req *fakeresponses.Request) fakeresponses.Reply {
		seen = req
		return fakeresponses.Reply{Text: "reading on", Calls: []fakeresponses.Call{
			fakeresponses.FunctionCall("mcp__fs", "toolcap_read", map[string]any{"ref": "r", "offset": 3}),
			fakeresponses.CustomCall("exec", "text(2)"),
			fakeresponses.ToolSearchCall("toolcap_read", 2),
		}}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if srv.BaseURL != srv.URL+"/v1" || !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("URL %q, BaseURL %q", srv.URL, srv.BaseURL)
	}

	resp := post(t, srv.BaseURL+"/responses", []byte(secondRequest), nil)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := readEvents(t, resp.Body)
	var names []string
	for i, e := range events {
		names = append(names, e.name)
		if e.data["type"] != e.name {
			t.Errorf("event %d %s: data type %v", i, e.name, e.data["type"])
		}
		if e.data["sequence_number"] != float64(i) {
			t.Errorf("event %d %s: sequence_number %v", i, e.name, e.data["sequence_number"])
		}
	}
	want := []string{"response.created", "response.in_progress",
		"response.output_item.added", "response.output_text.delta", "response.output_item.done",
		"response.output_item.added", "response.output_item.done",
		"response.output_item.added", "response.output_item.done",
		"response.output_item.added", "response.output_item.done",
		"response.completed"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("events\n%v\nwant\n%v", names, want)
	}
	var items []map[string]any
	for _, e := range events {
		if e.name == "response.output_item.done" {
			items = append(items, e.data["item"].(map[string]any))
		}
	}
	msg := items[0]
	if msg["type"] != "message" || msg["role"] != "assistant" || msg["content"].([]any)[0].(map[string]any)["text"] != "reading on" {
		t.Errorf("message item %v", msg)
	}
	fc := items[1]
	if fc["type"] != "function_call" || fc["namespace"] != "mcp__fs" || fc["name"] != "toolcap_read" || fc["arguments"] != `{"offset":3,"ref":"r"}` || fc["call_id"] == "" {
		t.Errorf("function_call item %v", fc)
	}
	cc := items[2]
	if cc["type"] != "custom_tool_call" || cc["name"] != "exec" || cc["input"] != "text(2)" || cc["call_id"] == "" {
		t.Errorf("custom_tool_call item %v", cc)
	}
	ts := items[3]
	if args, _ := ts["arguments"].(map[string]any); ts["type"] != "tool_search_call" || ts["execution"] != "client" || args["query"] != "toolcap_read" || args["limit"] != float64(2) {
		t.Errorf("tool_search_call item %v", ts)
	}
	done := events[len(events)-1].data["response"].(map[string]any)
	if done["status"] != "completed" || len(done["output"].([]any)) != 4 || done["usage"] == nil {
		t.Errorf("response.completed %v", done)
	}
	if created := events[0].data["response"].(map[string]any); created["id"] != done["id"] || created["status"] != "in_progress" {
		t.Errorf("response.created %v, completed id %v", created, done["id"])
	}

	// What the script saw is what the server recorded.
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0] != seen || reqs[0].Seq != 1 || string(reqs[0].Body) != secondRequest || reqs[0].Model != "local-model" || !reqs[0].Stream {
		t.Fatalf("recorded %+v", reqs)
	}
	outs, err := seen.Outputs()
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 3 {
		t.Fatalf("%d outputs, want 3: %+v", len(outs), outs)
	}
	if o := outs[0]; o.Type != "function_call_output" || o.CallID != "call_1" || o.Text() != "Wall time: 0.0100 seconds\nOutput:\n{\"content\":\"abc\"}" {
		t.Errorf("function_call_output %+v", o)
	}
	if o := outs[1]; o.Type != "custom_tool_call_output" || !reflect.DeepEqual(o.Texts, []string{"Script completed\n", "1"}) || o.Text() != "Script completed\n1" {
		t.Errorf("custom_tool_call_output %+v", o)
	}
	if o := outs[2]; o.Type != "tool_search_output" || o.CallID != "search_1" || !strings.Contains(string(o.Tools), "get_issue") {
		t.Errorf("tool_search_output %+v", o)
	}
	if o, ok, err := seen.Output("call_2"); err != nil || !ok || o.Text() != "Script completed\n1" {
		t.Errorf("Output(call_2) = %+v, %v, %v", o, ok, err)
	}
	if _, ok, _ := seen.Output("nope"); ok {
		t.Error("Output(nope) found an output")
	}
	if calls := seen.Calls(); len(calls) != 3 || calls[0].Namespace != "mcp__fs" || calls[1].Input != "text(1)" || !strings.Contains(string(calls[2].Raw), "search_1") {
		t.Errorf("Calls %+v", calls)
	}
	names = seen.ToolNames()
	wantNames := []string{"exec_command", "mcp__fs.read_text_file", "tool_search", "functions.exec", "mcp__gh.get_issue"}
	if !reflect.DeepEqual(names, wantNames) {
		t.Errorf("ToolNames %v, want %v", names, wantNames)
	}
	if !seen.HasTool("mcp__gh.get_issue") || seen.HasTool("read_text_file") {
		t.Error("HasTool")
	}
	if got := seen.UserText(); got != "read it" {
		t.Errorf("UserText %q", got)
	}
	if errs := srv.Errors(); len(errs) > 0 {
		t.Errorf("errors: %v", errs)
	}
}

func TestFinalMessageNotStreamedAndGzip(t *testing.T) {
	srv, err := fakeresponses.New(func(*fakeresponses.Request) fakeresponses.Reply { return fakeresponses.Reply{} })
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	var zbody bytes.Buffer
	zw := gzip.NewWriter(&zbody)
	_, _ = zw.Write([]byte(`{"model":"m","stream":false,"input":[]}`))
	_ = zw.Close()
	resp := post(t, srv.URL+"/responses", zbody.Bytes(), map[string]string{"Content-Encoding": "gzip"})
	var got struct {
		Object string `json:"object"`
		Status string `json:"status"`
		Output []struct {
			Type    string `json:"type"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Object != "response" || got.Status != "completed" || len(got.Output) != 1 || got.Output[0].Type != "message" || got.Output[0].Content[0].Text != "done" {
		t.Errorf("non-streamed reply %+v", got)
	}
	if reqs := srv.Requests(); len(reqs) != 1 || string(reqs[0].Body) != `{"model":"m","stream":false,"input":[]}` {
		t.Errorf("recorded %+v", reqs)
	}

	// Anything else is a 404 the server remembers; a body that is not a
	// request is an error.
	if resp := post(t, srv.URL+"/v1/chat/completions", []byte(`{}`), nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown path: status %d", resp.StatusCode)
	}
	if u := srv.Unknown(); len(u) != 1 || u[0] != "POST /v1/chat/completions" {
		t.Errorf("Unknown %v", u)
	}
	if resp := post(t, srv.BaseURL+"/responses", []byte(`[`), nil); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad body: status %d", resp.StatusCode)
	}
	if resp := post(t, srv.BaseURL+"/responses", []byte(`{}`), map[string]string{"Content-Encoding": "zstd"}); resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("zstd body: status %d", resp.StatusCode)
	}
	if errs := srv.Errors(); len(errs) != 2 {
		t.Errorf("errors %v, want 2", errs)
	}
}
