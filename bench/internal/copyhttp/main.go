// Command copyhttp is the floor of the --listen latency benchmark
// (bench/mcphttp_test.go): the least an HTTP front end to an MCP server
// over stdio does, so that what HTTP itself costs on the machine is
// measured beside toolcap mcp --listen. It runs the server as a command
// when an initialize request starts a session (one process per session,
// named by the Mcp-Session-Id header of the answer), writes each POST's
// body to the server's standard input as one line, and answers a request
// with the server's response of its id, as application/json; a
// notification or a response is answered 202. Nothing is checked beyond
// what finding a response by its id takes: no bounds, no streams (GET is
// answered 405, which tells a client there is no stream to open), and the
// server's messages other than responses are dropped.
//
// A request of MCP's stateless revision (no Mcp-Session-Id, an
// MCP-Protocol-Version of 2026-07-28 or later) goes to one server process
// shared by every such request, started by the first, under the client's
// own id: the floor of toolcap mcp --listen's lanes for one client at a
// time (two clients using the same id at once would get each other's
// answers; the benchmark's one client never does).
//
// With -url UPSTREAM it is instead a reverse proxy to the MCP endpoint
// UPSTREAM (net/http/httputil, each response flushed as it comes): the
// least an HTTP front end to an HTTP server does, the floor of toolcap mcp
// --listen --url.
//
//	copyhttp -http ADDR SERVER_COMMAND [ARGS...]
//	copyhttp -http ADDR -url UPSTREAM
//
// It names where it serves on its standard error ("serving
// http://127.0.0.1:PORT/mcp") once it listens.
package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"sync"
)

const sessionHeader = "Mcp-Session-Id"

func main() {
	addr := flag.String("http", "127.0.0.1:0", "serve streamable HTTP on `ADDR` (host:port)")
	upstream := flag.String("url", "", "reverse-proxy to the MCP endpoint `UPSTREAM` instead of running a command")
	flag.Parse()
	var handler http.Handler
	switch {
	case *upstream != "" && flag.NArg() == 0:
		u, err := url.Parse(*upstream)
		if err != nil {
			log.Fatal(err)
		}
		rp := &httputil.ReverseProxy{
			Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(u); r.Out.URL.Path = u.Path },
			FlushInterval: -1, // an event stream's events as they come
		}
		handler = rp
	case *upstream == "" && flag.NArg() > 0:
		handler = &front{argv: flag.Args(), sessions: map[string]*session{}}
	default:
		log.Fatal("usage: copyhttp -http ADDR SERVER_COMMAND [ARGS...] | copyhttp -http ADDR -url UPSTREAM")
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	fmt.Fprintf(os.Stderr, "serving http://%s/mcp\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}

// front serves every session.
type front struct {
	argv     []string
	mu       sync.Mutex
	sessions map[string]*session
	shared   *session // the stateless requests' server; nil until the first
}

// session is one server process and the requests waiting for its
// responses, by id (as JSON).
type session struct {
	cmd  *exec.Cmd
	inMu sync.Mutex
	in   io.WriteCloser

	mu      sync.Mutex
	pending map[string]chan []byte
	ended   bool
	read    chan struct{} // closed once the server's output has ended
}

// envelope is what the front reads of a message: enough to tell a request
// from a notification and to match a response.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		f.post(w, r)
	case http.MethodDelete:
		id := r.Header.Get(sessionHeader)
		f.mu.Lock()
		s := f.sessions[id]
		delete(f.sessions, id)
		f.mu.Unlock()
		if s == nil {
			http.Error(w, "unknown session", http.StatusNotFound)
			return
		}
		s.stop()
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (f *front) post(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	body = bytes.TrimSpace(body)
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		http.Error(w, "not one JSON-RPC message: "+err.Error(), http.StatusBadRequest)
		return
	}
	var s *session
	if id := r.Header.Get(sessionHeader); id != "" {
		f.mu.Lock()
		s = f.sessions[id]
		f.mu.Unlock()
		if s == nil {
			http.Error(w, "unknown session", http.StatusNotFound)
			return
		}
	} else if v := r.Header.Get("Mcp-Protocol-Version"); v >= "2026-07-28" {
		if s, err = f.stateless(); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
	} else {
		if env.Method != "initialize" {
			http.Error(w, "missing "+sessionHeader, http.StatusBadRequest)
			return
		}
		if s, err = f.start(); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		id := rand.Text()
		f.mu.Lock()
		f.sessions[id] = s
		f.mu.Unlock()
		w.Header().Set(sessionHeader, id)
	}
	if env.ID == nil || env.Method == "" {
		// A notification, or a response to the server: nothing comes back.
		if err := s.send(body); err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	answer := make(chan []byte, 1)
	key := string(env.ID)
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		http.Error(w, "the session ended", http.StatusNotFound)
		return
	}
	s.pending[key] = answer
	s.mu.Unlock()
	if err := s.send(body); err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	select {
	case msg, ok := <-answer:
		if !ok {
			http.Error(w, "the session ended", http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(msg)
	case <-r.Context().Done():
		s.mu.Lock()
		delete(s.pending, key)
		s.mu.Unlock()
	}
}

// stateless returns the server of the stateless requests, started by the
// first (again, if the last one ended).
func (f *front) stateless() (*session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shared != nil {
		f.shared.mu.Lock()
		ended := f.shared.ended
		f.shared.mu.Unlock()
		if !ended {
			return f.shared, nil
		}
	}
	s, err := f.start()
	if err != nil {
		return nil, err
	}
	f.shared = s
	return s, nil
}

// start runs a server for a new session.
func (f *front) start() (*session, error) {
	cmd := exec.Command(f.argv[0], f.argv[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &session{cmd: cmd, in: in, pending: map[string]chan []byte{}, read: make(chan struct{})}
	go s.readFrom(out)
	return s, nil
}

// send writes msg to the server as one line. The body's newlines, which
// JSON allows only as whitespace, would split it: they become spaces.
func (s *session) send(msg []byte) error {
	for i, c := range msg {
		if c == '\n' {
			msg[i] = ' '
		}
	}
	s.inMu.Lock()
	defer s.inMu.Unlock()
	if _, err := s.in.Write(append(msg, '\n')); err != nil {
		return err
	}
	return nil
}

// readFrom hands each response of the server's to the request waiting
// for it.
func (s *session) readFrom(out io.Reader) {
	defer close(s.read)
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var env envelope
		if json.Unmarshal(line, &env) != nil || env.ID == nil || env.Method != "" {
			continue // not a response
		}
		s.mu.Lock()
		answer := s.pending[string(env.ID)]
		delete(s.pending, string(env.ID))
		s.mu.Unlock()
		if answer != nil {
			answer <- bytes.Clone(line)
		}
	}
	s.mu.Lock()
	s.ended = true
	for id, answer := range s.pending {
		close(answer)
		delete(s.pending, id)
	}
	s.mu.Unlock()
}

// stop ends the server: its input closed, then its output read to the
// end (Wait closes the pipe), then the process waited for.
func (s *session) stop() {
	s.inMu.Lock()
	_ = s.in.Close()
	s.inMu.Unlock()
	<-s.read
	_ = s.cmd.Wait()
}
