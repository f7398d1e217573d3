package mcpproxy

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/pin"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
)

// This file caps the answer to a tools/call: its text through the pinned
// chain (pin.Pinned around the server's answer), then its blocks, structuredContent and notes by package
// shape, or its JSON-RPC error.

// answerCall caps a tools/call's answer and sends it to the client.
func (s *session) answerCall(call *pendingCall, m *message) error {
	if call.span != nil {
		// Ended once the answer is written, with the figures capResult
		// records in it (traceResult).
		defer call.span.finish("")
	}
	if m.rpcErr != nil {
		call.traceError(m.rpcErr)
		out, t, capped := m.rpcErr.capError(m.id, call.policy, m.raw == nil)
		if out == nil {
			return s.cw.write(m.raw)
		}
		pin.LogRedactions(call.span.logger(s.p.logger, m.rpcErr.redactions != nil), call.tool, call.callID, m.rpcErr.redactions)
		if capped {
			shape.Log(s.p.logger, call.tool, call.callID, t)
		}
		return s.cw.write(out)
	}
	if m.result == nil {
		// An answer with neither result nor error: not one a client can
		// read as a result, so it is passed on as it is when it can be.
		call.span.finish("invalid_response")
		if m.raw != nil {
			return s.cw.write(m.raw)
		}
		return s.cw.write(errorResponse(m.id, codeInternal, "toolcap: the server's answer to tools/call had neither a result nor an error"))
	}
	out := s.capResult(call, m)
	if out == nil {
		// What was read of it for the chain is let go before it is sent,
		// which a transport may copy (a --listen session queues it).
		m.result.release()
		return s.cw.writeAsSent(m)
	}
	return s.cw.writeFunc(0, out)
}

// shaped is a tools/call result as the client gets it.
type shaped struct {
	// content is the blocks to send, as package shape returned them for
	// in, the blocks read from kept (the reader's, by index).
	content []shape.Block
	in      []shape.Block
	kept    []keptBlock
	isError bool
	// structured is the structuredContent to send: the server's when it
	// fitted, its cut form otherwise; nil for the server's null.
	structured []byte
	// structuredDropped: structuredContent is left out.
	structuredDropped bool
}

// capResult runs a result through the chain and shapes it for the client.
// It returns what writes the capped result out, or nil when the result
// goes to the client as the server sent it.
func (s *session) capResult(call *pendingCall, m *message) func(jsonWriter) {
	res := m.result
	gen := call.gen
	pol := call.policy

	if res.unread != nil && gen.pinnedOnly && res.redactions == nil && pol.Fits(int(res.text.total)) && s.forwardable(m, res) && sentFits(res, pol) {
		// The pinned chain alone passes on a text that fits as it is: the
		// cap and the ceiling cut only a text over its policy, and the
		// reader's text is valid UTF-8 (what it replaced is counted in
		// its length). The result goes out as it came, its text never
		// decoded: nothing would read it.
		call.traceFits(res)
		return nil
	}
	res.decodeText()

	// The chain starts from the result's text. A text the reader kept whole
	// is cut by the chain's byte cap; one it could not keep (larger than any
	// limit) was cut by the same rule from what it kept, here, before any
	// middleware sees it.
	var prep chain.Result
	precut := false
	if res.hasText {
		text, t, cutHere := s.precut(call, res)
		if cutHere {
			prep = prep.WithTruncation(text, t)
			precut = true
		} else {
			prep.Content = &text
		}
	}
	if res.textRedactions != nil && prep.Content != nil {
		// The reader redacted the text as it read it (see redact.go): the
		// chain's middleware see its counts.
		prep = prep.WithRedactions(*prep.Content, res.textRedactions)
	}
	if res.isError {
		prep.Summary = call.tool + " failed"
		prep = prep.AsError()
	}
	// The call's scope (its session's, or on a lane its principal's): a
	// cut the chain keeps the rest of is readable from there only.
	ctx := rest.WithScope(call.span.context(context.Background()), cmp.Or(call.scope, s.scope))
	r := call.handler.Answer(ctx, chain.Call{ID: call.callID, Tool: call.tool, Args: call.args}, prep)
	// What the reader redacted (the chain's policies carry no detector:
	// see Proxy.SetPolicies). Logged once, here: the chain logs no info.
	redacted := res.redactions
	pin.LogRedactions(call.span.logger(s.p.logger, redacted != nil), call.tool, call.callID, redacted)
	if redacted == nil && s.forwardable(m, res) && fitsAsSent(res, prep, r, pol) {
		call.traceFits(res)
		return nil
	}

	// What the server sent, as far as it was kept, for the shaping: read
	// from its JSON, never decoded into a block type.
	sh := shaped{isError: r.IsError()}
	over := res.over
	for _, hb := range res.blocks {
		raw := hb.raw
		if hb.splice {
			// Not a text block: its text member goes back in place.
			var rb bytes.Buffer
			rb.Write(raw[:hb.at])
			writeString(&rb, hb.text(&res.text))
			rb.Write(raw[hb.at+2:])
			raw = rb.Bytes()
		}
		b, k, err := readBlock(raw)
		if err != nil {
			over = append(over, shape.Dropped{Kind: shape.BlockOther, Size: len(raw)})
			continue
		}
		if hb.at >= 0 && !hb.splice {
			// A text block: its text is read where the reader held it.
			b.Text = bytesString(hb.text(&res.text))
			k.at, k.end, k.apart = hb.at, hb.at+2, true
		}
		sh.in = append(sh.in, b)
		sh.kept = append(sh.kept, k)
	}

	// structuredContent is cut on its own, as JSON; the note of its cut
	// ends the content.
	var tail shape.Note
	var structCut bool
	var structFig chain.Truncation // structuredContent's cut, for the log line
	if res.hasStructured {
		var sc shape.Structured
		valid := s.validator(call.tool)
		ok := res.structured != nil // nil: no form of it can fit, dropped
		if ok && !bytes.Equal(res.structured, []byte("null")) {
			cutAt := func(q shape.Policy) (shape.Structured, bool) {
				return shape.JSONReduced(res.structured, q, valid, res.structuredPrecut, res.structuredElided)
			}
			if ref, prefix, kept := keptText(call, res, prep, r); kept {
				// A client may show the model structuredContent instead of
				// the text: its cut names the read of the text kept.
				sc, ok = gen.keeper.JSONKept(res.structured, pol, ref, prefix, chainCut(r).OriginalBytes, valid, cutAt)
			} else {
				sc, ok = cutAt(pol)
				if ok && sc.Cut && gen.keeper != nil && pol.KeepRest && r.Content != nil && !r.IsError() &&
					chainCut(r).OriginalBytes == 0 && !precut {
					// The text fitted, and so was not kept, but its
					// structured form, JSON-escaped, did not: keep the text
					// now, so that what the structured cut drops can be
					// read (issue 41: a 16,384-byte file left 931 bytes
					// that no read reached). Only when the cut can name
					// the read (a ref is as long as any other, so a
					// stand-in tells): an entry it would not name would
					// only fill the store.
					text := *r.Content
					if probe, _ := gen.keeper.JSONKept(res.structured, pol, standInRef, text, len(text), valid, cutAt); probe.Figures.Ref != "" {
						if ref, kept := gen.keeper.Keep(ctx, text); kept {
							sc, ok = gen.keeper.JSONKept(res.structured, pol, ref, text, len(text), valid, cutAt)
						}
					}
				}
			}
		}
		switch {
		case !ok:
			sh.structuredDropped = true
			structFig = shape.DroppedFigures(int(res.structuredSize), pol)
			if valid != nil && !sh.isError {
				// A success without the structured result its schema
				// promises breaks the contract: it becomes an error, and
				// the note says why.
				sh.isError = true
				tail = shape.StructuredDropped(pol.MaxBytes)
			}
		case sc.Cut:
			sh.structured, structCut, tail = sc.Raw, true, sc.Note
			structFig = sc.Figures
		case sc.Raw != nil:
			sh.structured = sc.Raw
		}
	}

	out, cf := shape.Fit(sh.in, shape.Joined{Text: r.Content, Cut: chainCut(r), Texts: res.texts}, pol, tail, over)
	sh.content = out
	if t, ok := r.Truncation(); ok && t.Strategy == string(cut.KeepJSON) {
		sh.content = splitJSONMarker(sh.content)
	}
	cutAny := cf.Changed() || structCut || sh.structuredDropped || precut || res.structuredReduced || sh.isError != res.isError
	if !cutAny && redacted == nil && s.forwardable(m, res) {
		call.traceFits(res)
		return nil
	}
	s.logCut(call, r, cf, structFig, structCut || sh.structuredDropped)
	call.traceResult(cf.Figures, r, structFig, structCut || sh.structuredDropped, redacted, sh.isError)
	meta := resultMeta{redaction: newRedactionMeta(redacted)}
	if !cutAny && redacted != nil {
		// Written out for its redactions alone: nothing was cut, and
		// _meta says only what was redacted.
		return func(w jsonWriter) { encodeResult(w, m.id, res, sh, meta) }
	}
	fig := truncationMeta{Unit: "bytes", Limit: cf.Figures.Limit, Original: cf.Figures.OriginalBytes,
		Kept: cf.Figures.KeptBytes, Dropped: cf.Figures.DroppedBytes}
	if t := chainCut(r); t.Ref != "" {
		resume := t.Resume
		fig.Ref, fig.Resume = t.Ref, &resume
	}
	for _, t := range []func() (chain.Truncation, bool){r.Ceiling, r.Truncation} {
		if tr, ok := t(); ok && tr.Unit == string(cut.UnitTokens) {
			fig.Tokens = &tokenMeta{Limit: tr.LimitTokens, Original: tr.OriginalTokens, Kept: tr.KeptTokens, Dropped: tr.DroppedTokens}
			break
		}
	}
	meta.truncation = &fig
	return func(w jsonWriter) { encodeResult(w, m.id, res, sh, meta) }
}

// logCut writes the one log line of a result's cut, whatever parts of it
// were cut: the content's figures (its blocks' when they were shaped, else
// the cap's cut of the server's text, with the ceiling's kept bytes as
// ceiling_kept_bytes when a middleware grew it and the ceiling cut again),
// with structuredContent's figures as fields of their own when it was cut
// too; structuredContent's alone when only it was. The chain's own cap
// logs nothing here (the proxy gives it a logger without info, see
// [warnOnly]), so that a cut is one line.
func (s *session) logCut(call *pendingCall, r chain.Result, cf shape.ContentFigures, structFig chain.Truncation, structCut bool) {
	l := s.p.logger
	if !l.IsInfo() {
		return
	}
	var extra []any
	first, capped := r.Truncation()
	ceiling, reCut := r.Ceiling()
	t, contentCut := first, capped || reCut
	switch {
	case capped && reCut:
		// The server's size is the cap's figure; the ceiling's, logged as
		// a warning of its own, starts from what a middleware made.
		t.Ref, t.Resume = ceiling.Ref, ceiling.Resume
		extra = append(extra, "ceiling_kept_bytes", ceiling.KeptBytes)
	case reCut:
		t = ceiling
	}
	if cf.BlocksDropped > 0 || cf.BlocksCut > 0 {
		ref, resume := t.Ref, t.Resume
		t, contentCut = cf.Figures, true
		if t.Ref == "" {
			t.Ref, t.Resume = ref, resume
		}
	}
	switch {
	case !contentCut && !structCut:
		return
	case !contentCut:
		t = structFig
		extra = append(extra, "part", "structuredContent")
	case structCut:
		extra = append(extra, "structured_original_bytes", structFig.OriginalBytes, "structured_kept_bytes", structFig.KeptBytes)
	}
	extra = append(extra, call.span.logIDs()...)
	l.Info(shape.Message(t), append(shape.LogFields(call.tool, call.callID, t), extra...)...)
}

// chainCut returns the figures of the last cut the chain made of a
// result's text: the ceiling's when it cut, the byte cap's (or the
// reader's) otherwise; the zero value when none did.
func chainCut(r chain.Result) chain.Truncation {
	if t, ok := r.Ceiling(); ok {
		return t
	}
	t, _ := r.Truncation()
	return t
}

// standInRef stands for a ref not made yet: any valid ref of the same
// length gives the same cut.
const standInRef = "aaaaaaaaaaaaaaaaaaaaaaaaaa"

// keptText returns the ref under which the rest of a result's text was
// kept, when the chain's cut of it kept the rest, and what the proxy holds
// of that text's start: the text as read (whole, or its first bytes when
// it was cut while read) when the ref is the one the reader's or the byte
// cap's cut made of it; nothing when the ceiling kept a text a middleware
// made, which the proxy does not hold (a read then starts at 0). prep is
// what the chain started from: a text cut while read whose head the reader
// let go (callResult.headCut) is known by what that cut shows of its start.
func keptText(call *pendingCall, res *callResult, prep, r chain.Result) (ref, prefix string, ok bool) {
	t := chainCut(r)
	if t.Ref == "" || call.gen.keeper == nil {
		return "", "", false
	}
	if first, ok := r.Truncation(); ok && first.Ref == t.Ref {
		prefix = bytesString(res.text.head)
		if res.headCut && prep.Content != nil {
			prefix = shownHead(*prep.Content, first)
		}
	}
	return t.Ref, prefix, true
}

// shownHead returns the start of the text that out, the text's cut with
// figures t, shows as it was: what comes before its first marker when the
// cut keeps the text's head (head, head_tail), which is the text's own
// bytes; nothing for another cut (json reshapes the document).
func shownHead(out string, t chain.Truncation) string {
	switch t.Strategy {
	case "", string(cut.KeepHead), string(cut.KeepHeadTail): // "" is the head rule
	default:
		return ""
	}
	ms := cut.FindMarkers(out)
	if len(ms) == 0 {
		return ""
	}
	return out[:ms[0].Start]
}

// validator returns the check of tool's output schema for shape.JSON, or
// nil when it has none (or one that cannot be resolved).
func (s *session) validator(tool string) func(any) error {
	rs := s.p.schema(tool)
	if rs == nil {
		return nil
	}
	return rs.Validate
}

// precut returns the text the chain starts from, and whether the reader
// cut it already, with its figures.
//
// A text the reader kept whole goes to the chain whole: its byte cap cuts
// it by the tool's strategy. A text too long to keep was cut while it was
// read, by the same strategy (a cut.Writer for each call it might answer,
// or a rest.Stream that writes it to the store as well when the call's
// rest is kept), or by the head rule from the kept head past maxWriters. A tool with an
// output schema and no strategy of its own has its text cut as JSON (see
// noteRequest), here too when the text was kept whole.
func (s *session) precut(call *pendingCall, res *callResult) (string, chain.Truncation, bool) {
	pol := call.policy
	if res.text.whole() {
		// The text as the reader held it: nothing writes to it any more.
		text := bytesString(res.text.head)
		if call.jsonText && !pol.Fits(len(text)) {
			fit := shape.Text
			if call.keeper != nil {
				fit = func(s string, p shape.Policy) (string, chain.Truncation, bool) {
					return call.keeper.Text(call.ctx, s, p)
				}
			}
			if out, t, changed := fit(text, pol); changed {
				return out, t, true
			}
		}
		return text, chain.Truncation{}, false
	}
	if st := res.streams[call]; st != nil {
		// Cut as it was read, and written to the store as it was: the
		// marker names the read of the rest when the store kept it.
		out, t, _ := st.Result()
		return out, t, true
	}
	var out string
	var t chain.Truncation
	if wr := res.writers[call]; wr != nil {
		// Longer than the policy holds (shape.Policy.Hold): under a token
		// limit too long to count whole, and cut by it as the worker cuts
		// such a text, from what the Writer kept.
		var st cut.Stats
		if pol.HoldsTokens() {
			out, st = wr.ResultTokens(pol.MaxTokens, pol.Counter)
		} else {
			out, st = wr.Result()
		}
		t = shape.Figures(st, pol)
	} else {
		out, t, _ = res.text.cut(pol.MaxBytes)
		if again, t2, ok := shape.Recut(out, pol); ok {
			out, t = again, t2
		}
	}
	return out, t, true
}

// splitJSONMarker puts the marker that follows a JSON document cut by the
// json strategy in a text block of its own, so that the document's block is
// valid JSON alone. blocks is not modified.
func splitJSONMarker(blocks []shape.Block) []shape.Block {
	for i, b := range blocks {
		if b.Kind != shape.BlockText {
			continue
		}
		// The last marker, at the end: the plain one or the one naming
		// the read of the rest.
		ms := cut.FindMarkers(b.Text)
		if len(ms) == 0 || ms[len(ms)-1].End != len(b.Text) {
			continue
		}
		head := b.Text[:ms[len(ms)-1].Start]
		if !json.Valid([]byte(head)) {
			continue
		}
		doc := b
		doc.Text = head
		marker := shape.Block{Kind: shape.BlockText, Text: strings.TrimPrefix(b.Text[len(head):], "\n"), From: -1}
		blocks = slices.Insert(slices.Clone(blocks), i+1, marker)
		blocks[i] = doc
		return blocks
	}
	return blocks
}

// forwardable reports whether m may go out as it came: held whole within
// the message bound, or, a result over the bound held in parts (see
// reader.teeBound), one whose bytes besides its texts as written, its kept
// blocks and its structuredContent are within the bound. The allowance
// past the bound is for what the tool's limit measures, never for members
// it does not: a result with more than the bound of those is written out
// again from what was read, without them.
func (s *session) forwardable(m *message, res *callResult) bool {
	if m.parts == nil {
		return m.raw != nil
	}
	other := m.size - res.written - int64(res.kept) - int64(len(res.structured))
	return other <= int64(s.p.max)
}

// fitsAsSent reports, without decoding the blocks, that the server's result
// goes to the client as it was sent: the chain left its text alone and
// everything in it is within limit on any measure shape uses (the sizes
// counted here are those of the JSON, at least what shape counts).
func fitsAsSent(res *callResult, prep, r chain.Result, pol shape.Policy) bool {
	if r.IsError() != res.isError {
		return false
	}
	if _, cut := r.Truncation(); cut {
		return false
	}
	if _, cut := r.Ceiling(); cut {
		return false
	}
	if (r.Content == nil) != (prep.Content == nil) || (r.Content != nil && *r.Content != *prep.Content) {
		return false
	}
	return sentFits(res, pol)
}

// sentFits reports, without decoding the blocks, that the result as read
// is within pol on any measure shape uses, with nothing reduced or
// dropped: what the server sent goes out as it is once the chain left it
// alone.
func sentFits(res *callResult, pol shape.Policy) bool {
	if res.structuredReduced || len(res.over) > 0 {
		return false
	}
	text := int(res.text.total) - max(res.texts-1, 0)*len(shape.TextSeparator)
	if text+res.kept > pol.MaxBytes {
		return false
	}
	// structuredContent is held to the tool's token limit as well.
	if n := len(res.structured); !pol.Fits(n) && (n > pol.MaxBytes || !pol.HoldsTokens() || pol.Counter.Count(string(res.structured)) > pol.MaxTokens) {
		return false
	}
	return true
}
