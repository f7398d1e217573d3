package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"unsafe"

	"github.com/toolcap/toolcap/internal/hugepage"
	"github.com/toolcap/toolcap/internal/wire"
)

// EventPostToolUse is the hook_event_name of the payload Claude Code sends
// after a tool ran, and the hookEventName of the reply to it.
const EventPostToolUse = "PostToolUse"

// Input is the part of Claude Code's PostToolUse payload (the
// PostToolUseHookInput type of @anthropic-ai/claude-agent-sdk) a hook
// needs to cap a tool's output. The other fields of the payload (cwd,
// transcript_path, ...) are ignored.
type Input struct {
	// HookEventName is "PostToolUse" ([EventPostToolUse]).
	HookEventName string `json:"hook_event_name"`
	// ToolName is the tool's name as Claude Code knows it: Bash, Read,
	// Grep, Glob, WebFetch, or mcp__SERVER__TOOL for an MCP tool. A
	// manifest's per_tool keys use these names.
	ToolName string `json:"tool_name"`
	// ToolUseID identifies the call, for logs.
	ToolUseID string `json:"tool_use_id"`
	// SessionID is Claude Code's session: the scope of what the hook
	// keeps of a cut output ([Hook]).
	SessionID string `json:"session_id"`
	// ToolInput is the tool's input as JSON, such as Read's file_path,
	// offset and limit.
	ToolInput json.RawMessage `json:"tool_input"`
	// ToolResponse is the tool's output, in the tool's own shape, as JSON.
	ToolResponse json.RawMessage `json:"tool_response"`

	// SessionIDLength is the length, as written, of a session_id longer
	// than the hook takes (maxSessionID): SessionID is then empty, and
	// nothing of the output is kept. 0 otherwise.
	SessionIDLength int `json:"-"`
}

// maxSessionID bounds the session_id the hook uses, as written in the
// payload: Claude Code's is a UUID (38 bytes with its quotes). A longer
// one is not held, nor made a scope of the store: the output is cut
// without keeping the rest, and the hook says why (issue 39, item 11).
const maxSessionID = 256

// keepsNothing returns why nothing of in's output may be kept, or "".
func (in Input) keepsNothing() string {
	if in.SessionIDLength == 0 {
		return ""
	}
	return fmt.Sprintf("session_id: %d bytes, over the %d a session id may be: the output is cut without keeping the rest", in.SessionIDLength, maxSessionID)
}

// Reply is what a PostToolUse hook prints to replace a tool's output: a
// SyncHookJSONOutput holding a PostToolUseHookSpecificOutput.
type Reply struct {
	// HookSpecificOutput holds the replacement output.
	HookSpecificOutput HookSpecificOutput `json:"hookSpecificOutput"`
}

// HookSpecificOutput is the PostToolUse part of a [Reply].
type HookSpecificOutput struct {
	// HookEventName is "PostToolUse" ([EventPostToolUse]).
	HookEventName string `json:"hookEventName"`
	// UpdatedToolOutput replaces the tool's output before the model reads
	// it. Claude Code does not check its shape; [CapToolResponse] keeps the
	// tool's own.
	UpdatedToolOutput json.RawMessage `json:"updatedToolOutput"`
}

// MaxPayload is the longest payload [Hook.ReadCap] reads: 4 GiB. A
// payload longer than [StreamAbove] is read through a bounded buffer and
// cut as it streams, in memory bounded by the tool's limits and in time
// linear in its length (about 2 seconds for 1 GiB), so the bound is one of
// time: Claude Code gives a hook 60 seconds, and 4 GiB is read well within
// them. Past it the hook leaves the output to Claude Code (the error is
// [ErrPayloadTooLarge]). Claude Code saves a long output to a file itself
// and hands hooks a preview (Bash past 30,000 characters, an MCP tool past
// about 50,000), so no payload of its own comes near the bound.
const MaxPayload = 4 << 30

// MaxInput is the longest payload [ReadInput] reads: 256 MiB. ReadInput
// holds the payload whole, and a cut of it holds a few times that; a hook
// reads with [Hook.ReadCap], which holds a bounded part of a long one.
const MaxInput = 256 << 20

// ErrPayloadTooLarge is the error of [ReadInput] and [Hook.ReadCap] for a
// payload longer than they read ([MaxInput], [MaxPayload]): errors.Is
// finds it in the error, which names the bound.
var ErrPayloadTooLarge = errors.New("the payload is too long")

// tooLarge is the error of a payload longer than its bound, in bytes.
type tooLarge int64

func (e tooLarge) Error() string {
	if e%(1<<30) == 0 {
		return fmt.Sprintf("the payload is longer than %d GiB", e>>30)
	}
	return fmt.Sprintf("the payload is longer than %d MiB", e>>20)
}

// Is makes errors.Is find ErrPayloadTooLarge.
func (e tooLarge) Is(target error) bool { return target == ErrPayloadTooLarge }

// ReadInput reads a PostToolUse payload from r to its end, at most
// [MaxInput] bytes, and holds it whole. The error says what is wrong in
// words a user can act on: r could not be read, the payload is too long
// ([ErrPayloadTooLarge]; r is then read no further), it is not a JSON
// object, it is another event's payload (the hook is registered under the
// wrong event), or it names no tool.
func ReadInput(r io.Reader) (Input, error) {
	data, err := readBounded(r, MaxInput)
	if err != nil {
		return Input{}, err
	}
	return ParseInput(data)
}

// readChunk is the first chunk readBounded reads into: most payloads
// (a short Bash output, a Read of a small file) fit in it.
const readChunk = 64 << 10

// readBounded reads r to its end into one slice of exactly its length,
// at most limit bytes (tooLarge past them).
func readBounded(r io.Reader, limit int) ([]byte, error) {
	data, _, more, err := readPrefix(r, limit)
	if err == nil && more != nil {
		err = tooLarge(limit)
	}
	return data, err
}

// readPrefix reads r to its end into one slice of exactly its length while
// it is at most limit bytes long, and returns with it spare, the bytes of
// its buffer past it, in which the payload's long strings can be decoded
// (decoder.spare). When r goes on, it returns instead more, which reads it
// from its start: what was read of it (more than limit bytes), then the
// rest of r.
//
// A reader that knows its length (a file, a bytes.Reader) is read into a
// buffer of that length and as many bytes again of spare; any other (a
// pipe, as Claude Code gives a hook) into a first chunk of readChunk bytes
// and, when it goes on, into one buffer of the bound (payloadBuf,
// StreamAbove bytes at most, doubled past them for ReadInput's). Nothing
// is copied but the first chunk: a short process (the hook) pays for each
// page of memory it touches first, a fault, and a buffer of the bound
// costs it only the pages the payload fills, where chunks joined or a
// slice grown by doubling touch about twice the payload.
func readPrefix(r io.Reader, limit int) (data, spare []byte, more io.Reader, err error) {
	var buf []byte
	if n, ok := knownLen(r); ok && n < limit && n >= readChunk {
		// One more byte sees the end; as many again are the spare.
		buf = payloadBuf(2*n + 1)
	} else if ok && n < limit {
		buf = make([]byte, n+1)
	} else {
		buf = make([]byte, min(readChunk, limit+1))
	}
	n, err := io.ReadFull(r, buf)
	for err == nil && n <= limit {
		// Longer than the buffer: the rest goes after what was read.
		next := payloadBuf(min(limit, max(StreamAbove, 2*n)) + 1)
		copy(next, buf[:n])
		var m int
		m, err = io.ReadFull(r, next[n:])
		buf, n = next, n+m
	}
	switch {
	case n > limit:
		return nil, nil, io.MultiReader(bytes.NewReader(buf[:n]), r), nil
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return buf[:n:n], buf[n:], nil, nil
	}
	return nil, nil, nil, fmt.Errorf("reading the payload: %w", err)
}

// payloadBuf returns a buffer of n bytes for a payload longer than
// readChunk, which starts on a huge page's boundary and which the system
// is advised to back with huge pages (hugepage.Advise): where a fault of each
// 4 KiB page costs a few microseconds (more in a virtual machine), the
// payload and its decoded text, a megabyte each, cost a few faults
// rather than hundreds. In a fresh process the buffer is memory fresh
// from the system, which the runtime does not clear: what the payload
// does not fill is never touched.
func payloadBuf(n int) []byte {
	b := make([]byte, n+hugepage.Size)
	// The first boundary past the allocation's first byte: a huge page
	// is used only where no small page was touched before the advice.
	off := hugepage.Size - int(uintptr(unsafe.Pointer(unsafe.SliceData(b)))%hugepage.Size)
	b = b[off : off+n : off+n]
	hugepage.Advise(b)
	return b
}

// knownLen returns the bytes left in r when r knows them.
func knownLen(r io.Reader) (int, bool) {
	switch r := r.(type) {
	case interface{ Len() int }:
		return r.Len(), true
	case *os.File:
		fi, err := r.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return 0, false
		}
		off, err := r.Seek(0, io.SeekCurrent)
		if err != nil || off > fi.Size() {
			return 0, false
		}
		return int(fi.Size() - off), true
	}
	return 0, false
}

// ParseInput is [ReadInput] for a payload already in memory. The payload's
// members are split without decoding the tool's output, which is kept as
// a slice of data (no copy) and decoded by [CapToolResponse] alone, once: output
// nested deeper than encoding/json decodes is still a payload, whose output
// is then cut as text rather than passed on uncapped.
func ParseInput(data []byte) (Input, error) {
	members, err := wire.SplitObject(data)
	if err != nil {
		return Input{}, fmt.Errorf("the payload is not a JSON hook payload: %w", err)
	}
	var in Input
	if err := in.envelope(members); err != nil {
		return Input{}, err
	}
	in.ToolResponse = members["tool_response"]
	in.ToolInput = members["tool_input"]
	return in, nil
}

// envelope sets in's string members from members, the payload's top level
// (as written), and checks that it is a PostToolUse payload that names a
// tool: what a payload read whole and one read as it streams share.
func (in *Input) envelope(members map[string]json.RawMessage) error {
	for _, f := range []struct {
		key string
		dst *string
	}{
		{"hook_event_name", &in.HookEventName},
		{"tool_name", &in.ToolName},
		{"tool_use_id", &in.ToolUseID},
		{"session_id", &in.SessionID},
	} {
		raw, ok := members[f.key]
		if !ok || string(raw) == "null" {
			continue
		}
		if f.dst == &in.SessionID && len(raw) > maxSessionID {
			in.SessionIDLength = len(raw)
			continue
		}
		s, err := wire.Unquote(raw)
		if err != nil {
			return fmt.Errorf("the payload is not a JSON hook payload: %s: %w", f.key, err)
		}
		*f.dst = s
	}
	switch {
	case in.HookEventName != EventPostToolUse:
		return fmt.Errorf("hook_event_name is %q, not %q: register the hook under %s", in.HookEventName, EventPostToolUse, EventPostToolUse)
	case in.ToolName == "":
		return errors.New("the payload has no tool_name")
	}
	return nil
}

// MarshalReply returns the reply that replaces a tool's output with
// updated, as one line of JSON without its newline.
func MarshalReply(updated json.RawMessage) ([]byte, error) {
	return marshal(Reply{HookSpecificOutput: HookSpecificOutput{
		HookEventName:     EventPostToolUse,
		UpdatedToolOutput: updated,
	}})
}

// marshal is json.Marshal without HTML escaping (a tool's output is no
// web page: "<" stays "<") and without the encoder's trailing newline.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
