package mcpproxy

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// MCP's stateless revision (2026-07-28, SEP-2575) has no initialize and no
// session: every request names its protocol version and the client's
// capabilities in its _meta, and the MCP-Protocol-Version header mirrors
// the version. The handler serves such a request on a lane (see lane and
// lanePool); a 2025 client's initialize still starts a session of its own.

// statelessRevision is the first protocol version without sessions.
const statelessRevision = "2026-07-28"

// stateless reports whether protocol version v is one without sessions.
func stateless(v string) bool { return v >= statelessRevision }

// metaProtocolVersion is the _meta key of a request's protocol version.
const metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// JSON-RPC error codes of MCP's stateless revision.
const (
	// codeHeaderMismatch: an HTTP header disagrees with the body, or a
	// required one is missing (SEP-2243).
	codeHeaderMismatch = -32020
	// codeUnsupportedVersion: the request's protocol version is not
	// served; the data lists those that are.
	codeUnsupportedVersion = -32022
	// codeMissingCapability: the request needs a client capability its
	// _meta does not declare.
	codeMissingCapability = -32021
	// codeInvalidParams is JSON-RPC's invalid params.
	codeInvalidParams = -32602
)

// requestVersion returns the protocol version a message names in its
// params._meta, or "".
func requestVersion(msg []byte) string {
	if !bytes.Contains(msg, []byte(metaProtocolVersion)) {
		return ""
	}
	var m struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return ""
	}
	var v string
	_ = json.Unmarshal(m.Params.Meta[metaProtocolVersion], &v)
	return v
}

// supported returns the protocol versions h serves: all it lists, or,
// when it serves no stateless request, those of the 2025 revisions.
func (h *HTTPHandler) supported() []string {
	if h.lanes != nil {
		return h.versions
	}
	return slices.DeleteFunc(slices.Clone(h.versions), stateless)
}

// refuseVersion answers a request naming a protocol version the handler
// does not serve with UnsupportedProtocolVersionError (-32022), the
// versions it serves in its data, as SEP-2575 says.
func (h *HTTPHandler) refuseVersion(w http.ResponseWriter, r *http.Request, id []byte, requested string) {
	if id == nil {
		id = []byte("null")
	}
	supported := h.supported()
	data, _ := json.Marshal(struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}{supported, requested})
	if r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
	}
	writeRPCErrorData(w, http.StatusBadRequest, id, codeUnsupportedVersion,
		fmt.Sprintf("toolcap: unsupported protocol version %q (supported: %s)", requested, strings.Join(supported, ", ")), data)
}

// principalScope returns the scope the refs of a stateless request's
// results are bound to: its credential's (a keyed hash of the
// Authorization header, never the header), or that of every request
// without one. A ref is an unguessable handle (SEP-2567): any later
// stateless request of the same principal may read it, on any lane.
func (h *HTTPHandler) principalScope(r *http.Request) string {
	a := r.Header.Get("Authorization")
	if a == "" {
		return "stateless"
	}
	m := hmac.New(sha256.New, h.scopeKey[:])
	m.Write([]byte(a))
	return "stateless:" + hex.EncodeToString(m.Sum(nil)[:16])
}

// statelessHeader returns the headers of a stateless POST that go up with
// its requests to an HTTP server: MCP's own (SEP-2243) and, with
// ForwardAuth, the client's Authorization.
func (h *HTTPHandler) statelessHeader(r *http.Request) http.Header {
	out := http.Header{}
	for k, v := range r.Header {
		switch {
		case k == versionHeader, k == methodHeader, k == nameHeader, strings.HasPrefix(k, paramHeaderPrefix):
			out[k] = v
		}
	}
	if h.forwardAuth {
		if a := r.Header.Get("Authorization"); a != "" {
			out.Set("Authorization", a)
		}
	}
	return out
}

// Header names of MCP's stateless revision (SEP-2243), canonical.
const (
	methodHeader      = "Mcp-Method"
	nameHeader        = "Mcp-Name"
	paramHeaderPrefix = "Mcp-Param-"
)

// postStateless serves a POST of the stateless revision: its messages go
// to a lane, under the lane's ids, and the answer is its responses, as
// for a session's POST (JSON for one request answered soon, a stream of
// events otherwise), with the HTTP status a refusal has.
func (h *HTTPHandler) postStateless(w http.ResponseWriter, r *http.Request, body []byte, reqs []postRequest, held *int64) {
	if body[0] == '[' {
		// JSON-RPC batches left MCP in 2025-06-18, and the stateless
		// revision has none: refused as the go-sdk refuses them. A POST
		// is one message from here on.
		writeRPCError(w, http.StatusBadRequest, codeInvalidRequest,
			"toolcap: JSON-RPC batches are not supported in protocol version "+statelessRevision+" and later")
		return
	}
	env, err := envelopeFitted(body)
	if err != nil {
		writeRPCError(w, http.StatusBadRequest, codeInvalidRequest, "toolcap: not a JSON-RPC message: "+err.Error())
		return
	}
	if h.validate != nil {
		if e := h.validate(r, body, env); e != nil {
			id := env.id
			if id == nil {
				id = []byte("null")
			}
			writeRPCErrorData(w, e.status, id, e.code, e.msg, nil)
			return
		}
	}
	acquire := h.lanes.acquire
	if env.method == "subscriptions/listen" {
		// Every listen on one lane, whose one upstream listen serves
		// them all (see listen.go).
		acquire = h.lanes.acquireListen
	}
	l, err := acquire()
	for try := 0; err == nil && try < 2 && l.ending(); try++ {
		// Its server just ended: the next acquire starts another.
		l, err = acquire()
	}
	if err != nil {
		if errors.Is(err, errClosed) {
			writeRPCError(w, http.StatusServiceUnavailable, codeServerBusy, "toolcap: the proxy is shutting down")
			return
		}
		h.p.logger.Error("could not reach the MCP server for a stateless request", "error", err)
		writeRPCError(w, http.StatusBadGateway, codeInternal, "toolcap: could not reach the MCP server: "+err.Error())
		return
	}
	// The POST's stream: in a holder of the session's kind, with no relay
	// of its own and no id a client may name. One request cannot be
	// pending twice in it.
	ps := newHTTPSession(h, nil)
	ps.stateless = true
	defer ps.close()
	var st *eventStream
	if len(reqs) > 0 {
		st, _ = ps.openStream(reqs)
	}
	c, err := l.send(r.Context(), ps, body, env, h.principalScope(r), h.statelessHeader(r))
	if err != nil {
		writeRPCError(w, http.StatusBadGateway, codeInternal, "toolcap: the MCP server's connection ended; retry")
		return
	}
	h.budget.give(*held)
	*held = 0
	if st == nil || c == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	defer func() {
		// A request its client left before its answer: the server is
		// told (the stateless revision cancels a request by closing its
		// stream), and its answer, when it comes, is dropped.
		if l.cancel(c) {
			h.p.logger.Debug("a stateless client left before its answer; the request was cancelled", "id", truncID(c.id))
		}
	}()
	const conn = 1
	// The request waits for its first message however long it takes, as
	// the go-sdk's server waits: its response alone then goes out as
	// application/json with the status its error calls for (a refusal
	// decided late still gets its 400), anything else opens a stream. The
	// revision resumes no stream, so nothing is lost by opening it late.
	if h.jsonWait >= 0 {
		if msg, ok := st.awaitResponse(r.Context(), conn, math.MaxInt64); ok {
			status := http.StatusOK
			if e := l.refusal(c); e != nil {
				if !e.JSONRPC {
					relayRefusal(w, e, h.meta.challengeRewriter(r))
					return
				}
				status = e.Status
				copyChallenge(w, e, h.meta.challengeRewriter(r))
			} else if h.validate != nil {
				status = statusOfError(msg)
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(msg.size()))
			w.WriteHeader(status)
			if err := msg.writeTo(w); err != nil {
				h.p.logger.Debug("a stateless client left before its response was written", "error", err)
			}
			return
		}
	}
	g := &refusalGuard{w: w, rewrite: h.meta.challengeRewriter(r), find: func() *upstreamHTTPError { return l.refusal(c) }}
	st.serve(g, r, conn, false)
}

// cancel takes a call its client left out of the lane, telling the
// server with a notifications/cancelled; it reports whether the call was
// still in flight.
func (l *lane) cancel(c *laneCall) bool {
	l.mu.Lock()
	if ok, cancels := l.unlistenLocked(c); ok {
		// A listen served by the lane's own upstream listen: that one
		// ends with its last client, told before this POST returns, so
		// before the client's next request.
		l.mu.Unlock()
		l.sendNow(cancels)
		return true
	}
	live := l.calls[c.wire] == c && !l.dead
	l.mu.Unlock()
	if !live {
		return false
	}
	l.forget(c)
	l.stopRequest(c)
	l.enqueueSoon([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + strconv.FormatInt(c.wire, 10) +
		`,"reason":"toolcap: the client left"}}` + "\n"))
	return true
}

// statusOfError returns the HTTP status of a stateless answer that toolcap
// serves itself (a server over stdio): 400 for an error the request's
// form caused (its headers, its _meta, its version, its params), as the
// go-sdk's server answers them; 200 for any other answer.
func statusOfError(msg heldMsg) int {
	if msg.size() > 4<<10 {
		return http.StatusOK // an error of this kind is short
	}
	var m struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(msg.flat(), &m) != nil || m.Error == nil {
		return http.StatusOK
	}
	// SEP-2575: method not found is 404; invalid params, a missing
	// client capability and an unsupported version are 400.
	switch m.Error.Code {
	case codeMethodNotFound:
		return http.StatusNotFound
	case codeUnsupportedVersion, codeInvalidParams, codeMissingCapability:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// requestError is a stateless request refused before it reaches a lane.
type requestError struct {
	status int
	code   int
	msg    string
}

type statelessLinkKey struct{}

// statelessLink joins a lane and the HTTP server connection it carries
// requests on: the headers of each request's POST go up with it, and the
// server's refusals come back to the POST.
type statelessLink interface {
	requestHeader(id []byte) http.Header
	refused(id []byte, e *upstreamHTTPError)
	// requestContext returns ctx for the request with id, ended when its
	// client leaves: the stateless revision cancels a request by closing
	// its stream, upstream too.
	requestContext(ctx context.Context, id []byte) (context.Context, context.CancelFunc)
	// transport is what the lanes' requests go up by, shared by them.
	transport() http.RoundTripper
}

func withStatelessLink(ctx context.Context, l statelessLink) context.Context {
	return context.WithValue(ctx, statelessLinkKey{}, l)
}

func statelessLinkFrom(ctx context.Context) statelessLink {
	l, _ := ctx.Value(statelessLinkKey{}).(statelessLink)
	return l
}

// scopedConn is a client Conn whose requests are not all of one scope (a
// lane's, which carries many clients'): the scope of the refs of a
// request's results, by its id as the relay reads it.
type scopedConn interface {
	requestScope(id []byte) (string, bool)
}
