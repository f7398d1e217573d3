package mcpproxy

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	testParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	newParent  = "00-4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111-01"
)

// TestWithTrace: the trace context goes into params._meta whatever the
// request holds: no params, params without _meta, empty objects, a
// traceparent to replace, spaces and escapes, members in any order; the
// rest of the message as it came.
func TestWithTrace(t *testing.T) {
	tests := []struct {
		name, msg     string
		parent, state string
		want          string // "": the message cannot take it
	}{
		{"no params", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, newParent, "",
			`{"params":{"_meta":{"traceparent":"` + newParent + `"}},"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"empty params", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}`, newParent, "a=1",
			`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"traceparent":"` + newParent + `","tracestate":"a=1"}}}`},
		{"params without _meta", `{"id":1,"method":"tools/call","params":{"name":"x","arguments":{"_meta":1}}}`, newParent, "",
			`{"id":1,"method":"tools/call","params":{"_meta":{"traceparent":"` + newParent + `"},"name":"x","arguments":{"_meta":1}}}`},
		{"empty _meta", `{"id":1,"method":"m","params":{"_meta":{}}}`, newParent, "",
			`{"id":1,"method":"m","params":{"_meta":{"traceparent":"` + newParent + `"}}}`},
		{"other members", `{"id":1,"method":"m","params":{"_meta":{"progressToken":7}}}`, newParent, "",
			`{"id":1,"method":"m","params":{"_meta":{"traceparent":"` + newParent + `","progressToken":7}}}`},
		{"replaced", `{"id":1,"method":"m","params":{"_meta":{"tracestate":"a=1", "traceparent" : "` + testParent + `"}}}`, newParent, "a=1",
			`{"id":1,"method":"m","params":{"_meta":{"tracestate":"a=1", "traceparent" : "` + newParent + `"}}}`},
		{"state replaced", `{"id":1,"method":"m","params":{"_meta":{"traceparent":"` + testParent + `","tracestate":"a=1"}}}`, newParent, "b=2,a=1",
			`{"id":1,"method":"m","params":{"_meta":{"traceparent":"` + newParent + `","tracestate":"b=2,a=1"}}}`},
		{"spaces and escapes", "{ \"id\" : \"x\\\"}\" ,\n\"params\" : { \"a\\u0062\" : [1, {\"}\": \"]\"}], \"_meta\" : { } } }", newParent, "",
			"{ \"id\" : \"x\\\"}\" ,\n\"params\" : { \"a\\u0062\" : [1, {\"}\": \"]\"}], \"_meta\" : {\"traceparent\":\"" + newParent + "\" } } }"},
		{"params not an object", `{"id":1,"method":"m","params":[1]}`, newParent, "", ""},
		{"_meta not an object", `{"id":1,"method":"m","params":{"_meta":null}}`, newParent, "", ""},
		{"not JSON", `{"id":1,"method":`, newParent, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms := scanMeta([]byte(tt.msg))
			got := string(ms.withTrace([]byte(tt.msg), tt.parent, tt.state))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("withTrace(%s) (-want +got):\n%s", tt.msg, diff)
			}
			if got != "" && !json.Valid([]byte(got)) {
				t.Errorf("withTrace(%s) is not valid JSON: %s", tt.msg, got)
			}
		})
	}
}

// TestScanMeta: the members of _meta the tracing reads, and only from
// params._meta.
func TestScanMeta(t *testing.T) {
	msg := `{"traceparent":"top","params":{"arguments":{"_meta":{"traceparent":"args"}},"_meta":{"traceparent":"` + testParent +
		`","baggage":"k=v","io.modelcontextprotocol/protocolVersion":"2026-07-28","tracestate":"a\u003d1"}},"id":1}`
	ms := scanMeta([]byte(msg))
	got := map[string]string{}
	for _, k := range metaKeys {
		got[k] = ms.value(k)
	}
	want := map[string]string{"traceparent": testParent, "tracestate": "a=1", "baggage": "k=v", metaProtocolVersion: "2026-07-28"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scanMeta (-want +got):\n%s", diff)
	}
}

// TestHeaderTrace: a POST's trace headers go into the message's _meta when
// it has no trace context of its own; the message's own wins.
func TestHeaderTrace(t *testing.T) {
	h := http.Header{}
	h.Set("Traceparent", testParent)
	h.Set("Tracestate", "a=1")
	h.Set("Baggage", "k=v")
	tests := []struct{ name, body, want string }{
		{"added", `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
			`{"params":{"_meta":{"baggage":"k=v","traceparent":"` + testParent + `","tracestate":"a=1"}},"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"the message's own", `{"id":1,"method":"m","params":{"_meta":{"traceparent":"` + newParent + `"}}}`,
			`{"id":1,"method":"m","params":{"_meta":{"traceparent":"` + newParent + `"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, string(withHeaderTrace([]byte(tt.body), h))); diff != "" {
				t.Errorf("withHeaderTrace (-want +got):\n%s", diff)
			}
		})
	}
	if got := string(withHeaderTrace([]byte(tests[0].body), http.Header{})); got != tests[0].body {
		t.Errorf("without headers: %s, want the body as it came", got)
	}

	up := http.Header{}
	setTraceHeaders(up, []byte(tests[0].want))
	if diff := cmp.Diff(http.Header{"Traceparent": {testParent}, "Tracestate": {"a=1"}, "Baggage": {"k=v"}}, up); diff != "" {
		t.Errorf("setTraceHeaders (-want +got):\n%s", diff)
	}
}
