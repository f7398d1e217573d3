// Command dump prints the samples of gitleaks' rule tests as JSON, an
// array of ruletest.Case: the tests of the toolcap command, in a module
// of its own, run them through its commands.
package main

import (
	"encoding/json"
	"log"
	"os"

	"github.com/toolcap/toolcap/redact/gitleaks/internal/ruletest"
)

func main() {
	cases, err := ruletest.Load(os.Args[1:]...)
	if err != nil {
		log.Fatal(err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(cases); err != nil {
		log.Fatal(err)
	}
}
