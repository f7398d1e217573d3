package mcpproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
)

// A server keeps one subscriptions/listen per session (the go-sdk's
// does), and a lane is one session to its server for many clients: a
// second client's listen would take the first's place, and the first's
// leaving would end both. So a lane listens upstream once, for what all
// its clients' listens ask together, and hands each client the
// notifications it asked for, under its own id; a client's listen never
// goes upstream itself. Every stateless listen is carried by the same
// lane (lanePool.acquireListen), so that one subscription serves them.

// listenFilter is what a listen asks for: its params' notifications, each
// member a flag (toolsListChanged) or a list of strings
// (resourceSubscriptions), as the revision defines them and any it may
// add.
type listenFilter map[string]json.RawMessage

// parseFilter reads a listen request's params.notifications; nil when it
// has none, which the server refuses (the request then goes up alone).
func parseFilter(msg []byte) listenFilter {
	var req struct {
		Params struct {
			Notifications listenFilter `json:"notifications"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &req) != nil {
		return nil
	}
	return req.Params.Notifications
}

// covers reports whether f asks for all that g does.
func (f listenFilter) covers(g listenFilter) bool {
	for k, v := range g {
		if !filterMember(f[k]).covers(filterMember(v)) {
			return false
		}
	}
	return true
}

// union returns what f and g ask for together.
func (f listenFilter) union(g listenFilter) listenFilter {
	out := listenFilter{}
	for k, v := range f {
		out[k] = v
	}
	for k, v := range g {
		out[k] = filterMember(out[k]).union(filterMember(v))
	}
	return out
}

// intersect returns what of granted f asks for: the part of the server's
// grant that is this listen's.
func (f listenFilter) intersect(granted listenFilter) listenFilter {
	out := listenFilter{}
	for k, v := range f {
		if g, ok := granted[k]; ok {
			out[k] = filterMember(v).intersect(filterMember(g))
		}
	}
	return out
}

// wants reports whether f asks for a notification of method whose
// params.uri is uri: the list_changed notifications by their flags,
// resources/updated by the URIs subscribed; one the revision does not
// name is every listen's.
func (f listenFilter) wants(method, uri string) bool {
	switch method {
	case "notifications/tools/list_changed":
		return filterMember(f["toolsListChanged"]).flag()
	case "notifications/prompts/list_changed":
		return filterMember(f["promptsListChanged"]).flag()
	case "notifications/resources/list_changed":
		return filterMember(f["resourcesListChanged"]).flag()
	case "notifications/resources/updated":
		return slices.Contains(filterMember(f["resourceSubscriptions"]).list(), uri)
	}
	return true
}

// filterMember is one member of a listenFilter, as JSON.
type filterMember json.RawMessage

func (m filterMember) flag() bool {
	var b bool
	return json.Unmarshal(m, &b) == nil && b
}

func (m filterMember) list() []string {
	var l []string
	_ = json.Unmarshal(m, &l)
	return l
}

func (m filterMember) covers(o filterMember) bool {
	if len(o) == 0 {
		return true
	}
	if o.flag() {
		return m.flag()
	}
	if l := o.list(); l != nil {
		mine := m.list()
		for _, s := range l {
			if !slices.Contains(mine, s) {
				return false
			}
		}
		return true
	}
	return bytes.Equal(m, o)
}

func (m filterMember) union(o filterMember) json.RawMessage {
	switch {
	case len(m) == 0:
		return json.RawMessage(o)
	case len(o) == 0:
		return json.RawMessage(m)
	case m.flag() || o.flag():
		return json.RawMessage("true")
	}
	a, b := m.list(), o.list()
	if a == nil && b == nil {
		return json.RawMessage(m)
	}
	for _, s := range b {
		if !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	out, _ := json.Marshal(a)
	return out
}

func (m filterMember) intersect(o filterMember) json.RawMessage {
	if l := m.list(); l != nil {
		granted := o.list()
		kept := []string{}
		for _, s := range l {
			if slices.Contains(granted, s) {
				kept = append(kept, s)
			}
		}
		out, _ := json.Marshal(kept)
		return out
	}
	if m.flag() && o.flag() {
		return json.RawMessage("true")
	}
	return json.RawMessage("false")
}

// listener is a client's listen on a lane.
type listener struct {
	filter listenFilter
	acked  bool
}

// listenLocked takes a client's subscriptions/listen: it is served from the
// lane's one upstream listen, which is (re)started with the union of
// every listen's filter when the one running does not cover this one's.
// It requires l.mu, and returns the message to send upstream, nil for
// none.
func (l *lane) listenLocked(c *laneCall, msg []byte, f listenFilter) []byte {
	if l.listeners == nil {
		l.listeners = map[*laneCall]*listener{}
	}
	l.listeners[c] = &listener{filter: f}
	hub := l.hub
	l.pool.h.p.logger.Trace("a listen", "id", string(c.id), "filter", f, "hub", hub != nil)
	if hub != nil && hub.filter.covers(f) {
		if hub.granted != nil {
			l.ackLocked(c)
		}
		return nil
	}
	want := f
	if hub != nil {
		want = hub.filter.union(f)
	}
	out, err := listenRequest(msg, l.pool.next.Add(1), want)
	if err != nil {
		return nil
	}
	next := &laneCall{listen: true, header: c.header, scope: c.scope}
	next.wire, _ = laneID(out.wire)
	l.calls[next.wire] = next
	l.hub = &hubState{call: next, filter: want}
	if hub != nil {
		// The old subscription is replaced: a server that keeps one a
		// session (the go-sdk's) drops it as it takes the new one, and
		// one that keeps both sends its notifications twice until the
		// last client leaves, when both are cancelled. A cancellation now
		// could reach a server of the first kind after the new request,
		// and end that. Over HTTP the old one's stream is closed.
		if hub.call.stop != nil {
			hub.call.stop()
		}
		l.retired = append(l.retired, hub.call)
	}
	return out.msg
}

// hubState is the lane's one upstream listen.
type hubState struct {
	call    *laneCall
	filter  listenFilter
	granted listenFilter // the server's acknowledgement; nil until it came
}

type builtListen struct {
	msg  []byte
	wire []byte
}

// listenRequest returns a client's listen request as the lane sends it
// upstream: under the lane's id wire, asking for want.
func listenRequest(msg []byte, wire int64, want listenFilter) (builtListen, error) {
	id := strconv.AppendInt(nil, wire, 10)
	filter, err := json.Marshal(want)
	if err != nil {
		return builtListen{}, err
	}
	out := setMember(setMember(msg, id, "id"), filter, "params", "notifications")
	if out == nil {
		return builtListen{}, errors.New("a listen request that is not a JSON object")
	}
	return builtListen{msg: out, wire: id}, nil
}

// ackLocked sends listener c its acknowledgement: the server's grant, the
// part of it c asked for. It requires l.mu.
func (l *lane) ackLocked(c *laneCall) {
	ln := l.listeners[c]
	if ln == nil || ln.acked || l.hub == nil || l.hub.granted == nil {
		return
	}
	ln.acked = true
	granted, _ := json.Marshal(ln.filter.intersect(l.hub.granted))
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"` + metaSubscriptionID + `":`)
	b.Write(c.id)
	b.WriteString(`},"notifications":`)
	b.Write(granted)
	b.WriteString(`}}`)
	_ = c.post.deliver(heldMsg{b.Bytes()})
}

// fromHub routes what the server sent about the lane's upstream listen
// hub: its acknowledgement, a notification, or its end.
func (l *lane) fromHub(hub *laneCall, msg []byte, env *message) {
	l.mu.Lock()
	defer l.mu.Unlock()
	current := l.hub != nil && l.hub.call == hub
	switch {
	case env.isResponse():
		if !current {
			return // a retired subscription's end
		}
		// The server ended the subscription (it granted nothing, or it
		// stops): each listen ends with it.
		for c := range l.listeners {
			out := listenEnd(msg, c.id)
			if out == nil {
				out = []byte(`{"jsonrpc":"2.0","id":` + string(c.id) + `,"result":{"resultType":"complete"}}`)
			}
			_ = c.post.deliver(heldMsg{out})
		}
		clear(l.listeners)
		l.hub = nil
	case env.method == "notifications/subscriptions/acknowledged":
		if !current {
			return
		}
		var n struct {
			Params struct {
				Notifications listenFilter `json:"notifications"`
			} `json:"params"`
		}
		_ = json.Unmarshal(msg, &n)
		l.hub.granted = n.Params.Notifications
		if l.hub.granted == nil {
			l.hub.granted = listenFilter{}
		}
		for c := range l.listeners {
			l.ackLocked(c)
		}
	default:
		var n struct {
			Params struct {
				URI string `json:"uri"`
			} `json:"params"`
		}
		_ = json.Unmarshal(msg, &n)
		sent := 0
		for c, ln := range l.listeners {
			if !ln.acked || !ln.filter.wants(env.method, n.Params.URI) {
				continue
			}
			if out := replaceMeta(msg, metaSubscriptionID, c.id); out != nil {
				_ = c.post.deliver(heldMsg{out})
				sent++
			}
		}
		l.pool.h.p.logger.Trace("a listen's notification", "method", env.method, "listeners", len(l.listeners), "sent", sent, "current", current)
	}
}

// unlistenLocked takes listener c off the lane; the upstream listens end
// with the last, whose cancellations it returns for the caller to send
// once it has let l.mu go (in order, before anything the client sends
// next). It requires l.mu, and reports whether c was listening.
func (l *lane) unlistenLocked(c *laneCall) (bool, [][]byte) {
	if _, ok := l.listeners[c]; !ok {
		return false, nil
	}
	delete(l.listeners, c)
	if len(l.listeners) > 0 || l.hub == nil {
		return true, nil
	}
	var cancels [][]byte
	for _, hub := range append(l.retired, l.hub.call) {
		if l.calls[hub.wire] != hub {
			continue
		}
		delete(l.calls, hub.wire)
		if hub.stop != nil {
			hub.stop()
		}
		cancels = append(cancels, []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+
			strconv.FormatInt(hub.wire, 10)+`,"reason":"toolcap: no client listens"}}`+"\n"))
	}
	l.hub, l.retired = nil, nil
	return true, cancels
}

// sendNow queues messages for the relay, in order, before anything
// queued after it returns; it never waits for the relay (see
// enqueueSoon). It must not be called with l.mu held.
func (l *lane) sendNow(msgs [][]byte) {
	for _, m := range msgs {
		l.enqueueSoon(m)
	}
}

// listenEnd returns the server's end of the upstream listen as the end
// of a client's, whose id is id: that id in place of the lane's, and as
// its result._meta's subscriptionId; nil when it cannot be read.
func listenEnd(msg []byte, id []byte) []byte {
	out := setMember(msg, id, "id")
	if bytes.Contains(msg, []byte(`"result"`)) {
		out = setMember(out, id, "result", "_meta", metaSubscriptionID)
	}
	return out
}
