package mcpproxy

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolcap/toolcap/internal/httpauth"
)

// defaultProtocolVersions are the MCP protocol versions [HTTPOptions]
// accepts in a request's MCP-Protocol-Version header unless told otherwise:
// those the go-sdk this module builds with negotiates.
var defaultProtocolVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// admit makes the checks that need nothing but the request's line and
// headers, in the order the go-sdk's server makes them, so that a request
// refused costs no body read: the Host of a loopback listener (DNS
// rebinding), the Origin, the token, the protocol version. It answers a
// refused request and returns false.
func (h *HTTPHandler) admit(w http.ResponseWriter, r *http.Request) bool {
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil {
		// A page on another site can make a browser send requests to a
		// loopback port under a name it resolves there (DNS rebinding):
		// the Host then names that site, never a loopback one.
		if isLoopback(local.String()) && !isLoopback(r.Host) {
			refuse(w, r, fmt.Sprintf("toolcap: Host %q is not a loopback name, and the proxy listens on loopback (DNS rebinding)", r.Host), http.StatusForbidden)
			return false
		}
	}
	if o := r.Header.Get("Origin"); o != "" && !loopbackOrigin(o) {
		refuse(w, r, "toolcap: origin not allowed", http.StatusForbidden)
		return false
	}
	if h.token != "" && !httpauth.BearerOK(r.Header.Get("Authorization"), h.token) {
		w.Header().Set("WWW-Authenticate", "Bearer")
		refuse(w, r, "toolcap: a bearer token is required", http.StatusUnauthorized)
		return false
	}
	// A version of the stateless revision's form (or any later-sorting
	// one) is checked with the body, whose id the error then echoes: on a
	// lane, by the server itself, which lists what it supports.
	v := r.Header.Get(versionHeader)
	if r.Header.Get(sessionHeader) != "" {
		// A session's request: its version is one of those its
		// initialize could choose.
		if v != "" && !slices.Contains(h.versions, v) {
			h.refuseVersion(w, r, nil, v)
			return false
		}
	} else if v != "" && !slices.Contains(h.supported(), v) && (!stateless(v) || h.lanes == nil) {
		// As a JSON-RPC error whose data lists the versions served
		// (SEP-2575's UnsupportedProtocolVersionError), so that a client
		// can pick one; 400, as before.
		h.refuseVersion(w, r, nil, v)
		return false
	}
	return true
}

// isLoopback reports whether addr, a host with or without a port, names
// the loopback interface.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return isLoopback(u.Host)
}

// accepts reads Accept headers: whether they take JSON and whether they
// take server-sent events, media ranges and parameters included.
func accepts(values []string) (json, events bool) {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				json = true
			case "text/event-stream", "text/*":
				events = true
			case "*/*":
				json, events = true, true
			}
		}
	}
	return json, events
}

// postHeaders checks a POST's Content-Type (415) and Accept (406) headers.
// 406 is HTTP's status for an Accept the server cannot satisfy, and the one
// the TypeScript SDK answers; the go-sdk answers 400.
func postHeaders(w http.ResponseWriter, r *http.Request) bool {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		refuse(w, r, "toolcap: Content-Type must be application/json", http.StatusUnsupportedMediaType)
		return false
	}
	if j, e := accepts(r.Header.Values("Accept")); !j || !e {
		refuse(w, r, "toolcap: Accept must list both application/json and text/event-stream", http.StatusNotAcceptable)
		return false
	}
	return true
}

// bodyBudget bounds the bytes of request bodies held at once, across every
// request: a body takes room as its bytes arrive (its buffer, which grows
// by doubling, is never more than twice what has arrived, or firstRead)
// and gives it back once the relay has taken it. A Content-Length is not
// taken on trust: connections that announce large bodies and send nothing
// hold no more than firstRead each.
type bodyBudget struct {
	mu    sync.Mutex
	used  int64
	limit int64
}

// take reserves n bytes, or reports that the budget cannot hold them.
func (b *bodyBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return false
	}
	b.used += n
	return true
}

func (b *bodyBudget) give(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// errBudget reports a body the budget cannot hold at the moment.
var errBudget = errors.New("the proxy holds its maximum of request bytes")

// firstRead is the buffer a body is read into first: what a connection
// that has sent no byte of its body yet holds of the budget.
const firstRead = 4 << 10

// readBody reads r's body, at most max bytes, within timeout, taking its
// bytes from the budget as it grows. It returns the body and how many
// bytes it holds of the budget, which the caller gives back; on an error
// it holds none. A Content-Length over the bound is refused before a byte
// is read.
func (h *HTTPHandler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, int64, error) {
	if r.ContentLength > int64(h.maxBody) {
		return nil, 0, &http.MaxBytesError{Limit: int64(h.maxBody)}
	}
	rc := http.NewResponseController(w)
	// A deadline for this body only, not the server's ReadTimeout: that
	// one would also end the events streams, which outlive their request.
	_ = rc.SetReadDeadline(time.Now().Add(h.bodyTimeout))
	defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	body := http.MaxBytesReader(w, r.Body, int64(h.maxBody))

	// The most the buffer needs: one byte past the body (to see that it
	// ends there), whose length is announced or at most the bound
	// (MaxBytesReader refuses what is longer). Growing towards it rather
	// than to twice the buffer makes the last allocation the right size.
	final := int64(h.maxBody) + 1
	if r.ContentLength >= 0 {
		final = r.ContentLength + 1
	}
	var (
		buf  []byte
		held int64
	)
	for {
		if len(buf) == cap(buf) {
			grow := min(max(int64(cap(buf)), firstRead), final-int64(cap(buf)))
			if grow <= 0 {
				grow = 1 // MaxBytesReader ends the read at the bound
			}
			if !h.budget.take(grow) {
				h.budget.give(held)
				return nil, 0, errBudget
			}
			held += grow
			buf = slices.Grow(buf, int(grow))
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, held, nil
		}
		if err != nil {
			h.budget.give(held)
			return nil, 0, err
		}
	}
}

// bodyError answers a body that could not be read.
func (h *HTTPHandler) bodyError(w http.ResponseWriter, r *http.Request, err error) {
	var tooLarge *http.MaxBytesError
	var timeout net.Error
	switch {
	case errors.Is(err, errBudget):
		w.Header().Set("Retry-After", "1")
		refuseRPC(w, r, http.StatusServiceUnavailable, codeServerBusy,
			fmt.Sprintf("toolcap: the proxy holds its maximum of %d bytes of request bodies at once; retry later", h.budget.limit))
	case errors.As(err, &tooLarge):
		refuse(w, r, fmt.Sprintf("toolcap: the request is over the proxy's bound of %d bytes", h.maxBody), http.StatusRequestEntityTooLarge)
	case errors.As(err, &timeout) && timeout.Timeout():
		refuse(w, r, fmt.Sprintf("toolcap: the request's body was not sent within %s", h.bodyTimeout), http.StatusRequestTimeout)
	default:
		refuse(w, r, "toolcap: reading the request: "+err.Error(), http.StatusBadRequest)
	}
}

// codeServerBusy is the JSON-RPC error code (in the range JSON-RPC leaves
// to servers) of a request refused because a bound of the proxy is reached.
const codeServerBusy = -32000

// writeRPCError answers with status and a JSON-RPC error without an id:
// streamable HTTP lets a refused POST carry one, so that a client that
// reads the body learns why.
func writeRPCError(w http.ResponseWriter, status, code int, msg string) {
	writeRPCErrorData(w, status, []byte("null"), code, msg, nil)
}

// writeRPCErrorData answers with status and a JSON-RPC error answering id,
// with data (nil for none).
func writeRPCErrorData(w http.ResponseWriter, status int, id []byte, code int, msg string, data []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(errorResponseData(id, code, msg, data))
}

// refuse answers a request refused before its body was read, or while it
// was: the connection is closed after the answer (closeAfter), so that the
// server does not read the rest of the body to reuse it.
func refuse(w http.ResponseWriter, r *http.Request, msg string, status int) {
	closeAfter(w, r)
	// A JSON-RPC error, as every refusal of the proxy's own: a client
	// that reads the body learns why in the form it reads (id null: the
	// request was not read). Not text, which a client cannot tell from a
	// server's answer.
	code := codeInvalidRequest
	if status >= 500 {
		code = codeServerBusy
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	writeRPCError(w, status, code, msg)
}

// refuseRPC is refuse with a JSON-RPC error (see writeRPCError).
func refuseRPC(w http.ResponseWriter, r *http.Request, status, code int, msg string) {
	closeAfter(w, r)
	writeRPCError(w, status, code, msg)
}

// closeAfter makes the connection of a request with a body close once the
// answer is written, without reading what is left of the body. Connection:
// close alone does not do it: when the handler returns, net/http reads up
// to 256 KiB of a body left unread, whatever the answer said, with no
// deadline, from a client that may send it a byte a second (issue 39, item
// 9: 200 such connections were held for as long as their clients went on,
// 208 descriptors after 75 s, a 408 or a 404 sent or not). A read deadline
// already past makes that read fail at once; the answer, written before
// it, is not a read. A request without a body keeps its connection.
func closeAfter(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength == 0 {
		return
	}
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Unix(1, 0))
}
