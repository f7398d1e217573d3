package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/toolcap/toolcap/internal/cut"
)

// Definition is the read tool as a front end advertises it to the model:
// the name, description and JSON schema of an MCP tool or of a function
// an LLM API calls.
type Definition struct {
	Name        string
	Description string
	// Title is a short name for people, as MCP's tool title.
	Title string
	// InputSchema is the JSON schema of the arguments, a JSON object.
	InputSchema json.RawMessage
	// Annotations are MCP's tool annotations, a JSON object: the read
	// tool only reads what toolcap kept (readOnlyHint, idempotentHint)
	// and reaches nothing outside it (openWorldHint false). A client such
	// as Codex runs a tool without asking only when it is marked so.
	Annotations json.RawMessage
}

// title is the read tool's title.
const title = "Read the rest of a cut tool output"

// annotations are the read tool's MCP annotations.
const annotations = `{"title":"` + title + `","readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}`

// description is what the model reads of the read tool.
const description = "Read the rest of a tool output that was cut. A cut output ends with a marker such as " +
	`[truncated: N bytes dropped, refine your query or read the rest: TOOL {"ref":"…","offset":K}]; ` +
	"call this tool with exactly those arguments to get the next page, whose own marker names the next offset. " +
	"offset is in bytes of the whole output. With pattern (an RE2 regular expression), it returns the lines of " +
	"the output at or after offset that match, each prefixed by its byte offset, like grep -b; " +
	"a line longer than 1 KiB (such as one-line JSON) is shown as 1 KiB around each match instead, prefixed by the offset of its first byte, " +
	"with … where the line goes on: read from that offset for more. A line longer than 256 KiB is searched in parts, " +
	"where a match longer than 64 KiB may be missed."

// schema is the JSON schema of the read tool's arguments.
const schema = `{"type":"object","properties":{` +
	`"ref":{"type":"string","description":"the ref a truncation marker names"},` +
	`"offset":{"type":"integer","minimum":0,"description":"where to start, in bytes of the whole output (default 0)"},` +
	`"length":{"type":"integer","minimum":1,"description":"the most bytes to return (default: as many as the limit holds)"},` +
	`"pattern":{"type":"string","description":"an RE2 regular expression: return the matching lines with their byte offsets"}` +
	`},"required":["ref"],"additionalProperties":false}`

// Definition returns the read tool's definition, under k's tool name.
func (k *Keeper) Definition() Definition {
	return Definition{
		Name:        k.tool,
		Title:       title,
		Description: description,
		InputSchema: json.RawMessage(schema),
		Annotations: json.RawMessage(annotations),
	}
}

// ReadArgs are the arguments of a call of the read tool.
type ReadArgs struct {
	// Ref names the entry.
	Ref string `json:"ref"`
	// Offset is where the page starts, in bytes of the whole output.
	Offset int64 `json:"offset,omitempty"`
	// Length bounds the page; 0 means as much as the limit holds.
	Length int64 `json:"length,omitempty"`
	// Pattern, when set, asks for the matching lines instead of a page.
	Pattern string `json:"pattern,omitempty"`
}

// MaxPattern is the longest pattern the read tool compiles.
const MaxPattern = 1024

// ParseReadArgs parses the arguments of a call of the read tool, strictly:
// an unknown member, a ref that is not a string, an offset that is not a
// whole number >= 0, a length that is not one >= 1, or a pattern longer
// than [MaxPattern] is an error naming the member and the value.
func ParseReadArgs(raw json.RawMessage) (ReadArgs, error) {
	var members map[string]json.RawMessage
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if len(bytes.TrimSpace(raw)) == 0 {
		return ReadArgs{}, errors.New("arguments: missing: want an object with ref")
	}
	if err := d.Decode(&members); err != nil || members == nil {
		return ReadArgs{}, fmt.Errorf("arguments: want a JSON object with ref, offset, length, pattern")
	}
	var a ReadArgs
	for name, v := range members {
		switch name {
		case "ref":
			if err := json.Unmarshal(v, &a.Ref); err != nil {
				return ReadArgs{}, fmt.Errorf("ref %s: want a string", clip(v))
			}
		case "offset":
			n, err := wholeNumber(v, 0)
			if err != nil {
				return ReadArgs{}, fmt.Errorf("offset %s: %v", clip(v), err)
			}
			a.Offset = n
		case "length":
			n, err := wholeNumber(v, 1)
			if err != nil {
				return ReadArgs{}, fmt.Errorf("length %s: %v", clip(v), err)
			}
			a.Length = n
		case "pattern":
			if err := json.Unmarshal(v, &a.Pattern); err != nil {
				return ReadArgs{}, fmt.Errorf("pattern %s: want a string", clip(v))
			}
			if len(a.Pattern) > MaxPattern {
				return ReadArgs{}, fmt.Errorf("pattern: %d bytes: at most %d", len(a.Pattern), MaxPattern)
			}
		default:
			return ReadArgs{}, fmt.Errorf("unknown argument %s: want ref, offset, length or pattern", strconv.Quote(clip([]byte(name))))
		}
	}
	if _, ok := members["ref"]; !ok {
		return ReadArgs{}, errors.New("ref: missing: call with the arguments a truncation marker names")
	}
	return a, nil
}

// wholeNumber parses a JSON number that is a whole number >= least (1.0
// and 1e3 are whole). A string is not one, whatever it holds: encoding/json
// would take "10" for the number 10 (issue 39, item 11).
func wholeNumber(v json.RawMessage, least int64) (int64, error) {
	if t := bytes.TrimSpace(v); len(t) > 0 && t[0] == '"' {
		return 0, fmt.Errorf("a string, not a number: want a whole number >= %d", least)
	}
	var n json.Number
	if err := json.Unmarshal(v, &n); err != nil {
		return 0, fmt.Errorf("want a whole number >= %d", least)
	}
	i, err := n.Int64()
	if err != nil {
		f, ferr := n.Float64()
		if ferr != nil || f != float64(int64(f)) {
			return 0, fmt.Errorf("want a whole number >= %d", least)
		}
		i = int64(f)
	}
	if i < least {
		return 0, fmt.Errorf("want a whole number >= %d", least)
	}
	return i, nil
}

// clip shortens a value an error shows.
func clip(v []byte) string {
	s := strings.TrimSpace(string(v))
	if len(s) > 64 {
		return s[:cut.FloorCharBoundary(s, 61)] + "..."
	}
	return s
}
