package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
)

// A cut that keeps the rest: the marker names the read, inside the limit,
// and the read tool answers the next page, whose marker names the next
// offset.
func ExampleKeeper_Text() {
	k, err := rest.NewKeeper(rest.NewMemory(rest.Config{}))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := rest.WithScope(context.Background(), "session-1")
	var b strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&b, "line %03d\n", i)
	}
	p := shape.Policy{MaxBytes: 200, KeepRest: true}
	out, t, _ := k.Text(ctx, b.String(), p)
	fmt.Println(len(out), strings.ReplaceAll(out, t.Ref, "REF"))

	args, _ := json.Marshal(rest.ReadArgs{Ref: t.Ref, Offset: int64(t.Resume)})
	page, err := k.Read(ctx, args, p)
	fmt.Println(strings.ReplaceAll(page, t.Ref, "REF"), err)
	// Output:
	// 200 line 001
	// line 002
	// line 003
	// line 004
	// line 005
	// line 006
	// line 007
	// line 00
	// [truncated: 830 bytes dropped, refine your query or read the rest: toolcap_read {"ref":"REF","offset":70}]
	// 8
	// line 009
	// line 010
	// line 011
	// line 012
	// line 013
	// line 014
	// line 015
	// line
	// [truncated: 761 bytes dropped, refine your query or read the rest: toolcap_read {"ref":"REF","offset":139}] <nil>
}

// With a pattern, the read tool answers the matching lines of the whole
// output, each with its byte offset, as grep -b does.
func ExampleKeeper_Read_pattern() {
	k, _ := rest.NewKeeper(rest.NewMemory(rest.Config{}))
	ctx := rest.WithScope(context.Background(), "session-1")
	var b strings.Builder
	for i := 1; i <= 1000; i++ {
		status := "ok"
		if i%250 == 0 {
			status = "FAIL"
		}
		fmt.Fprintf(&b, "--- %s: TestCase%d\n", status, i)
	}
	_, t, _ := k.Text(ctx, b.String(), shape.Policy{MaxBytes: 300, KeepRest: true})
	args, _ := json.Marshal(rest.ReadArgs{Ref: t.Ref, Pattern: "FAIL"})
	matches, err := k.Read(ctx, args, shape.Policy{MaxBytes: 16384})
	fmt.Print(matches, err)
	// Output:
	// 4872:--- FAIL: TestCase250
	// 9874:--- FAIL: TestCase500
	// 14876:--- FAIL: TestCase750
	// 19878:--- FAIL: TestCase1000
	// <nil>
}

// A structured value that mirrors a text the keeper cut and kept, as
// {"content": text}: the marker at the end of its cut string names the read
// of the kept text from where that string's head ends, written in JSON.
func ExampleKeeper_JSONKept() {
	k, _ := rest.NewKeeper(rest.NewMemory(rest.Config{}))
	ctx := rest.WithScope(context.Background(), "session-1")
	var b strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&b, "line %03d\n", i)
	}
	text := b.String()
	p := shape.Policy{MaxBytes: 250, KeepRest: true}
	_, t, _ := k.Text(ctx, text, p)

	raw, _ := json.Marshal(map[string]string{"content": text})
	cutAt := func(q shape.Policy) (shape.Structured, bool) { return shape.JSON(raw, q, nil) }
	sc, _ := k.JSONKept(raw, p, t.Ref, text, len(text), nil, cutAt)
	fmt.Println(len(sc.Raw), sc.Figures.Resume, strings.ReplaceAll(string(sc.Raw), t.Ref, "REF"))

	var v struct{ Content string }
	_ = json.Unmarshal(sc.Raw, &v)
	fmt.Println(strings.ReplaceAll(v.Content, t.Ref, "REF"))
	// Output:
	// 247 87 {"content":"line 001\nline 002\nline 003\nline 004\nline 005\nline 006\nline 007\nline 008\nline 009\nline 0\n[truncated: 813 bytes dropped, refine your query or read the rest: toolcap_read {\"ref\":\"REF\",\"offset\":87}]"}
	// line 001
	// line 002
	// line 003
	// line 004
	// line 005
	// line 006
	// line 007
	// line 008
	// line 009
	// line 0
	// [truncated: 813 bytes dropped, refine your query or read the rest: toolcap_read {"ref":"REF","offset":87}]
}
