package gitleaks_test

import (
	"fmt"

	"github.com/toolcap/toolcap/redact"
	"github.com/toolcap/toolcap/redact/gitleaks"
)

func Example() {
	d := gitleaks.New() // once per process: a rule is compiled on first use
	out, counts := redact.Text(`$ env | grep -i -e key -e token
AWS_ACCESS_KEY_ID=AKIALALEMEL33243OLIB
GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345
EDITOR=vim
`, d)
	fmt.Print(out)
	fmt.Println(counts)
	// Output:
	// $ env | grep -i -e key -e token
	// AWS_ACCESS_KEY_ID=[redacted: aws-access-token]
	// GITHUB_TOKEN=[redacted: github-pat]
	// EDITOR=vim
	// map[aws-access-token:1 github-pat:1]
}
