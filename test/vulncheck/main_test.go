package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestJudge(t *testing.T) {
	const (
		stdlibCalled = `{"finding":{"osv":"GO-1","fixed_version":"v1.26.9","trace":[{"module":"stdlib","version":"v1.26.8","package":"net/http","function":"Serve"}]}}`
		modRequired  = `{"finding":{"osv":"GO-2","fixed_version":"v1.2.0","trace":[{"module":"example.com/m","version":"v1.1.0"}]}}`
		modImported  = `{"finding":{"osv":"GO-2","fixed_version":"v1.2.0","trace":[{"module":"example.com/m","version":"v1.1.0","package":"example.com/m/p"}]}}`
		modCalled    = `{"finding":{"osv":"GO-3","fixed_version":"v0.5.0","trace":[{"module":"example.com/n","version":"v0.4.0","package":"example.com/n","function":"F"}]}}`
	)
	for _, tt := range []struct {
		name, in   string
		wantFailed bool
		wantLines  []string
	}{
		{"none", `{"config":{"protocol_version":"v1.0.0"}}`, false, []string{"no known vulnerability"}},
		{"the Go release's", stdlibCalled, false, []string{"GO-1  stdlib@v1.26.8  fixed in v1.26.9  (symbol)  the Go release's: build with 1.26.9 or later"}},
		{"a module, imported, its deepest finding", modRequired + modImported + modRequired, false, []string{"GO-2  example.com/m@v1.1.0  fixed in v1.2.0  (package)  not called"}},
		{"a module, called", stdlibCalled + modCalled, true, []string{
			"GO-1  stdlib@v1.26.8  fixed in v1.26.9  (symbol)  the Go release's: build with 1.26.9 or later",
			"GO-3  example.com/n@v0.4.0  fixed in v0.5.0  (symbol)  FAIL: called; upgrade the module",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			failed, err := judge(strings.NewReader(tt.in), &out)
			if err != nil {
				t.Fatal(err)
			}
			if failed != tt.wantFailed {
				t.Errorf("failed = %v, want %v", failed, tt.wantFailed)
			}
			if diff := cmp.Diff(tt.wantLines, strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := judge(strings.NewReader(`{"finding":`), &strings.Builder{}); err == nil {
		t.Error("judge of broken JSON: no error")
	}
}
