// Command mcpcall is the host's side of test/container/check.sh: it calls
// the tool "text" of the server behind a toolcap mcp --listen URL over
// streamable HTTP (MCP 2025-11-25: initialize, then the call in the
// session), and prints the length in bytes of the text the client
// receives, then that text's last line. It uses the standard library
// only, so that the check needs nothing but Go on the host.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	url := flag.String("url", "", "the proxy's `URL`, http://HOST:PORT/mcp")
	n := flag.Int("bytes", 40000, "the size of the text the tool returns")
	flag.Parse()
	if err := run(*url, *n); err != nil {
		fmt.Fprintln(os.Stderr, "mcpcall:", err)
		os.Exit(1)
	}
}

func run(url string, n int) error {
	c := &http.Client{Timeout: 30 * time.Second}
	session := ""
	post := func(body string) (json.RawMessage, error) {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
			session = s
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode/100 != 2 {
			return nil, fmt.Errorf("POST %s: %s: %s", url, resp.Status, b)
		}
		if resp.StatusCode == http.StatusAccepted || len(b) == 0 {
			return nil, nil
		}
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			// The response is the last data line that holds one.
			var last []byte
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(nil, 1<<24)
			for sc.Scan() {
				if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok && bytes.Contains(d, []byte(`"id"`)) {
					last = append([]byte(nil), d...)
				}
			}
			b = last
		}
		var m struct {
			Result json.RawMessage
			Error  json.RawMessage
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("the answer %.200q: %v", b, err)
		}
		if m.Error != nil {
			return nil, fmt.Errorf("error: %s", m.Error)
		}
		return m.Result, nil
	}
	if _, err := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpcall","version":"1"}}}`); err != nil {
		return err
	}
	if _, err := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return err
	}
	raw, err := post(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"text","arguments":{"bytes":%d}}}`, n))
	if err != nil {
		return err
	}
	var res struct {
		Content []struct{ Text string }
	}
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Content) == 0 {
		return fmt.Errorf("the result %.200q: no content (%v)", raw, err)
	}
	text := res.Content[0].Text
	fmt.Println(len(text))
	fmt.Println(text[strings.LastIndexByte(text, '\n')+1:])
	return nil
}
