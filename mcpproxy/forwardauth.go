package mcpproxy

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// upstreamHTTPError is an HTTP upstream's refusal of a request for want of
// authorization: its answer 401 Unauthorized or 403 Forbidden, with the
// headers that tell a client how to authorize (WWW-Authenticate, which
// names the protected resource metadata and the scopes). The proxy's own
// client needs them as they came to start or step up OAuth, so they are
// kept whole rather than folded into a JSON-RPC error.
type upstreamHTTPError struct {
	// URL is the upstream endpoint that refused.
	URL string
	// Status is the HTTP status it answered: 401 or 403 for a session's
	// request; any status but 2xx for a stateless request's (MCP
	// 2026-07-28), whose answer keeps its status (-32022 with 400, say).
	Status int
	// Header is its answer's header.
	Header http.Header
	// Body is the start of its answer's body (at most maxRefusalBody
	// bytes): an OAuth error object, say.
	Body []byte
	// JSONRPC reports a body that is a JSON-RPC error answering the
	// request: relayed as the request's response (stateless requests).
	JSONRPC bool
}

// maxRefusalBody bounds the body of a refusal kept to relay: an OAuth
// error is a few hundred bytes, and an upstream's refusal must not cost
// the proxy more.
const maxRefusalBody = 4 << 10

func (e *upstreamHTTPError) Error() string {
	msg := fmt.Sprintf("%s answered %d %s", e.URL, e.Status, http.StatusText(e.Status))
	if v := e.Header.Values("WWW-Authenticate"); len(v) > 0 {
		msg += " (WWW-Authenticate: " + strings.Join(v, ", ") + ")"
	}
	if body := bytes.TrimSpace(e.Body); len(body) > 0 {
		msg += ": " + string(body[:min(len(body), 512)])
	}
	return msg
}

// refusable reports whether status is a refusal the proxy's client can
// act on by authorizing: 401, or 403 (insufficient scope, for a step-up).
func refusable(status int) bool {
	return status == http.StatusUnauthorized || status == http.StatusForbidden
}

// upstreamAuth joins one client session of a proxy serving HTTP to that
// session's HTTP upstream, when the upstream authorizes the client rather
// than the proxy: the client's Authorization goes up with every request
// ([upstreamAuth.SetAuthorization]), and the upstream's refusal of a
// request comes back with its status and WWW-Authenticate
// ([upstreamAuth.Refusal]). It reaches [DialHTTP] through the context of
// the dial ([withUpstreamAuth]), and takes effect when the connection was
// dialled with [ForwardAuth]. The zero value is ready to use; it is safe
// for concurrent use.
type upstreamAuth struct {
	mu            sync.Mutex
	authorization string
	refusals      map[string]*upstreamHTTPError // by request id, as it came
	order         []string                      // the ids of refusals, oldest first
}

// maxRefusals bounds the refusals an upstreamAuth holds for requests whose
// stream did not take them (their client went away): the oldest go.
const maxRefusals = 64

// SetAuthorization sets the Authorization header value sent to the
// upstream with every later request; "" sends none (the dial's own
// header, if any, then applies). The server calls it with each request
// its client makes, so that a refreshed or stepped-up token is used from
// the next request on.
func (a *upstreamAuth) SetAuthorization(v string) {
	a.mu.Lock()
	a.authorization = v
	a.mu.Unlock()
}

func (a *upstreamAuth) currentAuthorization() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.authorization
}

// refuse records the upstream's refusal of the request with id.
func (a *upstreamAuth) refuse(id string, e *upstreamHTTPError) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.refusals == nil {
		a.refusals = map[string]*upstreamHTTPError{}
	}
	if _, dup := a.refusals[id]; !dup {
		a.order = append(a.order, id)
	}
	a.refusals[id] = e
	for len(a.order) > maxRefusals {
		delete(a.refusals, a.order[0])
		a.order = a.order[1:]
	}
}

// Refusal returns, and forgets, the upstream's refusal of the request with
// id (its JSON-RPC id as it came, `1` or `"a"`), or nil when the upstream
// did not refuse it. The connection records a refusal before it answers
// the request with a JSON-RPC error, so a server that sees that answer
// finds the refusal here.
func (a *upstreamAuth) Refusal(id string) *upstreamHTTPError {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.refusals[id]
	if e != nil {
		delete(a.refusals, id)
		for i, o := range a.order {
			if o == id {
				a.order = append(a.order[:i], a.order[i+1:]...)
				break
			}
		}
	}
	return e
}

type upstreamAuthKey struct{}

// withUpstreamAuth returns ctx carrying a, for [DialHTTP] with
// [ForwardAuth] to forward the client's Authorization and record the
// upstream's refusals: a server passes it in the context of the dial of a
// session's upstream.
func withUpstreamAuth(ctx context.Context, a *upstreamAuth) context.Context {
	return context.WithValue(ctx, upstreamAuthKey{}, a)
}

func upstreamAuthFrom(ctx context.Context) *upstreamAuth {
	a, _ := ctx.Value(upstreamAuthKey{}).(*upstreamAuth)
	return a
}

// relayUpstreamAuth answers w with the upstream's refusal when err is one
// (an [upstreamHTTPError]): its status, its WWW-Authenticate and its body,
// so that the client can start OAuth, or step up its scopes, with the
// upstream's authorization server. rewrite, when not nil, rewrites each
// WWW-Authenticate value (its resource_metadata: see
// [resourceMetadata.challengeRewriter]); nil relays them unchanged. It
// reports whether it answered. Nothing must have been written to w yet;
// headers set on it for a stream of events (and a session id, as a
// refused request starts none) are dropped.
func relayUpstreamAuth(w http.ResponseWriter, err error, rewrite func(string) string) bool {
	var e *upstreamHTTPError
	if !errors.As(err, &e) || !refusable(e.Status) {
		return false
	}
	relayRefusal(w, e, rewrite)
	return true
}

// relayRefusal answers w with the upstream's refusal e as it came: its
// status, its WWW-Authenticate (each value rewritten by rewrite when it is
// not nil) and its body.
func relayRefusal(w http.ResponseWriter, e *upstreamHTTPError, rewrite func(string) string) {
	h := w.Header()
	for _, k := range []string{"Content-Type", "Cache-Control", "Content-Length", sessionHeader} {
		h.Del(k)
	}
	copyChallenge(w, e, rewrite)
	if len(e.Body) > 0 {
		if ct := e.Header.Get("Content-Type"); ct != "" {
			h.Set("Content-Type", ct)
		}
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(e.Body)
}

// copyChallenge sets w's WWW-Authenticate to the refusal's, each value
// rewritten by rewrite when it is not nil.
func copyChallenge(w http.ResponseWriter, e *upstreamHTTPError, rewrite func(string) string) {
	if v := e.Header.Values("WWW-Authenticate"); len(v) > 0 {
		v = append([]string(nil), v...)
		if rewrite != nil {
			for i := range v {
				v[i] = rewrite(v[i])
			}
		}
		w.Header()["Www-Authenticate"] = v
	}
}

// errRefusedUpstream ends a stream whose request the upstream refused: its
// answer is the upstream's status, not events.
var errRefusedUpstream = errors.New("mcpproxy: the upstream refused the request; its refusal was relayed")

// refusalGuard holds back the status of a POST's stream of events until
// its first byte, so that a request the upstream refused for want of
// authorization is answered with the upstream's own status and
// WWW-Authenticate ([relayUpstreamAuth]) rather than with 200 and a
// JSON-RPC error: the refusal is recorded before its JSON-RPC error is
// written, so it is found when that error is the stream's first event.
// Once a byte has gone, the stream is the client's as usual.
type refusalGuard struct {
	w       http.ResponseWriter
	auth    *upstreamAuth
	ids     []string
	rewrite func(string) string // of WWW-Authenticate; nil for none
	// find, when set, finds the refusal instead of auth and ids (a
	// stateless POST's, recorded by its lane): any status but 2xx.
	find func() *upstreamHTTPError

	status    int  // the status the stream set, not yet written
	committed bool // the status is written
	refused   bool // the upstream's refusal was relayed
}

// guard returns w for the stream answering the requests with ids, held
// back as [refusalGuard] describes, a refusal's WWW-Authenticate values
// rewritten by rewrite when it is not nil. With a nil a (an upstream not
// dialled with [ForwardAuth]) it changes nothing but the timing of the
// status.
func (a *upstreamAuth) guard(w http.ResponseWriter, ids []string, rewrite func(string) string) *refusalGuard {
	return &refusalGuard{w: w, auth: a, ids: ids, rewrite: rewrite}
}

func (g *refusalGuard) Header() http.Header { return g.w.Header() }

func (g *refusalGuard) WriteHeader(status int) {
	if !g.committed && g.status == 0 {
		g.status = status
	}
}

func (g *refusalGuard) Write(p []byte) (int, error) {
	if g.refused {
		return 0, errRefusedUpstream
	}
	if !g.committed {
		g.committed = true
		if g.find != nil {
			if e := g.find(); e != nil {
				if !e.JSONRPC {
					relayRefusal(g.w, e, g.rewrite)
					g.refused = true
					return 0, errRefusedUpstream
				}
				// The server's own JSON-RPC error is the answer, with
				// its status.
				copyChallenge(g.w, e, g.rewrite)
				g.status = e.Status
			}
		} else if g.auth != nil {
			for _, id := range g.ids {
				if e := g.auth.Refusal(id); e != nil && relayUpstreamAuth(g.w, e, g.rewrite) {
					g.refused = true
					return 0, errRefusedUpstream
				}
			}
		}
		g.w.WriteHeader(cmp.Or(g.status, http.StatusOK))
	}
	return g.w.Write(p)
}

// Flush sends what was written; before the first byte it sends nothing,
// as the status is not known yet.
func (g *refusalGuard) Flush() {
	if !g.committed || g.refused {
		return
	}
	if f, ok := g.w.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives [http.ResponseController] the writer underneath.
func (g *refusalGuard) Unwrap() http.ResponseWriter { return g.w }

// relayed reports whether the upstream's refusal was the answer: a
// refused initialize started no session upstream, so the server ends its
// own.
func (g *refusalGuard) relayed() bool { return g.refused }
