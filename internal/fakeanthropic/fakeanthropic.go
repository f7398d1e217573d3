// Package fakeanthropic is a fake Anthropic Messages API for tests that drive
// a real agent (Claude Code, `claude -p`) offline and read what it sends the
// model.
//
// A [Server] listens on 127.0.0.1 on a port of its own and answers
//
//   - POST /v1/messages, streaming (Server-Sent Events: message_start,
//     content_block_start, content_block_delta, content_block_stop,
//     message_delta, message_stop) or not (one JSON message), with the
//     [Reply] the test's [Script] gives for that request;
//   - POST /v1/messages/count_tokens, with an estimate of the body's tokens
//     (a quarter of its bytes) or what [WithTokenCounter] says;
//   - anything else with 404 and an Anthropic-shaped error, recorded in
//     [Server.Unknown] so that a test finds out what its agent calls.
//
// Every /v1/messages request is recorded whole ([Server.Requests]); a test
// reads the tool results the agent sent after a tool call from the request
// that followed it ([Request.ToolResults]). Bodies over [MaxBodyBytes] are
// refused with 413. The server is safe for concurrent requests; Close it
// when the test ends.
package fakeanthropic

import (
	"bytes"
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

// MaxBodyBytes bounds one request body. Claude Code sends the whole
// conversation each time; 64 MiB holds a few large tool results with room
// to spare, and a runaway agent fails its request instead of the test's
// memory.
const MaxBodyBytes = 64 << 20

// Script decides the reply to one /v1/messages request. It runs on the
// request's goroutine, possibly concurrently with itself, and must not
// block for long: the agent waits on it. A test tells the agent's main
// requests (with tools, see [Request.HasTool]) from its side requests
// (titles, summaries, quota checks, usually without tools and with a
// smaller model) by what the request holds.
type Script func(req *Request) Reply

// Reply is the assistant message to answer with: optional text, then
// optional tool calls, in that order.
type Reply struct {
	// Text, when not empty, is a text block.
	Text string
	// ToolUses are tool_use blocks after the text. With at least one, the
	// stop reason is "tool_use", else "end_turn".
	ToolUses []ToolUse
}

// ToolUse is one tool call of a [Reply].
type ToolUse struct {
	// ID is the tool_use id the agent echoes in its tool_result; empty
	// gets a unique one.
	ID string
	// Name is the tool's name as the request's tools list has it
	// (Bash, Read, mcp__fs__search_files).
	Name string
	// Input is the tool's arguments, encoded as JSON.
	Input any
}

// Request is one /v1/messages request as the server received it.
type Request struct {
	// Seq counts the /v1/messages requests from 1, in arrival order.
	Seq int
	// Path is the URL path with its query (/v1/messages?beta=true).
	Path string
	// Header is the request's header.
	Header http.Header
	// Body is the raw JSON body.
	Body []byte
	// Model, Stream, System, Messages and Tools are the body's fields that
	// tests look at; Messages and Tools keep only what this package needs
	// of each entry.
	Model    string          `json:"model"`
	Stream   bool            `json:"stream"`
	System   json.RawMessage `json:"system"`
	Messages []Message       `json:"messages"`
	Tools    []Tool          `json:"tools"`
}

// Message is one entry of a request's messages.
type Message struct {
	Role string `json:"role"`
	// Content is a string or an array of blocks.
	Content json.RawMessage `json:"content"`
}

// Tool is one entry of a request's tools list.
type Tool struct {
	Name string `json:"name"`
}

// Block is a content block of a message, with the fields of the types tests
// read (text, tool_use, tool_result).
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	// Content of a tool_result: a string or an array of blocks.
	Content json.RawMessage `json:"content,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
}

// ToolResult is a tool_result block as the model receives it.
type ToolResult struct {
	ToolUseID string
	IsError   bool
	// Texts holds the result's text: one entry for a string content, one
	// per text block of an array content.
	Texts []string
	// Others counts the blocks that are not text (images, documents).
	Others int
}

// Text is the result's texts joined by a newline, as a model reads them
// one after the other.
func (r ToolResult) Text() string { return strings.Join(r.Texts, "\n") }

// HasTool reports whether the request offers the model a tool of that name.
func (r *Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// SystemText is the request's system prompt as text: the string, or the
// text blocks joined by a newline.
func (r *Request) SystemText() string {
	texts, _, err := blockTexts(r.System)
	if err != nil {
		return ""
	}
	return strings.Join(texts, "\n")
}

// Blocks decodes a message's content: a string is one text block.
func (m Message) Blocks() ([]Block, error) {
	c := bytes.TrimSpace(m.Content)
	if len(c) == 0 || string(c) == "null" {
		return nil, nil
	}
	if c[0] == '"' {
		var s string
		if err := json.Unmarshal(c, &s); err != nil {
			return nil, fmt.Errorf("fakeanthropic: %s message content: %w", m.Role, err)
		}
		return []Block{{Type: "text", Text: s}}, nil
	}
	var blocks []Block
	if err := json.Unmarshal(c, &blocks); err != nil {
		return nil, fmt.Errorf("fakeanthropic: %s message content: %w", m.Role, err)
	}
	return blocks, nil
}

// ToolResults returns the tool_result blocks of the user messages after
// the request's last assistant message: the answers to the model's last
// tool calls. Claude Code may add a message of its own (a reminder) after
// the one holding the results, so every user message of that turn counts.
func (r *Request) ToolResults() ([]ToolResult, error) {
	start := 0
	for i, m := range r.Messages {
		if m.Role == "assistant" {
			start = i + 1
		}
	}
	var out []ToolResult
	for _, m := range r.Messages[start:] {
		if m.Role != "user" {
			continue
		}
		blocks, err := m.Blocks()
		if err != nil {
			return nil, err
		}
		for _, b := range blocks {
			if b.Type != "tool_result" {
				continue
			}
			texts, others, err := blockTexts(b.Content)
			if err != nil {
				return nil, fmt.Errorf("fakeanthropic: tool_result %s: %w", b.ToolUseID, err)
			}
			out = append(out, ToolResult{ToolUseID: b.ToolUseID, IsError: b.IsError, Texts: texts, Others: others})
		}
	}
	return out, nil
}

// TurnTexts returns the text blocks of the messages after the request's
// last assistant message, tool results aside: what the agent added to the
// tool results of that turn. Claude Code 2.1 sends its paging note of a
// Read as a message of role "system" after the tool result, so every role
// but the assistant's counts.
func (r *Request) TurnTexts() ([]string, error) {
	start := 0
	for i, m := range r.Messages {
		if m.Role == "assistant" {
			start = i + 1
		}
	}
	var out []string
	for _, m := range r.Messages[start:] {
		if m.Role == "assistant" {
			continue
		}
		blocks, err := m.Blocks()
		if err != nil {
			return nil, err
		}
		for _, b := range blocks {
			if b.Type == "text" {
				out = append(out, b.Text)
			}
		}
	}
	return out, nil
}

// blockTexts reads a content that is a string or an array of blocks.
func blockTexts(raw json.RawMessage) (texts []string, others int, err error) {
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
	var blocks []Block
	if err := json.Unmarshal(c, &blocks); err != nil {
		return nil, 0, err
	}
	for _, b := range blocks {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		} else {
			others++
		}
	}
	return texts, others, nil
}

// Option configures a [Server].
type Option func(*Server)

// WithTokenCounter makes /v1/messages/count_tokens answer count(body)
// input tokens instead of a quarter of the body's bytes.
func WithTokenCounter(count func(body []byte) int) Option {
	return func(s *Server) { s.countTokens = count }
}

// Server is a running fake Messages API.
type Server struct {
	// URL is the base URL to give the agent (ANTHROPIC_BASE_URL), such as
	// http://127.0.0.1:40123.
	URL string

	script      Script
	countTokens func([]byte) int
	srv         *http.Server
	done        chan struct{}

	mu       sync.Mutex
	requests []*Request
	unknown  []string
	errs     []error
	ids      int
}

// New starts a server on 127.0.0.1 that answers /v1/messages with script.
func New(script Script, opts ...Option) (*Server, error) {
	if script == nil {
		return nil, errors.New("fakeanthropic: nil script")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakeanthropic: listen on 127.0.0.1: %w", err)
	}
	s := &Server{
		URL:         "http://" + ln.Addr().String(),
		script:      script,
		countTokens: func(body []byte) int { return len(body)/4 + 1 },
		done:        make(chan struct{}),
	}
	for _, o := range opts {
		o(s)
	}
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

// Requests returns the /v1/messages requests received so far, in arrival
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
// JSON, replies the client stopped reading. A test fails on them.
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
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		s.messages(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		body, ok := s.readBody(w, r)
		if !ok {
			return
		}
		writeJSON(w, http.StatusOK, map[string]int{"input_tokens": s.countTokens(body)})
	default:
		s.mu.Lock()
		s.unknown = append(s.unknown, r.Method+" "+r.URL.RequestURI())
		s.mu.Unlock()
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, MaxBodyBytes))
		writeError(w, http.StatusNotFound, "not_found_error", "fakeanthropic: no "+r.Method+" "+r.URL.Path)
	}
}

// readBody reads a bounded body, answering the error itself when it fails.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		err = fmt.Errorf("fakeanthropic: %s %s: body: %w", r.Method, r.URL.Path, err)
		s.fail(err)
		status := http.StatusBadRequest
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			status = http.StatusRequestEntityTooLarge
		}
		writeError(w, status, "invalid_request_error", err.Error())
		return nil, false
	}
	return body, true
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	req := &Request{Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body}
	if err := json.Unmarshal(body, req); err != nil {
		err = fmt.Errorf("fakeanthropic: POST /v1/messages: body is not a Messages request: %w", err)
		s.fail(err)
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	s.mu.Lock()
	req.Seq = len(s.requests) + 1
	s.requests = append(s.requests, req)
	s.mu.Unlock()

	reply := s.script(req)
	msg, err := s.message(req.Model, reply)
	if err != nil {
		s.fail(err)
		writeError(w, http.StatusInternalServerError, "api_error", err.Error())
		return
	}
	if !req.Stream {
		writeJSON(w, http.StatusOK, msg)
		return
	}
	if err := stream(w, msg); err != nil {
		s.fail(fmt.Errorf("fakeanthropic: request %d: streaming the reply: %w", req.Seq, err))
	}
}

// message is the non-streaming form of a reply.
type message struct {
	ID           string         `json:"id"`
	Type         string         `json:"type"`
	Role         string         `json:"role"`
	Model        string         `json:"model"`
	Content      []outBlock     `json:"content"`
	StopReason   string         `json:"stop_reason"`
	StopSequence *string        `json:"stop_sequence"`
	Usage        map[string]int `json:"usage"`
}

type outBlock struct {
	Type  string          `json:"type"`
	Text  *string         `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
}

func (s *Server) message(model string, reply Reply) (*message, error) {
	if model == "" {
		model = "claude-fake"
	}
	m := &message{
		ID: s.nextID("msg"), Type: "message", Role: "assistant", Model: model,
		Content:    []outBlock{},
		StopReason: "end_turn",
		Usage:      map[string]int{"input_tokens": 10, "output_tokens": 10},
	}
	if reply.Text != "" || len(reply.ToolUses) == 0 {
		text := reply.Text
		if text == "" {
			// An empty assistant turn is not something the API sends.
			text = "ok"
		}
		m.Content = append(m.Content, outBlock{Type: "text", Text: &text})
	}
	for _, tu := range reply.ToolUses {
		input, err := json.Marshal(tu.Input)
		if err != nil {
			return nil, fmt.Errorf("fakeanthropic: tool_use %s input: %w", tu.Name, err)
		}
		if tu.Input == nil {
			input = []byte("{}")
		}
		id := tu.ID
		if id == "" {
			id = s.nextID("toolu")
		}
		m.Content = append(m.Content, outBlock{Type: "tool_use", ID: id, Name: tu.Name, Input: input})
		m.StopReason = "tool_use"
	}
	return m, nil
}

// stream writes msg as the API's event stream.
func stream(w http.ResponseWriter, msg *message) error {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("request-id", "req_"+msg.ID)
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(event string, data any) error {
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
	start := *msg
	start.Content = []outBlock{}
	start.StopReason = ""
	type startMessage struct {
		*message
		StopReason *string `json:"stop_reason"`
	}
	if err := send("message_start", map[string]any{"type": "message_start", "message": startMessage{message: &start}}); err != nil {
		return err
	}
	for i, b := range msg.Content {
		var startBlock, delta map[string]any
		switch b.Type {
		case "text":
			startBlock = map[string]any{"type": "text", "text": ""}
			delta = map[string]any{"type": "text_delta", "text": *b.Text}
		case "tool_use":
			startBlock = map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}
			delta = map[string]any{"type": "input_json_delta", "partial_json": string(b.Input)}
		}
		if err := send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": startBlock}); err != nil {
			return err
		}
		if err := send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": delta}); err != nil {
			return err
		}
		if err := send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i}); err != nil {
			return err
		}
	}
	if err := send("message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": msg.StopReason, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": msg.Usage["output_tokens"]},
	}); err != nil {
		return err
	}
	return send("message_stop", map[string]any{"type": "message_stop"})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"type":"error","error":{"type":"api_error","message":"fakeanthropic: encoding the reply failed"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeError(w http.ResponseWriter, status int, kind, msg string) {
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]string{"type": kind, "message": msg}})
}
