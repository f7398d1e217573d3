package claudecode

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The pageable form of a JSON text has its strings' \n escapes as line
// breaks and nothing else changed, and at maps every offset of the text to
// the same byte of the form.
func TestPageable(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"mirrored text", `{"content":"a\nb\nc"}`, "{\"content\":\"a\nb\nc\"}"},
		{"escaped backslash before n", `["x\\n","y\n"]`, "[\"x\\\\n\",\"y\n\"]"},
		{"escaped quote", `{"k":"say \"hi\"\nbye"}`, "{\"k\":\"say \\\"hi\\\"\nbye\"}"},
		{"a key with an escape", `{"a\nb":1}`, "{\"a\nb\":1}"},
		{"other escapes kept", `["\t\r\u00e9\n"]`, "[\"\\t\\r\\u00e9\n\"]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !json.Valid([]byte(tt.in)) {
				t.Fatalf("%s is not JSON", tt.in)
			}
			got, at := pageable(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("pageable(%s) mismatch (-want +got):\n%s", tt.in, diff)
			}
			for i := range len(tt.in) {
				j := at(i)
				if tt.in[i] == 'n' && i > 0 && tt.in[i-1] == '\\' && got[j] == '\n' {
					continue // inside an escape turned newline
				}
				if tt.in[i] == '\\' && i+1 < len(tt.in) && tt.in[i+1] == 'n' && got[j] == '\n' {
					continue
				}
				if got[j] != tt.in[i] {
					t.Fatalf("at(%d) = %d: %q in the form, %q in the text", i, j, got[j], tt.in[i])
				}
			}
			if at(len(tt.in)) != len(got) {
				t.Errorf("at(end) = %d, want %d", at(len(tt.in)), len(got))
			}
		})
	}
	if pageableJSON(`{"a":"no line breaks"}`) || pageableJSON("plain\\ntext") || !pageableJSON(`{"a":"b\nc"}`) || pageableJSON(`{"a":"b\n`) {
		t.Error("pageableJSON: want only valid JSON objects and arrays whose strings hold \\n")
	}
	if strings.Count(func() string { s, _ := pageable(`{"c":"` + strings.Repeat(`line\n`, 1000) + `"}`); return s }(), "\n") != 1000 {
		t.Error("a text of 1000 lines does not page as 1000 lines")
	}
}
