package mcpproxy_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/mcpproxy"
)

// TestHTTPAnswersJSON: a POST of one request whose response is the
// server's first message about it within JSONWait is answered with that
// response alone, as application/json with its length; a log line before
// the response, a response later than JSONWait, a batch (whose answer
// would be an array), or a negative JSONWait make the answer a stream of
// events, as before, with its priming event for 2025-11-25.
func TestHTTPAnswersJSON(t *testing.T) {
	// Long enough that a quick answer is never late, however loaded the
	// machine; the slow server is late for the short one whatever it is.
	const wait, short = 10 * time.Second, 50 * time.Millisecond
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}`
	up := &hsUpstream{script: func(req hsRequest) []string {
		switch req.Method {
		case "noisy":
			return []string{note, hsResult(req.ID)}
		case "slow":
			time.Sleep(6 * short)
		}
		return nil
	}}
	p := hsProxy(t, nil)
	_, hs := hsServe(t, p, mcpproxy.HTTPOptions{Dial: up.dial, JSONWait: wait})
	_, always := hsServe(t, p, mcpproxy.HTTPOptions{Dial: up.dial, JSONWait: -1})
	_, batches := hsServe(t, p, mcpproxy.HTTPOptions{Dial: batchUpstream, JSONWait: wait})
	_, late := hsServe(t, p, mcpproxy.HTTPOptions{Dial: up.dial, JSONWait: short})

	type answer struct {
		ContentType string
		Length      bool     // a Content-Length that is the body's
		Primed      bool     // the first event is a priming event
		IDs         []string // of the messages answered, "" for one without
	}
	jsonAnswer := func(id string) answer {
		return answer{ContentType: "application/json", Length: true, IDs: []string{id}}
	}
	post := func(t *testing.T, url, session, body, version string) (answer, string) {
		t.Helper()
		resp := hsPost(t, url, session, body, func(r *http.Request) {
			if version != "" {
				r.Header.Set("Mcp-Protocol-Version", version)
			}
		})
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %s, want 200: %.200s", resp.Status, raw)
		}
		got := answer{ContentType: resp.Header.Get("Content-Type")}
		got.Length = resp.Header.Get("Content-Length") == strconv.Itoa(len(raw))
		var msgs []string
		if got.ContentType == "application/json" {
			msgs = []string{string(raw)}
		} else {
			for i, ev := range strings.Split(strings.TrimSuffix(string(raw), "\n\n"), "\n\n") {
				at := strings.Index(ev, "data: ")
				if at < 0 {
					t.Fatalf("an event without data: %q", ev)
				}
				d := ev[at+len("data: "):]
				if i == 0 && strings.HasPrefix(ev, "id: ") && d == "" {
					got.Primed = true
					continue
				}
				msgs = append(msgs, d)
			}
		}
		for _, m := range msgs {
			var env struct{ ID json.RawMessage }
			if err := json.Unmarshal([]byte(m), &env); err != nil {
				t.Fatalf("a message that is not JSON: %.200q", m)
			}
			got.IDs = append(got.IDs, string(env.ID))
		}
		return got, resp.Header.Get("Mcp-Session-Id")
	}

	init, session := post(t, hs.URL, "", hsInit, "")
	if diff := cmp.Diff(jsonAnswer("1"), init); diff != "" || session == "" {
		t.Fatalf("the answer to initialize (-want +got):\n%s\nsession %q", diff, session)
	}
	sessions := map[string]string{hs.URL: session}
	for _, url := range []string{always.URL, batches.URL, late.URL} {
		_, sessions[url] = post(t, url, "", hsInit, "")
	}

	for _, tc := range []struct {
		name    string
		url     string
		body    string
		version string
		want    answer
	}{
		{"response first", hs.URL, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, "2025-06-18", jsonAnswer("2")},
		{"response first, 2025-11-25", hs.URL, `{"jsonrpc":"2.0","id":"x","method":"ping"}`, "2025-11-25", jsonAnswer(`"x"`)},
		{"log line first", hs.URL, `{"jsonrpc":"2.0","id":3,"method":"noisy"}`, "2025-06-18",
			answer{ContentType: "text/event-stream", IDs: []string{"", "3"}}},
		{"log line first, 2025-11-25", hs.URL, `{"jsonrpc":"2.0","id":4,"method":"noisy"}`, "2025-11-25",
			answer{ContentType: "text/event-stream", Primed: true, IDs: []string{"", "4"}}},
		{"slower than JSONWait", late.URL, `{"jsonrpc":"2.0","id":5,"method":"slow"}`, "2025-11-25",
			answer{ContentType: "text/event-stream", Primed: true, IDs: []string{"5"}}},
		{"batch of one", batches.URL, `[{"jsonrpc":"2.0","id":6,"method":"ping"}]`, "2025-03-26",
			answer{ContentType: "text/event-stream", IDs: []string{"6"}}},
		{"negative JSONWait", always.URL, `{"jsonrpc":"2.0","id":7,"method":"ping"}`, "2025-06-18",
			answer{ContentType: "text/event-stream", IDs: []string{"7"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := post(t, tc.url, sessions[tc.url], tc.body, tc.version)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("the answer (-want +got):\n%s", diff)
			}
		})
	}
}
