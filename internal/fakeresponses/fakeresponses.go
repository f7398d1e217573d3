// Package fakeresponses is a fake OpenAI Responses API for tests that drive
// a real agent (the Codex CLI, `codex exec`) offline and read what it sends
// the model.
//
// A [Server] listens on 127.0.0.1 on a port of its own and answers
//
//   - POST /v1/responses (and POST /responses), streaming Server-Sent Events
//     (response.created, response.in_progress, then for each output item
//     response.output_item.added, response.output_text.delta for a message,
//     response.output_item.done, and last response.completed) or, when the
//     request asks for no stream, one JSON response object, with the [Reply]
//     the test's [Script] gives for that request;
//   - anything else with 404 and an OpenAI-shaped error, recorded in
//     [Server.Unknown] so that a test finds out what its agent calls.
//
// The agent is pointed at it with a model provider whose base_url is
// [Server.BaseURL] and whose wire_api is "responses"; for Codex, in
// $CODEX_HOME/config.toml:
//
//	model_provider = "fake"
//	[model_providers.fake]
//	name = "fake"
//	base_url = "http://127.0.0.1:PORT/v1"
//	wire_api = "responses"
//	env_key = "FAKE_API_KEY"
//
// A reply is a final message ([Reply.Text]) or calls the agent runs before
// it asks again ([Reply.Calls]): a function call ([FunctionCall], Codex's
// MCP tools are functions in a namespace such as "mcp__fs"), a call of a
// freeform tool ([CustomCall], Codex's code-mode "exec" takes JavaScript), or
// a client-side tool search ([ToolSearchCall]). The agent sends the results
// back in its next request as input items (function_call_output,
// custom_tool_call_output, tool_search_output), which [Request.Outputs] and
// [Request.Output] read.
//
// Every request is recorded whole ([Server.Requests]), raw body included.
// Bodies over [MaxBodyBytes] are refused with 413; a gzip body
// (Content-Encoding: gzip) is decoded, any other encoding is refused. The
// server is safe for concurrent requests; Close it when the test ends.
package fakeresponses

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// MaxBodyBytes bounds one request body. The agent sends the whole
// conversation each time; 64 MiB holds many large tool results, and a
// runaway agent fails its request instead of the test's memory.
const MaxBodyBytes = 64 << 20

// Script decides the reply to one request. It runs on the request's
// goroutine, possibly concurrently with itself, and must not block for long:
// the agent waits on it.
type Script func(req *Request) Reply

// Reply is the model's turn: calls for the agent to run, or, with none, a
// final message that ends the agent's turn.
type Reply struct {
	// Text is an assistant message. With calls it comes before them (a
	// preamble); without, it is the final answer, "done" when empty.
	Text string
	// Calls are the tool calls of this turn, in order.
	Calls []Call
}

// Kinds of [Call].
const (
	// KindFunction is a function_call: a JSON-schema tool, Codex's own or an
	// MCP server's.
	KindFunction = "function_call"
	// KindCustom is a custom_tool_call: a freeform tool whose input is
	// plain text, such as Codex's code-mode "exec" (JavaScript) or
	// apply_patch.
	KindCustom = "custom_tool_call"
	// KindToolSearch is a tool_search_call run by the client
	// (execution "client"): Codex searches its deferred tools and answers
	// with a tool_search_output listing the matches.
	KindToolSearch = "tool_search_call"
)

// Call is one tool call of a [Reply]. Build one with [FunctionCall],
// [CustomCall] or [ToolSearchCall], or fill it in.
type Call struct {
	// Kind is KindFunction, KindCustom or KindToolSearch; empty is
	// KindFunction.
	Kind string
	// CallID is the id the agent echoes in the call's output; empty gets a
	// unique one.
	CallID string
	// Namespace is a function's namespace as the request's tools list has
	// it ("mcp__fs" for the MCP server named fs); empty for a tool outside
	// any namespace.
	Namespace string
	// Name is the tool's name within its namespace (read_text_file, exec).
	Name string
	// Arguments is a function's arguments, or a tool search's: a value
	// encoded as JSON (json.RawMessage is taken as it is). A function's
	// arguments travel as a JSON string holding the object, a tool
	// search's as the object.
	Arguments any
	// Input is a custom tool's input, plain text.
	Input string
}

// FunctionCall calls the function name in namespace (empty for none) with
// args encoded as JSON.
func FunctionCall(namespace, name string, args any) Call {
	return Call{Kind: KindFunction, Namespace: namespace, Name: name, Arguments: args}
}

// CustomCall calls the freeform tool name with input.
func CustomCall(name, input string) Call {
	return Call{Kind: KindCustom, Name: name, Input: input}
}

// ToolSearchCall asks the agent to search its deferred tools for query,
// returning at most limit tools (0 leaves the agent's default).
func ToolSearchCall(query string, limit int) Call {
	args := map[string]any{"query": query}
	if limit > 0 {
		args["limit"] = limit
	}
	return Call{Kind: KindToolSearch, Arguments: args}
}

// Request is one request to the responses endpoint as the server received
// it.
type Request struct {
	// Seq counts the responses requests from 1, in arrival order.
	Seq int
	// Path is the URL path with its query.
	Path string
	// Header is the request's header.
	Header http.Header
	// Body is the raw JSON body, decoded from gzip when it came so.
	Body []byte
	// Model, Stream, Instructions, Input and Tools are the body's fields
	// tests look at.
	Model        string            `json:"model"`
	Stream       bool              `json:"stream"`
	Instructions string            `json:"instructions"`
	Input        []Item            `json:"input"`
	Tools        []json.RawMessage `json:"tools"`
}

// Item is one entry of a request's input, with the fields of the types
// tests read; Raw holds the whole entry.
type Item struct {
	// Type is message, function_call, function_call_output,
	// custom_tool_call, custom_tool_call_output, tool_search_call,
	// tool_search_output, additional_tools, reasoning …
	Type string `json:"type"`
	// Role of a message (developer, user, assistant).
	Role string `json:"role,omitempty"`
	// Content of a message: an array of content parts.
	Content json.RawMessage `json:"content,omitempty"`
	// CallID of a call or an output.
	CallID string `json:"call_id,omitempty"`
	// Name and Namespace of a call.
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	// Arguments of a call: a JSON string for a function, an object for a
	// tool search.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Input of a custom tool call.
	Input string `json:"input,omitempty"`
	// Output of a function or custom call: a string or an array of
	// content parts (input_text, input_image).
	Output json.RawMessage `json:"output,omitempty"`
	// Tools of a tool_search_output or an additional_tools item.
	Tools json.RawMessage `json:"tools,omitempty"`
	// Raw is the whole entry.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the raw entry beside its fields.
func (it *Item) UnmarshalJSON(b []byte) error {
	type plain Item
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*it = Item(p)
	it.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// Output is a tool call's result as the agent sent it to the model.
type Output struct {
	// Type is function_call_output, custom_tool_call_output or
	// tool_search_output.
	Type   string
	CallID string
	// Texts holds the output's text: one entry for a string output, one
	// per input_text part of an array output (a tool_search_output has
	// none).
	Texts []string
	// Others counts the parts that are not text (images).
	Others int
	// Tools is a tool_search_output's tools list.
	Tools json.RawMessage
}

// Text is the output's texts joined, as the model reads them one after the
// other.
func (o Output) Text() string { return strings.Join(o.Texts, "") }

// Outputs returns the tool outputs of the request's input, in order: every
// call's result so far, the last ones answering the model's last turn.
func (r *Request) Outputs() ([]Output, error) {
	var out []Output
	for _, it := range r.Input {
		switch it.Type {
		case "function_call_output", "custom_tool_call_output":
			texts, others, err := outputTexts(it.Output)
			if err != nil {
				return nil, fmt.Errorf("fakeresponses: %s %s: %w", it.Type, it.CallID, err)
			}
			out = append(out, Output{Type: it.Type, CallID: it.CallID, Texts: texts, Others: others})
		case "tool_search_output":
			out = append(out, Output{Type: it.Type, CallID: it.CallID, Tools: it.Tools})
		}
	}
	return out, nil
}

// Output returns the output of the call callID, false when the request
// holds none.
func (r *Request) Output(callID string) (Output, bool, error) {
	outs, err := r.Outputs()
	if err != nil {
		return Output{}, false, err
	}
	for i := len(outs) - 1; i >= 0; i-- {
		if outs[i].CallID == callID {
			return outs[i], true, nil
		}
	}
	return Output{}, false, nil
}

// Calls returns the calls of the request's input: the model's earlier
// calls, which the agent sends back with their outputs.
func (r *Request) Calls() []Item {
	var out []Item
	for _, it := range r.Input {
		switch it.Type {
		case KindFunction, KindCustom, KindToolSearch:
			out = append(out, it)
		}
	}
	return out
}

// ToolNames returns the names of the tools the request offers the model:
// its tools list and every additional_tools or tool_search_output item of
// its input, a tool in a namespace as "NAMESPACE.NAME" (mcp__fs.read_text_file),
// a tool of another kind (tool_search, web_search) by its name or, without
// one, its type.
func (r *Request) ToolNames() []string {
	var names []string
	var walk func(ns string, raw []json.RawMessage)
	walk = func(ns string, raw []json.RawMessage) {
		for _, t := range raw {
			var tool struct {
				Type  string            `json:"type"`
				Name  string            `json:"name"`
				Tools []json.RawMessage `json:"tools"`
			}
			if json.Unmarshal(t, &tool) != nil {
				continue
			}
			if tool.Type == "namespace" {
				walk(tool.Name, tool.Tools)
				continue
			}
			name := tool.Name
			if name == "" {
				name = tool.Type
			}
			if ns != "" {
				name = ns + "." + name
			}
			names = append(names, name)
		}
	}
	walk("", r.Tools)
	for _, it := range r.Input {
		if (it.Type == "additional_tools" || it.Type == "tool_search_output") && len(it.Tools) > 0 {
			var tools []json.RawMessage
			if json.Unmarshal(it.Tools, &tools) == nil {
				walk("", tools)
			}
		}
	}
	return names
}

// HasTool reports whether the request offers the model the tool name
// ("NAMESPACE.NAME" for a tool in a namespace), see [Request.ToolNames].
func (r *Request) HasTool(name string) bool {
	for _, n := range r.ToolNames() {
		if n == name {
			return true
		}
	}
	return false
}

// UserText returns the text of the request's user messages, joined by a
// newline: the prompt and the context the agent adds.
func (r *Request) UserText() string {
	var texts []string
	for _, it := range r.Input {
		if it.Type != "message" || it.Role != "user" {
			continue
		}
		t, _, err := outputTexts(it.Content)
		if err == nil {
			texts = append(texts, t...)
		}
	}
	return strings.Join(texts, "\n")
}

// outputTexts reads an output that is a string or an array of parts.
func outputTexts(raw json.RawMessage) (texts []string, others int, err error) {
	c := bytes.TrimSpace(raw)
	if len(c) == 0 || string(c) == "null" {
		return nil, 0, nil
	}
	if c[0] == '"' {
		var s string
		if err := json.Unmarshal(c, &s); err != nil {
			return nil, 0, err
		}
		return []string{s}, 0, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(c, &parts); err != nil {
		return nil, 0, err
	}
	for _, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text":
			texts = append(texts, p.Text)
		default:
			others++
		}
	}
	return texts, others, nil
}

// Server is a running fake Responses API.
type Server struct {
	// URL is the server's root, such as http://127.0.0.1:40123.
	URL string
	// BaseURL is URL + "/v1", the base_url to give the agent.
	BaseURL string

	script Script
	srv    *http.Server
	done   chan struct{}

	mu       sync.Mutex
	requests []*Request
	unknown  []string
	errs     []error
	ids      int
}

// New starts a server on 127.0.0.1 that answers the responses endpoint with
// script.
func New(script Script) (*Server, error) {
	if script == nil {
		return nil, errors.New("fakeresponses: nil script")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakeresponses: listen on 127.0.0.1: %w", err)
	}
	s := &Server{
		URL:    "http://" + ln.Addr().String(),
		script: script,
		done:   make(chan struct{}),
	}
	s.BaseURL = s.URL + "/v1"
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Close stops the server and waits for it: connections still open are
// closed, so an agent still running gets errors.
func (s *Server) Close() error {
	err := s.srv.Close()
	<-s.done
	return err
}

// Requests returns the responses requests received so far, in arrival
// order. The requests are shared; do not change them.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// Unknown returns "METHOD PATH" of every request the server did not know,
// answered with 404.
func (s *Server) Unknown() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.unknown...)
}

// Errors returns what went wrong serving requests: bodies too large or not
// JSON, replies that could not be encoded or that the client stopped
// reading. A test fails on them.
func (s *Server) Errors() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.errs...)
}

func (s *Server) fail(err error) {
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
}

func (s *Server) nextID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("%s_fake%06d", prefix, s.ids)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && (r.URL.Path == "/v1/responses" || r.URL.Path == "/responses") {
		s.responses(w, r)
		return
	}
	s.mu.Lock()
	s.unknown = append(s.unknown, r.Method+" "+r.URL.RequestURI())
	s.mu.Unlock()
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, MaxBodyBytes))
	writeError(w, http.StatusNotFound, "not_found_error", "fakeresponses: no "+r.Method+" "+r.URL.Path)
}

// readBody reads a bounded body, answering the error itself when it fails.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	var body io.Reader = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			s.fail(fmt.Errorf("fakeresponses: %s %s: gzip body: %w", r.Method, r.URL.Path, err))
			writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
			return nil, false
		}
		defer zr.Close()
		body = io.LimitReader(zr, MaxBodyBytes+1)
	default:
		err := fmt.Errorf("fakeresponses: %s %s: Content-Encoding %q is not supported", r.Method, r.URL.Path, enc)
		s.fail(err)
		writeError(w, http.StatusUnsupportedMediaType, "invalid_request_error", err.Error())
		return nil, false
	}
	data, err := io.ReadAll(body)
	if err == nil && len(data) > MaxBodyBytes {
		err = &http.MaxBytesError{Limit: MaxBodyBytes}
	}
	if err != nil {
		err = fmt.Errorf("fakeresponses: %s %s: body: %w", r.Method, r.URL.Path, err)
		s.fail(err)
		status := http.StatusBadRequest
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			status = http.StatusRequestEntityTooLarge
		}
		writeError(w, status, "invalid_request_error", err.Error())
		return nil, false
	}
	return data, true
}

func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	req := &Request{Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body}
	if err := json.Unmarshal(body, req); err != nil {
		err = fmt.Errorf("fakeresponses: POST %s: body is not a Responses request: %w", r.URL.Path, err)
		s.fail(err)
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	s.mu.Lock()
	req.Seq = len(s.requests) + 1
	s.requests = append(s.requests, req)
	s.mu.Unlock()

	reply := s.script(req)
	resp, err := s.response(req.Model, reply)
	if err != nil {
		s.fail(err)
		writeError(w, http.StatusInternalServerError, "server_error", err.Error())
		return
	}
	if !req.Stream {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	if err := stream(w, resp); err != nil {
		s.fail(fmt.Errorf("fakeresponses: request %d: streaming the reply: %w", req.Seq, err))
	}
}

// response is a response object as the API returns it.
type response struct {
	ID        string           `json:"id"`
	Object    string           `json:"object"`
	CreatedAt int64            `json:"created_at"`
	Status    string           `json:"status"`
	Model     string           `json:"model"`
	Output    []map[string]any `json:"output"`
	Usage     *usage           `json:"usage,omitempty"`
}

type usage struct {
	InputTokens         int            `json:"input_tokens"`
	InputTokensDetails  map[string]int `json:"input_tokens_details"`
	OutputTokens        int            `json:"output_tokens"`
	OutputTokensDetails map[string]int `json:"output_tokens_details"`
	TotalTokens         int            `json:"total_tokens"`
}

// response builds the output items of a reply.
func (s *Server) response(model string, reply Reply) (*response, error) {
	if model == "" {
		model = "fake-model"
	}
	resp := &response{
		ID: s.nextID("resp"), Object: "response", CreatedAt: time.Now().Unix(),
		Status: "completed", Model: model, Output: []map[string]any{},
		Usage: &usage{
			InputTokens: 10, InputTokensDetails: map[string]int{"cached_tokens": 0},
			OutputTokens: 10, OutputTokensDetails: map[string]int{"reasoning_tokens": 0},
			TotalTokens: 20,
		},
	}
	if reply.Text != "" || len(reply.Calls) == 0 {
		text := reply.Text
		if text == "" {
			text = "done"
		}
		resp.Output = append(resp.Output, map[string]any{
			"type": "message", "id": s.nextID("msg"), "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}},
		})
	}
	for _, c := range reply.Calls {
		id := c.CallID
		if id == "" {
			id = s.nextID("call")
		}
		switch c.Kind {
		case "", KindFunction:
			args, err := encodeArgs(c.Arguments)
			if err != nil {
				return nil, fmt.Errorf("fakeresponses: function_call %s arguments: %w", c.Name, err)
			}
			item := map[string]any{
				"type": KindFunction, "id": s.nextID("fc"), "status": "completed",
				"call_id": id, "name": c.Name, "arguments": string(args),
			}
			if c.Namespace != "" {
				item["namespace"] = c.Namespace
			}
			resp.Output = append(resp.Output, item)
		case KindCustom:
			resp.Output = append(resp.Output, map[string]any{
				"type": KindCustom, "id": s.nextID("ctc"), "status": "completed",
				"call_id": id, "name": c.Name, "input": c.Input,
			})
		case KindToolSearch:
			args, err := encodeArgs(c.Arguments)
			if err != nil {
				return nil, fmt.Errorf("fakeresponses: tool_search_call arguments: %w", err)
			}
			resp.Output = append(resp.Output, map[string]any{
				"type": KindToolSearch, "id": s.nextID("ts"), "status": "completed",
				"call_id": id, "execution": "client", "arguments": json.RawMessage(args),
			})
		default:
			return nil, fmt.Errorf("fakeresponses: call of unknown kind %q", c.Kind)
		}
	}
	return resp, nil
}

// encodeArgs encodes arguments as a JSON object, {} for nil.
func encodeArgs(v any) ([]byte, error) {
	if v == nil {
		return []byte("{}"), nil
	}
	if raw, ok := v.(json.RawMessage); ok {
		if !json.Valid(raw) {
			return nil, errors.New("not valid JSON")
		}
		return raw, nil
	}
	return json.Marshal(v)
}

// stream writes resp as the API's event stream.
func stream(w http.ResponseWriter, resp *response) error {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("x-request-id", "req_"+resp.ID)
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	seq := 0
	send := func(event string, data map[string]any) error {
		data["type"] = event
		data["sequence_number"] = seq
		seq++
		b, err := json.Marshal(data)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return err
		}
		if flusher != nil {
			flusher.Flush()
		}
		return nil
	}
	start := *resp
	start.Status = "in_progress"
	start.Output = []map[string]any{}
	start.Usage = nil
	if err := send("response.created", map[string]any{"response": start}); err != nil {
		return err
	}
	if err := send("response.in_progress", map[string]any{"response": start}); err != nil {
		return err
	}
	for i, item := range resp.Output {
		added := map[string]any{}
		for k, v := range item {
			added[k] = v
		}
		added["status"] = "in_progress"
		if item["type"] == "message" {
			added["content"] = []any{}
		}
		if err := send("response.output_item.added", map[string]any{"output_index": i, "item": added}); err != nil {
			return err
		}
		if item["type"] == "message" {
			part := item["content"].([]any)[0].(map[string]any)
			if err := send("response.output_text.delta", map[string]any{
				"item_id": item["id"], "output_index": i, "content_index": 0, "delta": part["text"],
			}); err != nil {
				return err
			}
		}
		if err := send("response.output_item.done", map[string]any{"output_index": i, "item": item}); err != nil {
			return err
		}
	}
	return send("response.completed", map[string]any{"response": resp})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"type":"server_error","message":"fakeresponses: encoding the reply failed"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeError(w http.ResponseWriter, status int, kind, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"type": kind, "message": msg, "param": nil, "code": nil}})
}
