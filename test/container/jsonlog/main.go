// Command jsonlog checks a log read on standard input line by line: each
// line is a JSON object with an RFC 3339 "@timestamp", an "@level" and an
// "@message", as toolcap --log-format json writes them. It exits 1 naming
// the first line that is not, or when there is no line at all.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

func main() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			fail("line %d is not JSON (%v): %q", n, err, sc.Text())
		}
		ts, _ := m["@timestamp"].(string)
		if _, err := time.Parse(time.RFC3339, ts); err != nil {
			fail("line %d: @timestamp %q is not RFC 3339: %q", n, ts, sc.Text())
		}
		for _, k := range []string{"@level", "@message"} {
			if s, _ := m[k].(string); s == "" {
				fail("line %d has no %s: %q", n, k, sc.Text())
			}
		}
	}
	if err := sc.Err(); err != nil {
		fail("%v", err)
	}
	if n == 0 {
		fail("no log line")
	}
	fmt.Printf("jsonlog: %d lines, each JSON with @timestamp, @level and @message\n", n)
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "jsonlog: "+format+"\n", args...)
	os.Exit(1)
}
