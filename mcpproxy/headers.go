package mcpproxy

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// MCP's stateless revision mirrors a request's method, its name (the
// tool, prompt or resource it is about) and the tool arguments its schema
// marks x-mcp-header in HTTP headers (SEP-2243), so that what routes HTTP
// need not read the body. When the proxy is the HTTP server its clients
// reach (a server over stdio behind it), it checks them as the go-sdk's
// server does: a header that disagrees with the body, or one missing, is
// refused with -32020 and 400 before the request goes anywhere.

// paramBinding is one x-mcp-header annotation of a tool's input schema:
// the argument at path goes in the header Mcp-Param-<header>.
type paramBinding struct {
	path   []string
	header string
}

// schemaProperty is what x-mcp-header needs of an input schema.
type schemaProperty struct {
	XMCPHeader json.RawMessage           `json:"x-mcp-header"`
	Properties map[string]schemaProperty `json:"properties"`
}

// paramBindings returns the x-mcp-header annotations of an input schema.
func paramBindings(schema json.RawMessage) []paramBinding {
	if len(schema) == 0 || !strings.Contains(string(schema), "x-mcp-header") {
		return nil
	}
	var s schemaProperty
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	return collectBindings(s.Properties, nil, nil)
}

func collectBindings(props map[string]schemaProperty, prefix []string, out []paramBinding) []paramBinding {
	for name, p := range props {
		path := append(append([]string(nil), prefix...), name)
		var header string
		if json.Unmarshal(p.XMCPHeader, &header) == nil && header != "" {
			out = append(out, paramBinding{path: path, header: header})
		}
		if len(p.Properties) > 0 {
			out = collectBindings(p.Properties, path, out)
		}
	}
	return out
}

// setParamBindings records the x-mcp-header annotations of tool, from a
// tools/list that passed through.
func (p *Proxy) setParamBindings(tool string, b []paramBinding) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if b == nil {
		delete(p.params, tool)
		return
	}
	if p.params == nil {
		p.params = map[string][]paramBinding{}
	}
	p.params[tool] = b
}

func (p *Proxy) paramBindingsOf(tool string) []paramBinding {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.params[tool]
}

// validateHeaders checks a stateless message's MCP headers against its
// body, in the order the go-sdk's server does; nil when they agree. A
// notification has its method checked alone (it has no _meta to check);
// a response nothing.
func (h *HTTPHandler) validateHeaders(r *http.Request, msg []byte, env *message) *requestError {
	switch {
	case env.isNotification():
		return checkMethodHeader(r, env)
	case !env.isRequest():
		return nil
	}
	headerVersion := r.Header.Get(versionHeader)
	var req struct {
		Params struct {
			Meta      map[string]json.RawMessage `json:"_meta"`
			Name      *string                    `json:"name"`
			URI       *string                    `json:"uri"`
			Arguments map[string]json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	_ = json.Unmarshal(msg, &req)
	var metaVersion string
	_ = json.Unmarshal(req.Params.Meta[metaProtocolVersion], &metaVersion)
	bad := func(code int, format string, args ...any) *requestError {
		return &requestError{status: http.StatusBadRequest, code: code, msg: "toolcap: " + fmt.Sprintf(format, args...)}
	}
	if headerVersion == "" {
		return bad(codeHeaderMismatch, "the %s header is required for requests carrying %q", versionHeader, metaProtocolVersion)
	}
	if metaVersion == "" {
		return bad(codeInvalidParams, "missing or invalid _meta field %q", metaProtocolVersion)
	}
	if headerVersion != metaVersion {
		return bad(codeHeaderMismatch, "the %s header %q does not match the request's %s %q", versionHeader, headerVersion, metaProtocolVersion, metaVersion)
	}
	if e := checkMethodHeader(r, env); e != nil {
		return e
	}
	name, named := requestName(env.method, req.Params.Name, req.Params.URI)
	if !named {
		return nil
	}
	inHeader := r.Header.Get(nameHeader)
	if inHeader == "" {
		return bad(codeHeaderMismatch, "missing required %s header for method %q", nameHeader, env.method)
	}
	if name == nil || *name != inHeader {
		body := ""
		if name != nil {
			body = *name
		}
		return bad(codeHeaderMismatch, "the %s header %q does not match the body's %q", nameHeader, inHeader, body)
	}
	if env.method != "tools/call" {
		return nil
	}
	for _, b := range h.p.paramBindingsOf(*name) {
		full := paramHeaderPrefix + b.header
		value := r.Header.Get(full)
		arg, ok := lookupArgument(req.Params.Arguments, b.path)
		path := strings.Join(b.path, ".")
		if !ok || string(arg) == "null" {
			if value != "" {
				return bad(codeHeaderMismatch, "unexpected %s header for the absent or null argument %q", full, path)
			}
			continue
		}
		if value == "" {
			return bad(codeHeaderMismatch, "missing %s header for the argument %q", full, path)
		}
		decoded, ok := decodeHeaderValue(value)
		if !ok {
			return bad(codeHeaderMismatch, "the %s header holds invalid Base64", full)
		}
		if !headerMatches(decoded, arg) {
			return bad(codeHeaderMismatch, "the %s header %q does not match the argument %q", full, value, path)
		}
	}
	return nil
}

// checkMethodHeader checks that Mcp-Method names the body's method.
func checkMethodHeader(r *http.Request, env *message) *requestError {
	method := r.Header.Get(methodHeader)
	if method == env.method {
		return nil
	}
	why := fmt.Sprintf("toolcap: the %s header %q does not match the body's method %q", methodHeader, method, env.method)
	if method == "" {
		why = "toolcap: missing required " + methodHeader + " header"
	}
	return &requestError{status: http.StatusBadRequest, code: codeHeaderMismatch, msg: why}
}

// requestName returns what Mcp-Name mirrors of a request of method, given
// its params' name and uri: the name of a tools/call or a prompts/get, the
// uri of a resources/read (nil when the params lack it); named is false
// for any other method, which has no Mcp-Name.
func requestName(method string, name, uri *string) (_ *string, named bool) {
	switch method {
	case "tools/call", "prompts/get":
		return name, true
	case "resources/read":
		return uri, true
	}
	return nil, false
}

// lookupArgument returns the argument at path in args.
func lookupArgument(args map[string]json.RawMessage, path []string) (json.RawMessage, bool) {
	cur, ok := args[path[0]]
	for _, part := range path[1:] {
		if !ok {
			return nil, false
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(cur, &obj) != nil {
			return nil, false
		}
		cur, ok = obj[part]
	}
	return cur, ok
}

// decodeHeaderValue undoes SEP-2243's =?base64?...?= wrapping.
func decodeHeaderValue(v string) (string, bool) {
	if enc, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if enc, ok = strings.CutSuffix(enc, "?="); ok {
			b, err := base64.StdEncoding.DecodeString(enc)
			if err != nil {
				return "", false
			}
			return string(b), true
		}
	}
	return v, true
}

// maxSafeInteger bounds the integers x-mcp-header carries (JavaScript's
// safe range).
const maxSafeInteger = 1<<53 - 1

// headerArg returns an x-mcp-header argument as the header carries it: a
// string, a bool, or an integer in the safe range as an int64; ok is false
// for any other value (null, a fraction, an object), which no header
// carries.
func headerArg(arg json.RawMessage) (_ any, ok bool) {
	var v any
	if json.Unmarshal(arg, &v) != nil {
		return nil, false
	}
	switch v := v.(type) {
	case string, bool:
		return v, true
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > maxSafeInteger {
			return nil, false
		}
		return int64(v), true
	}
	return nil, false
}

// headerMatches reports whether a header's decoded value is the argument
// arg: a string as it is, a boolean as true or false, an integer in the
// safe range by its value.
func headerMatches(header string, arg json.RawMessage) bool {
	v, _ := headerArg(arg)
	switch v := v.(type) {
	case string:
		return header == v
	case bool:
		return header == strconv.FormatBool(v)
	case int64:
		n, err := strconv.ParseFloat(header, 64)
		return err == nil && n == float64(v)
	}
	return false
}

// mirrorHeaders returns the MCP headers of a request of the stateless
// revision that a client over stdio sent, for an HTTP server, as the
// go-sdk's client sets them (SEP-2243): its protocol version, its method,
// its name, and each argument its tool's input schema marks x-mcp-header
// (bindings gives them; nil for none). It returns nil for a message of a
// session's revision.
func mirrorHeaders(msg []byte, env *message, bindings func(tool string) []paramBinding) http.Header {
	v := requestVersion(msg)
	if !stateless(v) {
		return nil
	}
	out := http.Header{versionHeader: {v}, methodHeader: {env.method}}
	var req struct {
		Params struct {
			Name      *string                    `json:"name"`
			URI       *string                    `json:"uri"`
			Arguments map[string]json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &req) != nil {
		return out
	}
	if name, _ := requestName(env.method, req.Params.Name, req.Params.URI); name != nil {
		out.Set(nameHeader, *name)
	}
	if env.method != "tools/call" || req.Params.Name == nil || bindings == nil {
		return out
	}
	for _, b := range bindings(*req.Params.Name) {
		arg, ok := lookupArgument(req.Params.Arguments, b.path)
		if !ok {
			continue
		}
		if value, ok := headerValue(arg); ok {
			out.Set(paramHeaderPrefix+b.header, value)
		}
	}
	return out
}

// headerValue encodes an x-mcp-header argument as SEP-2243 says: a string
// as it is, or =?base64?...?= when it is not plain visible ASCII without
// spaces at its ends (or looks encoded already); a boolean as true or
// false; an integer in the safe range in decimal. Any other value (null, a
// fraction, an object) is not mirrored.
func headerValue(arg json.RawMessage) (string, bool) {
	v, _ := headerArg(arg)
	switch v := v.(type) {
	case string:
		if needsBase64(v) {
			return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?=", true
		}
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case int64:
		return strconv.FormatInt(v, 10), true
	}
	return "", false
}

func needsBase64(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == ' ' || s[0] == '\t' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t' {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return true
		}
	}
	return strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?=")
}
