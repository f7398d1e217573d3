package redact_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/redact"
)

// token returns n characters drawn from alphabet by r.
func token(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

const (
	alnum   = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	upper27 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	keyish  = alnum + "_-"
)

// samples returns one secret of each built-in rule, made as gitleaks'
// rule tests make theirs (a prefix and random characters of the rule's
// alphabet), with the rule that must find it.
func samples() map[string]string {
	r := rand.New(rand.NewPCG(1, 2))
	return map[string]string{
		"aws-access-token":        "AKIA" + token(r, upper27, 16),
		"github-pat":              "ghp_" + token(r, alnum, 36),
		"github-fine-grained-pat": "github_pat_" + token(r, alnum+"_", 82),
		"github-oauth":            "gho_" + token(r, alnum, 36),
		"github-app-token":        "ghs_" + token(r, alnum, 36),
		"github-refresh-token":    "ghr_" + token(r, alnum, 36),
		"anthropic-api-key":       "sk-ant-api03-" + token(r, keyish, 93) + "AA",
		"anthropic-admin-api-key": "sk-ant-admin01-" + token(r, keyish, 93) + "AA",
		"openai-api-key":          "sk-proj-" + token(r, keyish, 74) + "T3BlbkFJ" + token(r, keyish, 74),
		"jwt":                     "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VybmFtZTpib2IifQ.HcfCW67Uda-0gz54ZWTqmtgJnZeNem0Q757eTa9EZuw",
		"private-key":             "-----BEGIN RSA PRIVATE KEY-----\n" + token(r, alnum+"+/", 64) + "\n" + token(r, alnum+"+/", 64) + "\n-----END RSA PRIVATE KEY-----",
	}
}

// TestBuiltinFinds: each built-in rule finds its secret in the contexts a
// tool prints one in, and the text around it is kept.
func TestBuiltinFinds(t *testing.T) {
	d := redact.New(redact.Builtin(), nil)
	for rule, secret := range samples() {
		for _, context := range []string{"%s", "key = %s\n", `{"token":"%s"}`, "export TOKEN='%s'; echo done", "line 1\n%s\nline 3"} {
			text := fmt.Sprintf(context, secret)
			got, counts := redact.Text(text, d)
			want := fmt.Sprintf(context, "[redacted: "+rule+"]")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s in %q (-want +got):\n%s", rule, context, diff)
			}
			if diff := cmp.Diff(map[string]int{rule: 1}, counts); diff != "" {
				t.Errorf("%s in %q: counts (-want +got):\n%s", rule, context, diff)
			}
		}
	}
}

// TestBuiltinLeaves: text that only looks like a secret comes through
// unchanged: gitleaks' own false positives for these rules, placeholders,
// and everyday tool output.
func TestBuiltinLeaves(t *testing.T) {
	d := redact.New(redact.Builtin(), nil)
	for _, text := range []string{
		`key = AKIAXXXXXXXXXXXXXXXX`,           // low entropy
		`aws_access_key: AKIAIOSFODNN7EXAMPLE`, // AWS's documented example
		`msgstr "Näytä asiakirjamallikansio."`,
		`TODAYINASIAASACKOFRICEFELLOVER`,
		"-----BEGIN OPENSSH PRIVATE KEY----------END OPENSSH PRIVATE KEY-----",
		"ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"https://github.com/toolcap/toolcap.git",
		"postgres://db.internal:5432/app?sslmode=disable",
		"https://user:xxxxx@example.com/foo", // net/url's Redacted
		"Get \"http://user:***@dummy.faketld/\"",
		"DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app",
		"func (d *Rules) Find(text string) []Finding {",
		"ok  \tgithub.com/toolcap/toolcap/redact\t0.012s",
	} {
		if got, counts := redact.Text(text, d); got != text || counts != nil {
			t.Errorf("Text(%q) = %q, %v; want it unchanged", text, got, counts)
		}
	}
}

func TestURLPassword(t *testing.T) {
	d := redact.New(redact.Builtin(), nil)
	got, _ := redact.Text("DATABASE_URL=postgres://app:s3cr3t-P4ss@db:5432/app", d)
	if want := "DATABASE_URL=postgres://app:[redacted: url-password]@db:5432/app"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestAllow(t *testing.T) {
	secret := samples()["github-pat"]
	d := redact.New(redact.Builtin(), []*regexp.Regexp{regexp.MustCompile(regexp.QuoteMeta(secret))})
	if got, _ := redact.Text("token: "+secret, d); got != "token: "+secret {
		t.Errorf("an allowed secret was redacted: %q", got)
	}
}

// TestOverlapsMerge: findings that overlap are made one, named by the one
// that starts first (the longer of two that start together), so that no
// byte of a secret is left.
func TestOverlapsMerge(t *testing.T) {
	d := redact.New([]redact.Rule{
		{ID: "short", Pattern: regexp.MustCompile(`bcd`), MaxLen: 3},
		{ID: "long", Pattern: regexp.MustCompile(`abcde`), MaxLen: 5},
		{ID: "late", Pattern: regexp.MustCompile(`def`), MaxLen: 3},
	}, nil)
	got, counts := redact.Text("xabcdefx", d)
	if want := "x[redacted: long]x"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if diff := cmp.Diff(map[string]int{"long": 1}, counts); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}

// stream is a text with every built-in rule's secret in it, between
// lines of a build log.
func stream() (string, int) {
	var b strings.Builder
	n := 0
	for i := range 3 {
		for rule, secret := range samples() {
			fmt.Fprintf(&b, "step %d: building %s\n", i, rule)
			fmt.Fprintf(&b, "  env TOKEN=%s\n", secret)
			n++
		}
	}
	return b.String(), n
}

// TestWriterSplitAnywhere: a secret split across two writes, at every
// offset of the stream, is found as in the whole text.
func TestWriterSplitAnywhere(t *testing.T) {
	d := redact.New(redact.Builtin(), nil)
	text, n := stream()
	want, wantCounts := redact.Text(text, d)
	if total(wantCounts) != n {
		t.Fatalf("Text found %d secrets, want %d", total(wantCounts), n)
	}
	for at := 0; at <= len(text); at++ {
		var out bytes.Buffer
		w := redact.NewWriter(&out, d)
		w.Write([]byte(text[:at]))
		w.Write([]byte(text[at:]))
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("split at %d: the output differs from Text's:\n%s", at, cmp.Diff(want, out.String()))
		}
		if diff := cmp.Diff(wantCounts, w.Counts()); diff != "" {
			t.Fatalf("split at %d: counts (-want +got):\n%s", at, diff)
		}
	}
}

// TestWriterLongStream: a stream many times the Writer's window, written
// in pieces of every size, gives Text's output.
func TestWriterLongStream(t *testing.T) {
	d := redact.New(redact.Builtin(), nil)
	one, _ := stream()
	text := strings.Repeat(one+strings.Repeat("log line without a secret\n", 2000), 8) // about 600 KB
	want, _ := redact.Text(text, d)
	r := rand.New(rand.NewPCG(3, 4))
	for _, piece := range []int{1, 7, 4096, 100000, len(text)} {
		var out bytes.Buffer
		w := redact.NewWriter(&out, d)
		for rest := text; rest != ""; {
			k := min(len(rest), 1+r.IntN(piece))
			w.Write([]byte(rest[:k]))
			rest = rest[k:]
		}
		w.Close()
		if out.String() != want {
			t.Errorf("pieces of up to %d bytes: the output differs from Text's", piece)
		}
	}
}

func TestWriterNilDetector(t *testing.T) {
	var out bytes.Buffer
	w := redact.NewWriter(&out, nil)
	w.Write([]byte("AKIA" + strings.Repeat("Z", 16)))
	w.Close()
	if out.String() != "AKIA"+strings.Repeat("Z", 16) || w.Counts() != nil {
		t.Errorf("a nil detector changed the stream: %q %v", out.String(), w.Counts())
	}
}

func ExampleText() {
	d := redact.New(redact.Builtin(), nil)
	out, counts := redact.Text("export AWS_ACCESS_KEY_ID=AKIA2OGYBAH6STMMNXNN\nexport REGION=eu-west-1\n", d)
	fmt.Print(out)
	fmt.Println(counts)
	// Output:
	// export AWS_ACCESS_KEY_ID=[redacted: aws-access-token]
	// export REGION=eu-west-1
	// map[aws-access-token:1]
}

func BenchmarkText(b *testing.B) {
	d := redact.New(redact.Builtin(), nil)
	clean := strings.Repeat("src/internal/cut/json.go:120: func structuralPrefix(doc []byte) int {\n", 240)[:16<<10]
	one, _ := stream()
	log := strings.Repeat(strings.Repeat("=== RUN TestSomething\n--- PASS: TestSomething (0.00s)\n", 400)+one, 41)[:1<<20]
	for _, bc := range []struct {
		name string
		text string
	}{{"16KiB-clean", clean}, {"1MiB-log", log}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.text)))
			for b.Loop() {
				redact.Text(bc.text, d)
			}
		})
	}
}

// TestReader: reading through a Reader, a byte at a time or at once,
// gives Text's output; a read error ends it without passing on what it
// held back.
func TestReader(t *testing.T) {
	d := redact.New(redact.Builtin(), nil)
	text, n := stream()
	want, _ := redact.Text(text, d)
	for name, r := range map[string]io.Reader{
		"whole":       strings.NewReader(text),
		"byte a time": iotest.OneByteReader(strings.NewReader(text)),
	} {
		rr := redact.NewReader(r, d)
		got, err := io.ReadAll(rr)
		if err != nil || string(got) != want || total(rr.Counts()) != n {
			t.Errorf("%s: err %v, %d secrets, output equal to Text's: %v", name, err, total(rr.Counts()), string(got) == want)
		}
	}
	secret := samples()["github-pat"]
	broken := io.MultiReader(strings.NewReader("token "+secret[:10]), iotest.ErrReader(errors.New("pipe broke")))
	got, err := io.ReadAll(redact.NewReader(broken, d))
	if err == nil || err.Error() != "pipe broke" || strings.Contains(string(got), secret[:10]) {
		t.Errorf("a broken read: %q, %v; want the error and none of the held-back text", got, err)
	}
}

// total adds up counts.
func total(counts map[string]int) int {
	n := 0
	for _, k := range counts {
		n += k
	}
	return n
}
