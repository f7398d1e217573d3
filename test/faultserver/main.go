// Command faultserver is a hand-written MCP server on stdio that misbehaves on
// request, for the end-to-end tests of "toolcap mcp" (cli/
// mcp_fault_test.go). It speaks newline-delimited JSON-RPC 2.0 with its own
// few lines of code, not an SDK, so that it can write what an SDK never would:
// results of a gigabyte, streamed in 64 KiB chunks (its own memory stays
// small), stray lines, half a message before dying.
//
// It answers initialize (echoing the client's protocolVersion, with
// capabilities tools{listChanged}, resources{} and logging{}), ping,
// tools/list, resources/list, resources/templates/list, resources/read and
// tools/call; other requests
// get -32601, notifications are read and ignored. Requests are answered one
// at a time, in the order they came, except a tools/call of ask, which waits
// for the client's answer on its own; each message is written whole, under
// one lock. The tools (arguments in
// braces, all optional):
//
//	big {bytes, blocks, id_last, structured, error}
//	    a result of `bytes` text bytes (default 1 MiB), the deterministic text
//	    of package fault, streamed. blocks > 1 splits it into that many text
//	    blocks, each the text of its own size (bytes/blocks, the last one
//	    takes the rest). id_last writes "id" after "result", as the TypeScript
//	    SDK does. structured adds structuredContent {"content": the same text}
//	    (one block only). error answers with a JSON-RPC error -32000 whose
//	    message is the text instead.
//	flood {progress}       that many notifications/progress (progress 1..N,
//	    total N, the call's _meta.progressToken) with a notifications/message
//	    (level info, data "log K") after every 100th, then "flood done N".
//	stray                  the line "debug: hello", then a line of broken
//	    JSON, then "stray done".
//	crash                  the first half of a result, then exit status 3.
//	spawn                  starts a grandchild (this program with -grandchild)
//	    that ignores SIGTERM and sleeps for two minutes; the result's text is
//	    its pid in decimal.
//	listchanged {n}        n notifications/tools/list_changed, then
//	    "listchanged done N".
//	echo {text}            text back in one block.
//	nonmcp                 the result fault.NonMCPResult, byte for byte.
//	ask {method}           sends the request method (default roots/list,
//	    params {}) to the client and waits 5 s for its answer; the text is the
//	    answer's result (or error) exactly as received; isError when there
//	    was no answer.
//	stats                  the counts of requests received so far, by method,
//	    as a JSON object in the text.
//
// resources/list lists big://N for N = 1024, 50000, 200000 and 20000000,
// resources/templates/list the template big://{bytes}; resources/read of
// big://N (any N) answers
// {"contents":[{"uri":"big://N","mimeType":"text/plain","text":...}]} with N
// bytes of the same text, streamed.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/toolcap/toolcap/internal/fault"
)

// message is any JSON-RPC message; which fields are set tells its kind.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// server writes messages to out whole, one at a time, and routes the
// client's answers to the requests it sent.
type server struct {
	mu  sync.Mutex
	out *bufio.Writer

	pmu     sync.Mutex
	pending map[string]chan message
	next    int
	counts  map[string]int

	// running counts the requests being answered, so that the server
	// finishes them after the client closed its side.
	running sync.WaitGroup
}

func main() {
	grandchild := flag.Bool("grandchild", false, "be the grandchild of the spawn tool: ignore SIGTERM, say ready, sleep")
	flag.Parse()
	if *grandchild {
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		time.Sleep(2 * time.Minute)
		return
	}
	s := &server{
		out:     bufio.NewWriterSize(os.Stdout, 64<<10),
		pending: map[string]chan message{},
		counts:  map[string]int{},
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			s.dispatch(line)
		}
		if err != nil {
			// The client closed stdin: a polite server finishes what it
			// was asked and exits.
			s.running.Wait()
			return
		}
	}
}

func (s *server) dispatch(line []byte) {
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		fmt.Fprintf(os.Stderr, "faultserver: bad message from the client: %v\n", err)
		return
	}
	switch {
	case m.Method != "" && m.ID != nil:
		s.pmu.Lock()
		s.counts[m.Method]++
		s.pmu.Unlock()
		var call struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(m.Params, &call)
		if m.Method == "tools/call" && call.Name == "ask" {
			// ask waits for the client's answer, which this loop reads.
			s.running.Go(func() { s.request(m) })
		} else {
			s.request(m)
		}
	case m.Method == "" && m.ID != nil:
		s.pmu.Lock()
		ch := s.pending[string(m.ID)]
		delete(s.pending, string(m.ID))
		s.pmu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

// send writes one message, built by write, and a newline, then flushes.
func (s *server) send(write func(w *bufio.Writer) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := write(s.out); err != nil {
		fatal(err)
	}
	s.out.WriteByte('\n')
	if err := s.out.Flush(); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "faultserver: %v\n", err)
	os.Exit(1)
}

// reply sends the result for id, JSON-encoding v unless it is raw JSON.
func (s *server) reply(id json.RawMessage, v any) {
	raw, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			fatal(err)
		}
	}
	s.send(func(w *bufio.Writer) error {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, raw)
		return nil
	})
}

func (s *server) replyError(id json.RawMessage, code int, msg string) {
	s.send(func(w *bufio.Writer) error {
		m, _ := json.Marshal(msg)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id, code, m)
		return nil
	})
}

func (s *server) notify(method string, params any) {
	p, err := json.Marshal(params)
	if err != nil {
		fatal(err)
	}
	s.send(func(w *bufio.Writer) error {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","method":%q,"params":%s}`, method, p)
		return nil
	})
}

func text(s string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
}

func (s *server) request(m message) {
	switch m.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(m.Params, &p)
		s.reply(m.ID, map[string]any{
			"protocolVersion": p.ProtocolVersion,
			"capabilities": map[string]any{
				"tools":     map[string]any{"listChanged": true},
				"resources": map[string]any{},
				"logging":   map[string]any{},
			},
			"serverInfo": map[string]any{"name": "faultserver", "version": "1"},
		})
	case "ping":
		s.reply(m.ID, json.RawMessage(`{}`))
	case "tools/list":
		s.reply(m.ID, map[string]any{"tools": toolList()})
	case "resources/list":
		var list []any
		for _, n := range listedResources {
			list = append(list, map[string]any{"uri": "big://" + strconv.Itoa(n), "name": "big " + strconv.Itoa(n), "mimeType": "text/plain"})
		}
		s.reply(m.ID, map[string]any{"resources": list})
	case "resources/templates/list":
		s.reply(m.ID, map[string]any{"resourceTemplates": []any{
			map[string]any{"uriTemplate": "big://{bytes}", "name": "big", "mimeType": "text/plain"},
		}})
	case "resources/read":
		s.readResource(m)
	case "tools/call":
		s.call(m)
	default:
		s.replyError(m.ID, -32601, "method not found: "+m.Method)
	}
}

// listedResources are the sizes of the big:// resources resources/list
// names (any size can be read).
var listedResources = []int{1024, 50_000, 200_000, 20_000_000}

// toolList is the tools, in this order, each with an object input schema.
func toolList() []any {
	var tools []any
	for _, t := range []struct{ name, desc string }{
		{"big", "a big deterministic text result, streamed"},
		{"flood", "progress notifications, then a result"},
		{"stray", "non-JSON lines on stdout, then a result"},
		{"crash", "half a result, then exit status 3"},
		{"spawn", "a grandchild that ignores SIGTERM"},
		{"listchanged", "tools/list_changed notifications, then a result"},
		{"echo", "its text back"},
		{"nonmcp", "a result with fields MCP does not define"},
		{"ask", "a request to the client, then its answer"},
		{"stats", "requests received, by method"},
	} {
		tools = append(tools, map[string]any{
			"name":        t.name,
			"description": t.desc,
			"inputSchema": map[string]any{"type": "object"},
		})
	}
	return tools
}

type callParams struct {
	Name      string `json:"name"`
	Arguments struct {
		Bytes      *int64 `json:"bytes"`
		Blocks     int64  `json:"blocks"`
		IDLast     bool   `json:"id_last"`
		Structured bool   `json:"structured"`
		Error      bool   `json:"error"`
		Progress   int    `json:"progress"`
		N          int    `json:"n"`
		Text       string `json:"text"`
		Method     string `json:"method"`
	} `json:"arguments"`
	Meta struct {
		ProgressToken json.RawMessage `json:"progressToken"`
	} `json:"_meta"`
}

func (s *server) call(m message) {
	var p callParams
	if err := json.Unmarshal(m.Params, &p); err != nil {
		s.replyError(m.ID, -32602, err.Error())
		return
	}
	a := p.Arguments
	switch p.Name {
	case "big":
		n := int64(1 << 20)
		if a.Bytes != nil {
			n = *a.Bytes
		}
		s.big(m.ID, n, max(1, a.Blocks), a.IDLast, a.Structured, a.Error)
	case "flood":
		token := p.Meta.ProgressToken
		if token == nil {
			token = json.RawMessage(`"no-token"`)
		}
		for i := 1; i <= a.Progress; i++ {
			s.notify("notifications/progress", map[string]any{
				"progressToken": token, "progress": i, "total": a.Progress, "message": "step " + strconv.Itoa(i),
			})
			if i%100 == 0 {
				s.notify("notifications/message", map[string]any{
					"level": "info", "logger": "faultserver", "data": "log " + strconv.Itoa(i/100),
				})
			}
		}
		s.reply(m.ID, text("flood done "+strconv.Itoa(a.Progress)))
	case "stray":
		s.send(func(w *bufio.Writer) error {
			_, err := w.WriteString("debug: hello")
			return err
		})
		s.send(func(w *bufio.Writer) error {
			_, err := w.WriteString(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":`)
			return err
		})
		s.reply(m.ID, text("stray done"))
	case "crash":
		s.mu.Lock()
		fmt.Fprintf(s.out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"half a res`, m.ID)
		_ = s.out.Flush()
		os.Exit(3)
	case "spawn":
		pid, err := spawn()
		if err != nil {
			s.reply(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": err.Error()}}, "isError": true})
			return
		}
		s.reply(m.ID, text(strconv.Itoa(pid)))
	case "listchanged":
		for range a.N {
			s.send(func(w *bufio.Writer) error {
				_, err := w.WriteString(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
				return err
			})
		}
		s.reply(m.ID, text("listchanged done "+strconv.Itoa(a.N)))
	case "echo":
		s.reply(m.ID, text(a.Text))
	case "nonmcp":
		s.reply(m.ID, json.RawMessage(fault.NonMCPResult))
	case "ask":
		s.ask(m.ID, a.Method)
	case "stats":
		s.pmu.Lock()
		b, _ := json.Marshal(s.counts)
		s.pmu.Unlock()
		s.reply(m.ID, text(string(b)))
	default:
		s.replyError(m.ID, -32602, "unknown tool: "+p.Name)
	}
}

// big streams a result (or error) of n text bytes in blocks.
func (s *server) big(id json.RawMessage, n, blocks int64, idLast, structured, isErr bool) {
	s.send(func(w *bufio.Writer) error {
		w.WriteString(`{"jsonrpc":"2.0",`)
		if !idLast {
			fmt.Fprintf(w, `"id":%s,`, id)
		}
		if isErr {
			w.WriteString(`"error":{"code":-32000,"message":"`)
			if err := fault.WriteJSON(w, n); err != nil {
				return err
			}
			w.WriteString(`"}`)
		} else {
			w.WriteString(`"result":{"content":[`)
			per := n / blocks
			for b := range blocks {
				size := per
				if b == blocks-1 {
					size = n - per*(blocks-1)
				}
				if b > 0 {
					w.WriteByte(',')
				}
				w.WriteString(`{"type":"text","text":"`)
				if err := fault.WriteJSON(w, size); err != nil {
					return err
				}
				w.WriteString(`"}`)
			}
			w.WriteString(`]`)
			if structured {
				w.WriteString(`,"structuredContent":{"content":"`)
				if err := fault.WriteJSON(w, n); err != nil {
					return err
				}
				w.WriteString(`"}`)
			}
			w.WriteString(`}`)
		}
		if idLast {
			fmt.Fprintf(w, `,"id":%s`, id)
		}
		_, err := w.WriteString(`}`)
		return err
	})
}

func (s *server) readResource(m message) {
	var p struct {
		URI string `json:"uri"`
	}
	_ = json.Unmarshal(m.Params, &p)
	size, ok := strings.CutPrefix(p.URI, "big://")
	n, err := strconv.ParseInt(size, 10, 64)
	if !ok || err != nil || n < 0 {
		s.replyError(m.ID, -32002, "resource not found: "+p.URI)
		return
	}
	s.send(func(w *bufio.Writer) error {
		uri, _ := json.Marshal(p.URI)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"contents":[{"uri":%s,"mimeType":"text/plain","text":"`, m.ID, uri)
		if err := fault.WriteJSON(w, n); err != nil {
			return err
		}
		_, err := w.WriteString(`"}]}}`)
		return err
	})
}

// ask sends method to the client and answers id with what came back.
func (s *server) ask(id json.RawMessage, method string) {
	if method == "" {
		method = "roots/list"
	}
	s.pmu.Lock()
	s.next++
	reqID := json.RawMessage(strconv.Quote("ask-" + strconv.Itoa(s.next)))
	ch := make(chan message, 1)
	s.pending[string(reqID)] = ch
	s.pmu.Unlock()
	s.send(func(w *bufio.Writer) error {
		m, _ := json.Marshal(method)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"method":%s,"params":{}}`, reqID, m)
		return nil
	})
	select {
	case ans := <-ch:
		got := ans.Result
		if got == nil {
			got = ans.Error
		}
		s.reply(id, text(string(got)))
	case <-time.After(5 * time.Second):
		s.pmu.Lock()
		delete(s.pending, string(reqID))
		s.pmu.Unlock()
		s.reply(id, map[string]any{"content": []any{map[string]any{"type": "text", "text": "no answer to " + method}}, "isError": true})
	}
}

// spawn starts the grandchild, waits until it ignores SIGTERM, and returns
// its pid. It shares this process's group and none of its stdio.
func spawn() (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(exe, "-grandchild")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		return 0, fmt.Errorf("the grandchild did not get ready: %q, %v", line, err)
	}
	// Keep reading so that the grandchild never blocks on a full pipe; its
	// Wait is never called: it is meant to outlive this process.
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return cmd.Process.Pid, nil
}
