package worker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/logtest"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/worker"
)

// TestRedactBeforeCapAndStore: a tool's output with secrets, over its
// limit, with the rest kept. The redact stage runs below the cap, so the
// result, the marker's N, the kept entry read back in full and the log
// hold no secret, and the figures count what the model does not see of
// the redacted text (issue 37). The token in the URL is found by two
// rules, github-pat and url-password, at the same bytes: the first listed
// names it.
func TestRedactBeforeCapAndStore(t *testing.T) {
	const aws, pat = "AKIA2OGYBAH6STMMNXNN", "ghp_R8xk2QbT0vWcYp4mLzN7aJ1sHdE9gUf3KiO6"
	var b strings.Builder
	fmt.Fprintf(&b, "export AWS_ACCESS_KEY_ID=%s\n", aws)
	for i := range 800 {
		fmt.Fprintf(&b, "line %04d of a long listing\n", i)
	}
	fmt.Fprintf(&b, "git remote: https://x-access-token:%s@github.com/o/r.git\n", pat)
	out := b.String()
	env := worker.Func("Env", func(context.Context, json.RawMessage) (worker.ToolOutput, error) {
		s := out
		return worker.ToolOutput{Content: &s}, nil
	})
	var logs bytes.Buffer
	w, err := worker.New([]worker.Tool{env}, worker.WithRest(rest.NewMemory(rest.Config{})), worker.WithLogger(logtest.New(&logs, hclog.Info)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := rest.WithScope(context.Background(), "conversation")
	res := w.ExecuteTools(ctx, []chain.Call{{ID: "1", Tool: "Env"}})[0]

	redacted := strings.Replace(strings.Replace(out, aws, "[redacted: aws-access-token]", 1), pat, "[redacted: github-pat]", 1)
	if diff := cmp.Diff(map[string]int{"aws-access-token": 1, "github-pat": 1}, res.Redactions()); diff != "" {
		t.Errorf("Redactions (-want +got):\n%s", diff)
	}
	tr, ok := res.Truncation()
	if !ok || tr.OriginalBytes != len(redacted) {
		t.Fatalf("Truncation = %+v, %v; want a cut of the %d redacted bytes", tr, ok, len(redacted))
	}
	ms := cut.FindMarkers(*res.Content)
	if len(ms) != 1 || ms[0].Rest == nil {
		t.Fatalf("no marker naming the rest in %q", *res.Content)
	}
	if shown := ms[0].Start; shown+ms[0].N != len(redacted) && shown-1+ms[0].N != len(redacted) {
		t.Errorf("marker N %d with %d bytes shown, want the redacted text's %d bytes", ms[0].N, shown, len(redacted))
	}
	args := fmt.Sprintf(`{"ref":%q,"offset":0}`, tr.Ref)
	if back := follow(t, ctx, w, ms[0].Rest.Tool, args); back != redacted {
		t.Errorf("the kept entry, read back, is not the redacted output (%d bytes, want %d)", len(back), len(redacted))
	}
	for _, secret := range []string{aws, pat} {
		if strings.Contains(*res.Content, secret) || strings.Contains(logs.String(), secret) {
			t.Errorf("%s reached the result or the log", secret)
		}
	}
	var found bool
	for _, l := range logtest.Lines(t, &logs) {
		if l["@message"] == "redacted secrets" {
			found = true
			if l["rules"] != "aws-access-token=1 github-pat=1" || l["redactions"] != float64(2) || l["tool"] != "Env" {
				t.Errorf("log line %v", l)
			}
		}
	}
	if !found {
		t.Errorf("no log line names the redaction:\n%s", logs.String())
	}
}
