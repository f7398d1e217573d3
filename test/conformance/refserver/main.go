// Command refserver is toolcap's reference MCP server for the official MCP
// conformance suite (@modelcontextprotocol/conformance, pinned in
// test/conformance/package.json). It implements, with the Go SDK, every tool,
// resource and prompt the suite's server scenarios call, so that it passes them
// when the suite talks to it directly; cli/conformance_e2e_test.go then runs the
// same scenarios through `toolcap mcp --listen` in front of it, over stdio and
// over HTTP, and requires the same passes.
//
// The suite's own reference server (everything-server) is not published on
// npm, which is why this one exists. Its names and fixed contents follow the
// scenario descriptions in the suite: a scenario checks the exact text, URI
// or MIME type it asked for.
//
// Usage:
//
//	refserver                     serve one session on stdin/stdout
//	refserver -http 127.0.0.1:0   serve streamable HTTP; the address it bound
//	                              is printed on stdout as "listening on ADDR"
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

//lint:file-ignore SA1019 the suite exercises sampling and logging, which the SDK marks deprecated (SEP-2577) but still serves.

// Fixed contents the scenarios check byte for byte or by type.
const (
	// pngBase64 is a 1x1 PNG: the image scenarios check only that an image
	// block with data and a MIME type arrives.
	pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	// wavBase64 is a minimal silent WAV file, for tools-call-audio.
	wavBase64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

	watchedURI     = "test://watched-resource"
	templateURI    = "test://template/{id}/data"
	templatePrefix = "test://template/"
	templateSuffix = "/data"
)

// decoded returns the bytes of a base64 constant of this file. The constants
// are fixed and valid, so a decoding error is a bug of this file; it is
// reported by main's self check before serving instead of by a panic.
func decoded(s string) []byte {
	b, _ := base64.StdEncoding.DecodeString(s)
	return b
}

func main() {
	httpAddr := flag.String("http", "", "serve streamable HTTP on this address (host:port) instead of stdin/stdout")
	flag.Parse()
	for _, c := range []string{pngBase64, wavBase64} {
		if _, err := base64.StdEncoding.DecodeString(c); err != nil {
			log.Fatalf("refserver: fixed content does not decode: %v", err)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	server := newServer()
	// resources-subscribe only checks the subscribe call, but a watched
	// resource that never changes would make subscribing pointless: tell
	// subscribers every few seconds, as the suite's description asks.
	go announceUpdates(ctx, server)

	if *httpAddr == "" {
		if err := server.Run(ctx, &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
			log.Fatalf("refserver: stdio: %v", err)
		}
		return
	}
	if err := serveHTTP(ctx, server, *httpAddr); err != nil {
		log.Fatalf("refserver: http on %s: %v", *httpAddr, err)
	}
}

// serveHTTP serves server as streamable HTTP on addr until ctx ends. It is
// stateful (sessions, so that sampling and elicitation can reach the client)
// and keeps an event store, so that server-sse-polling can resume a stream
// the server closed on purpose. The SDK's DNS rebinding protection stays on:
// dns-rebinding-protection checks it.
func serveHTTP(ctx context.Context, server *mcp.Server, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)})
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	// The test reads this line to learn the port of -http 127.0.0.1:0.
	fmt.Printf("listening on %s\n", ln.Addr())
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// announceUpdates tells subscribers of the watched resource that it changed,
// every 3 seconds, until ctx ends.
func announceUpdates(ctx context.Context, server *mcp.Server) {
	tick := time.NewTicker(3 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: watchedURI})
		}
	}
}

// newServer builds the server with every feature the scenarios call.
func newServer() *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "toolcap-conformance-refserver", Version: "1.0.0"},
		&mcp.ServerOptions{
			// completion-complete only checks that a completion answers.
			CompletionHandler: func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
				return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}, nil
			},
			// The SDK keeps the subscriptions; these handlers only accept
			// them, which also declares the resources.subscribe capability.
			SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
			UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		})
	addTools(server)
	addResources(server)
	addPrompts(server)
	return server
}

// fixed returns a tool handler that answers every call with content.
func fixed(content ...mcp.Content) mcp.ToolHandlerFor[any, any] {
	return func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: content}, nil, nil
	}
}

// text is a one-text-block tool result.
func text(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

func addTools(server *mcp.Server) {
	image := &mcp.ImageContent{Data: decoded(pngBase64), MIMEType: "image/png"}
	tools := []struct {
		name, description string
		handler           mcp.ToolHandlerFor[any, any]
	}{
		{"test_simple_text", "Returns one fixed text block",
			fixed(&mcp.TextContent{Text: "This is a simple text response for testing."})},
		{"test_image_content", "Returns one PNG image block", fixed(image)},
		{"test_audio_content", "Returns one WAV audio block",
			fixed(&mcp.AudioContent{Data: decoded(wavBase64), MIMEType: "audio/wav"})},
		{"test_embedded_resource", "Returns one embedded text resource",
			fixed(&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}})},
		{"test_multiple_content_types", "Returns a text, an image and an embedded resource",
			fixed(&mcp.TextContent{Text: "Multiple content types test:"}, image,
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
					URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}})},
		{"test_tool_with_logging", "Sends three log messages while it runs", withLogging},
		{"test_tool_with_progress", "Sends progress 0, 50 and 100 of 100 while it runs", withProgress},
		{"test_error_handling", "Always fails, as a tool error (isError)", failing},
		{"test_reconnection", "Closes its SSE stream mid-call, then answers after the client resumes (SEP-1699)", reconnecting},
	}
	for _, t := range tools {
		mcp.AddTool(server, &mcp.Tool{Name: t.name, Description: t.description}, t.handler)
	}
	// The tools with arguments have typed handlers, hence their own calls.
	mcp.AddTool(server, &mcp.Tool{Name: "test_sampling",
		Description: "Asks the client for an LLM completion of its prompt"}, sampling)
	for _, t := range []struct {
		name, description string
		schema            map[string]any
	}{
		{"test_elicitation", "Asks the user for a username and an email address", usernameSchema},
		{"test_elicitation_sep1034_defaults", "Asks the user for values that all have defaults (SEP-1034)", defaultsSchema},
		{"test_elicitation_sep1330_enums", "Asks the user to choose among enums of each kind (SEP-1330)", enumsSchema},
	} {
		mcp.AddTool(server, &mcp.Tool{Name: t.name, Description: t.description}, elicit(t.schema))
	}
	// json-schema-2020-12 checks that these keywords survive tools/list as
	// written, so the schema is raw JSON rather than a Go type's.
	mcp.AddTool(server, &mcp.Tool{
		Name:        "json_schema_2020_12_tool",
		Description: "Tool with JSON Schema 2020-12 features",
		InputSchema: json.RawMessage(`{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type": "object",
			"$defs": {"address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
			"properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
			"additionalProperties": false
		}`),
	}, func(_ context.Context, _ *mcp.CallToolRequest, in json.RawMessage) (*mcp.CallToolResult, any, error) {
		return text("JSON Schema 2020-12 tool called with: %s", in), nil, nil
	})
}

// pause spaces the notifications of a tool out, so that a proxy that
// reorders them against the result has the chance to show it.
const pause = 50 * time.Millisecond

// withLogging sends three info messages, then answers. The SDK drops them
// until the client sets a level, as the scenario does first.
func withLogging(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
	for _, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: msg}); err != nil {
			return nil, nil, fmt.Errorf("test_tool_with_logging: sending %q: %w", msg, err)
		}
		time.Sleep(pause)
	}
	return text("Tool with logging executed successfully"), nil, nil
}

// withProgress reports progress 0, 50 and 100 against the caller's token and
// answers with the token, so the suite can match the two.
func withProgress(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
	token := req.Params.GetProgressToken()
	if token != nil {
		for _, p := range []float64{0, 50, 100} {
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: p, Total: 100, Message: fmt.Sprintf("Completed step %.0f of 100", p)})
			if err != nil {
				return nil, nil, fmt.Errorf("test_tool_with_progress: progress %.0f: %w", p, err)
			}
			time.Sleep(pause)
		}
	}
	return text("%v", token), nil, nil
}

// failing is a tool whose failure is its result: the SDK turns a handler's
// error into a result with isError set, which tools-call-error expects.
func failing(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
	//lint:ignore ST1005 the words the suite's tools-call-error scenario checks
	return nil, nil, errors.New("This tool intentionally returns an error for testing")
}

// samplingArgs are test_sampling's arguments.
type samplingArgs struct {
	Prompt string `json:"prompt" jsonschema:"the prompt to send to the client's LLM"`
}

func sampling(ctx context.Context, req *mcp.CallToolRequest, in samplingArgs) (*mcp.CallToolResult, any, error) {
	res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{
		Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}},
		MaxTokens: 100,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("test_sampling: sampling/createMessage: %w", err)
	}
	answer := "(non-text response)"
	if tc, ok := res.Content.(*mcp.TextContent); ok {
		answer = tc.Text
	}
	return text("LLM response: %s", answer), nil, nil
}

// elicitArgs are the elicitation tools' arguments; only test_elicitation
// gets a message from the suite.
type elicitArgs struct {
	Message string `json:"message,omitempty" jsonschema:"the message to show the user"`
}

// elicit returns a tool that asks the user to fill schema and answers with
// what came back.
func elicit(schema map[string]any) mcp.ToolHandlerFor[elicitArgs, any] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in elicitArgs) (*mcp.CallToolResult, any, error) {
		msg := in.Message
		if msg == "" {
			msg = "Please answer for the conformance test"
		}
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: msg, RequestedSchema: schema})
		if err != nil {
			return nil, nil, fmt.Errorf("%s: elicitation/create: %w", req.Params.Name, err)
		}
		content, err := json.Marshal(res.Content)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: encoding the answer: %w", req.Params.Name, err)
		}
		return text("Elicitation completed: action=%s, content=%s", res.Action, content), nil, nil
	}
}

// The requested schemas of the elicitation tools, as the scenarios describe
// them (tools-call-elicitation, elicitation-sep1034-defaults,
// elicitation-sep1330-enums).
var (
	usernameSchema = map[string]any{
		"type": "object",
		"properties": map[string]any{
			"username": map[string]any{"type": "string", "description": "User's response"},
			"email":    map[string]any{"type": "string", "description": "User's email address"},
		},
		"required": []string{"username", "email"},
	}
	defaultsSchema = map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
			"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
			"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
			"status":   map[string]any{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
			"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
		},
	}
	titled = []map[string]any{
		{"const": "value1", "title": "First Option"},
		{"const": "value2", "title": "Second Option"},
		{"const": "value3", "title": "Third Option"},
	}
	enumsSchema = map[string]any{
		"type": "object",
		"properties": map[string]any{
			"untitledSingle": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}},
			"titledSingle":   map[string]any{"type": "string", "oneOf": titled},
			"legacyEnum": map[string]any{"type": "string", "enum": []string{"opt1", "opt2", "opt3"},
				"enumNames": []string{"Option One", "Option Two", "Option Three"}},
			"untitledMulti": map[string]any{"type": "array", "minItems": 1, "maxItems": 3,
				"items": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
			"titledMulti": map[string]any{"type": "array", "minItems": 1, "maxItems": 3,
				"items": map[string]any{"anyOf": titled}},
		},
	}
)

// reconnecting closes the request's SSE stream (over HTTP; over stdio there
// is no stream to close), waits for the client to come back with
// Last-Event-ID, and answers on the resumed stream.
func reconnecting(_ context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
	if req.Extra != nil && req.Extra.CloseSSEStream != nil {
		req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 10 * time.Millisecond})
	}
	time.Sleep(100 * time.Millisecond)
	return text("Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."), nil, nil
}

func addResources(server *mcp.Server) {
	textResource := func(body string) mcp.ResourceHandler {
		return func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: req.Params.URI, MIMEType: "text/plain", Text: body}}}, nil
		}
	}
	server.AddResource(&mcp.Resource{Name: "static-text", Description: "A fixed text resource",
		MIMEType: "text/plain", URI: "test://static-text"},
		textResource("This is the content of the static text resource."))
	server.AddResource(&mcp.Resource{Name: "static-binary", Description: "A fixed PNG resource",
		MIMEType: "image/png", URI: "test://static-binary"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: req.Params.URI, MIMEType: "image/png", Blob: decoded(pngBase64)}}}, nil
		})
	server.AddResource(&mcp.Resource{Name: "watched-resource", Description: "A resource announced as updated every 3 seconds",
		MIMEType: "text/plain", URI: watchedURI},
		textResource("Watched resource content"))
	server.AddResourceTemplate(&mcp.ResourceTemplate{Name: "template", Description: "A resource per id",
		MIMEType: "application/json", URITemplate: templateURI},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			uri := req.Params.URI
			id, prefixed := strings.CutPrefix(uri, templatePrefix)
			id, suffixed := strings.CutSuffix(id, templateSuffix)
			if !prefixed || !suffixed || id == "" || strings.Contains(id, "/") {
				return nil, mcp.ResourceNotFoundError(uri)
			}
			body, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			if err != nil {
				return nil, fmt.Errorf("template resource %s: %w", uri, err)
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: uri, MIMEType: "application/json", Text: string(body)}}}, nil
		})
}

func addPrompts(server *mcp.Server) {
	message := func(c mcp.Content) *mcp.PromptMessage { return &mcp.PromptMessage{Role: "user", Content: c} }
	server.AddPrompt(&mcp.Prompt{Name: "test_simple_prompt", Description: "A prompt without arguments"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				message(&mcp.TextContent{Text: "This is a simple prompt for testing."})}}, nil
		})
	server.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with two required arguments",
		Arguments: []*mcp.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := req.Params.Arguments
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				message(&mcp.TextContent{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])})}}, nil
		})
	server.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt that embeds the resource it is given",
		Arguments: []*mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				message(&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
					URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."}}),
				message(&mcp.TextContent{Text: "Please process the embedded resource above."}),
			}}, nil
		})
	server.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				message(&mcp.ImageContent{Data: decoded(pngBase64), MIMEType: "image/png"}),
				message(&mcp.TextContent{Text: "Please analyze the image above."}),
			}}, nil
		})
}
