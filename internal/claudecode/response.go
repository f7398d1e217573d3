package claudecode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
)

// CapToolResponse fits the output of the tool named tool, as a PostToolUse
// payload carries it (resp, [Input].ToolResponse), to p, keeping the
// tool's own output shape, so that Claude Code renders the replacement as
// it renders the tool's output. It returns the replacement and the figures
// of the cut; changed is false, and out nil, when the output fits and
// should reach the model as it is.
//
// What the model reads is fitted, by package shape's rules:
//
//   - Bash (BashOutput): stdout and stderr share p ([shape.Texts]); an
//     output flagged isImage is left alone.
//   - Read (FileReadOutput): a text file's file.content ([shape.Text]),
//     file.numLines counting the lines kept; a notebook's file.cells, as a
//     JSON array ([shape.JSON]). Images, PDFs and page images are left
//     alone: cutting base64 breaks it.
//   - Grep (GrepOutput): content and the file names share p
//     ([shape.Share]), the names cut between names, numFiles counting the
//     names kept.
//   - Glob (GlobOutput): the file names, cut between names ([shape.Lines]);
//     numFiles counts the names kept and truncated is set.
//   - WebFetch (WebFetchOutput): result ([shape.Text]).
//   - An MCP tool (mcp__SERVER__TOOL), or any other: a string as one text
//     ([shape.Text], the same cut toolcap cap and toolcap mcp make of it);
//     MCP content blocks, alone or as an object's content, all together
//     ([shape.Content]), an object's structuredContent on its own
//     ([shape.JSON]); any other value as JSON ([shape.JSON]).
//
// Other fields are kept as they were. The figures are those of the texts
// that share p, added up ([shape.Share]); for an MCP result, those of its
// content blocks ([shape.ContentFigures]), or of its structuredContent
// when only that was cut. The error names the field of the wrong type (a
// Bash stdout that is not a string); resp that is not JSON at all is an
// error too. Empty or null resp is left alone.
//
// The output is redacted first with p.Redact, when set, as the hook
// redacts it ([Hook.Cap]): the cut measures and keeps the redacted texts,
// and an output with a secret is changed even when it fits. An error
// leaves the output as it came, secrets and all: a caller that shows the
// output after an error redacts it itself.
func CapToolResponse(tool string, resp json.RawMessage, p shape.Policy) (out json.RawMessage, t chain.Truncation, changed bool, err error) {
	d := newDecoder()
	trimmed := bytes.TrimSpace(resp)
	red, counts := redactResponse(d, tool, trimmed, p.Redact)
	out, t, changed, err = capToolResponse(d, tool, red, p)
	if err == nil && !changed && counts != nil {
		return redactedAsIs(red)
	}
	return out, t, changed, err
}

// redactedAsIs is the replacement of a redacted output the cut leaves as
// it is: the output, or, when it is not JSON, its text as a JSON string
// (the model reads the same text).
func redactedAsIs(red []byte) (json.RawMessage, chain.Truncation, bool, error) {
	if json.Valid(red) {
		return red, chain.Truncation{}, true, nil
	}
	enc, err := marshal(string(red))
	return enc, chain.Truncation{}, err == nil, err
}

// capToolResponse is [CapToolResponse] with the strings d decoded before.
func capToolResponse(d *decoder, tool string, resp json.RawMessage, p shape.Policy) (out json.RawMessage, t chain.Truncation, changed bool, err error) {
	trimmed := bytes.TrimSpace(resp)
	if len(trimmed) == 0 || string(trimmed) == "null" || p.Fits(d.size(trimmed)) {
		// What the model reads of a JSON value is never longer than its
		// encoding, nor has more tokens than that has bytes.
		return nil, chain.Truncation{}, false, nil
	}
	switch tool {
	case "Bash":
		return capObject(d, trimmed, p, capBash)
	case "Read":
		return capObject(d, trimmed, p, capRead)
	case "Grep":
		return capObject(d, trimmed, p, capGrep)
	case "Glob":
		return capObject(d, trimmed, p, capGlob)
	case "WebFetch":
		return capObject(d, trimmed, p, func(o object, p shape.Policy) (chain.Truncation, bool, error) {
			return o.fitString("result", p)
		})
	}
	return capValue(d, trimmed, p)
}

// capObject splits resp as an object and fits it with fit; resp that is
// not an object is fitted as any other tool's output is.
func capObject(d *decoder, resp json.RawMessage, p shape.Policy, fit func(object, shape.Policy) (chain.Truncation, bool, error)) (json.RawMessage, chain.Truncation, bool, error) {
	o, ok := d.object(resp)
	if !ok {
		return capValue(d, resp, p)
	}
	t, changed, err := fit(o, p)
	if err != nil || !changed {
		return nil, chain.Truncation{}, false, err
	}
	out, err := o.encode()
	if err != nil {
		return nil, chain.Truncation{}, false, err
	}
	return out, t, true, nil
}

// fitString fits the string member key to p as one text.
func (o object) fitString(key string, p shape.Policy) (chain.Truncation, bool, error) {
	s, err := o.str(key)
	if err != nil {
		return chain.Truncation{}, false, err
	}
	out, t, changed := o.d.text(s, p)
	if !changed {
		return chain.Truncation{}, false, nil
	}
	return t, true, o.set(key, out)
}

// capBash fits a BashOutput: stdout and stderr share p. Output that is
// image data (isImage) is left alone.
func capBash(o object, p shape.Policy) (chain.Truncation, bool, error) {
	if string(o.raw("isImage")) == "true" {
		return chain.Truncation{}, false, nil
	}
	keys := [...]string{"stdout", "stderr"}
	texts := make([]string, len(keys))
	for i, k := range keys {
		s, err := o.str(k)
		if err != nil {
			return chain.Truncation{}, false, err
		}
		texts[i] = s
	}
	out, t, changed := o.d.texts(texts, p)
	if !changed {
		return chain.Truncation{}, false, nil
	}
	for i, k := range keys {
		if out[i] != texts[i] {
			if err := o.set(k, out[i]); err != nil {
				return chain.Truncation{}, false, err
			}
		}
	}
	return t, true, nil
}

// capRead fits a FileReadOutput of type "text" (file.content) or
// "notebook" (file.cells, as JSON). Images, PDFs and page images are left
// alone.
func capRead(o object, p shape.Policy) (chain.Truncation, bool, error) {
	file, ok := o.obj("file")
	if !ok {
		return chain.Truncation{}, false, nil
	}
	var t chain.Truncation
	switch {
	case o.is("type", "text"):
		content, err := file.str("content")
		if err != nil {
			return chain.Truncation{}, false, fmt.Errorf("file.%w", err)
		}
		out, ct, changed := shape.Text(content, p)
		if !changed {
			return chain.Truncation{}, false, nil
		}
		if err := file.set("content", out); err != nil {
			return chain.Truncation{}, false, err
		}
		if err := file.set("numLines", strings.Count(out, "\n")+1); err != nil {
			return chain.Truncation{}, false, err
		}
		t = ct
	case o.is("type", "notebook"):
		cells := file.raw("cells")
		if cells == nil {
			return chain.Truncation{}, false, nil
		}
		s, fitted := shape.JSON(cells, p, isArray)
		if !fitted || !s.Cut {
			// No array of cells fits: they are left to Claude Code rather
			// than replaced by something that is not a notebook.
			return chain.Truncation{}, false, nil
		}
		file.m["cells"] = s.Raw
		t = s.Figures
	default:
		return chain.Truncation{}, false, nil
	}
	return t, true, o.set("file", file)
}

// isArray accepts a JSON array: a notebook's cells must stay one.
func isArray(v any) error {
	if _, ok := v.([]any); !ok {
		return fmt.Errorf("not an array but %T", v)
	}
	return nil
}

// capGrep fits a GrepOutput: content and the file names share p, the names
// cut between names. In content mode, the room of the note Claude Code
// adds to what the model reads when a head_limit or offset applied is
// kept for it (see paginationNote).
func capGrep(o object, p shape.Policy) (chain.Truncation, bool, error) {
	if note := paginationNote(o); note != "" {
		p = reserve(p, note)
	}
	content, err := o.str("content")
	if err != nil {
		return chain.Truncation{}, false, err
	}
	names, err := o.strs("filenames")
	if err != nil {
		return chain.Truncation{}, false, err
	}
	joined := strings.Join(names, "\n")
	out, t, changed := o.d.share([]shape.Part{{Text: content}, {Text: joined, Lines: true}}, p)
	if !changed {
		return chain.Truncation{}, false, nil
	}
	if out[0] != content {
		if err := o.set("content", out[0]); err != nil {
			return chain.Truncation{}, false, err
		}
	}
	if out[1] != joined {
		if err := o.setNames(strings.Split(out[1], "\n"), false); err != nil {
			return chain.Truncation{}, false, err
		}
	}
	return t, true, nil
}

// capGlob fits a GlobOutput's file names, and says they were truncated.
func capGlob(o object, p shape.Policy) (chain.Truncation, bool, error) {
	names, err := o.strs("filenames")
	if err != nil {
		return chain.Truncation{}, false, err
	}
	out, t, changed := shape.Lines(names, p)
	if !changed {
		return chain.Truncation{}, false, nil
	}
	return t, true, o.setNames(out, true)
}

// setNames sets filenames to names, whose last entry may be the marker
// line of a cut between names, numFiles to the number of names it keeps,
// and, when truncated, truncated to true.
func (o object) setNames(names []string, truncated bool) error {
	if len(names) == 1 && names[0] == "" {
		// A budget too small even for the marker line kept nothing.
		names = []string{}
	}
	n := len(names)
	if n > 0 && cut.IsMarkerLine(names[n-1]) {
		n--
	}
	if err := o.set("filenames", names); err != nil {
		return err
	}
	if err := o.set("numFiles", n); err != nil {
		return err
	}
	if truncated {
		return o.set("truncated", true)
	}
	return nil
}

// paginationNote returns what Claude Code appends to the content of a Grep
// in content mode that its head_limit or offset cut (appliedLimit,
// appliedOffset in the tool's output), "" for any other: the model reads
// the content, then "\n\n[Showing results with pagination = limit: 250]"
// (", offset: N" too when an offset applied), as Claude Code 2.1 maps the
// output to its tool_result.
func paginationNote(o object) string {
	if !o.is("mode", "content") {
		return ""
	}
	// As Claude Code writes them: the limit when present (!== undefined),
	// the offset when truthy; a string's text without its quotes.
	var parts []string
	if raw := strings.TrimSpace(string(o.raw("appliedLimit"))); raw != "" {
		parts = append(parts, "limit: "+strings.Trim(raw, `"`))
	}
	switch raw := strings.TrimSpace(string(o.raw("appliedOffset"))); raw {
	case "", "0", "null", "false", `""`:
	default:
		parts = append(parts, "offset: "+strings.Trim(raw, `"`))
	}
	if len(parts) == 0 {
		return ""
	}
	return "\n\n[Showing results with pagination = " + strings.Join(parts, ", ") + "]"
}

// reserve returns p with the room of note, which the client adds to what
// it shows the model, taken from its limits, but never below half of each:
// the result and the note together are within the limits unless the note
// is longer than half of them (a limit of a hundred bytes or so).
func reserve(p shape.Policy, note string) shape.Policy {
	p.MaxBytes = max(p.MaxBytes-len(note), p.MaxBytes/2)
	if p.HoldsTokens() {
		p.MaxTokens = max(p.MaxTokens-p.Counter.Count(note), p.MaxTokens/2)
	}
	return p
}
