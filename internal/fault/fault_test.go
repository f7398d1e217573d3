package fault_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/internal/fault"
)

func TestWriteJSONDecodesToPrefix(t *testing.T) {
	for _, n := range []int64{0, 1, fault.UnitLen - 1, fault.UnitLen, fault.UnitLen + 7, 100_000, 1<<20 + 1} {
		var b bytes.Buffer
		b.WriteByte('"')
		if err := fault.WriteJSON(&b, n); err != nil {
			t.Fatal(err)
		}
		b.WriteByte('"')
		var got string
		if err := json.Unmarshal(b.Bytes(), &got); err != nil {
			t.Fatalf("n=%d: the written text is not a JSON string: %v", n, err)
		}
		if int64(len(got)) != n || !utf8.ValidString(got) {
			t.Errorf("n=%d: decoded %d bytes, valid UTF-8 %v", n, len(got), utf8.ValidString(got))
		}
		if diff := cmp.Diff(fault.Prefix(n, n), got); diff != "" {
			t.Errorf("n=%d: WriteJSON differs from Prefix (-want +got):\n%s", n, diff)
		}
		if k := n / 3; fault.Prefix(n, k) != got[:k] {
			t.Errorf("n=%d: Prefix(n, %d) is not the first %d bytes", n, k, k)
		}
	}
}

func TestNonMCPResultIsJSON(t *testing.T) {
	if !json.Valid([]byte(fault.NonMCPResult)) {
		t.Fatalf("NonMCPResult is not valid JSON: %s", fault.NonMCPResult)
	}
}
