// Command vulncheck judges govulncheck's findings for CI: it reads
// `govulncheck -format json` on standard input, prints each vulnerability
// found, and exits 1 when one is in a module the project requires (not
// the standard library) and the code reaches it (a finding at symbol
// level), so that such a dependency is upgraded before anything lands.
//
// A finding in the standard library is printed, not failed: it is fixed
// by the Go release a binary is built with, which the machine that builds
// it provides, not by any file of this repository. test/vulncheck/run.sh
// runs it for every module.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// finding is the part of a govulncheck finding this reads.
type finding struct {
	OSV          string `json:"osv"`
	FixedVersion string `json:"fixed_version"`
	Trace        []struct {
		Module   string `json:"module"`
		Version  string `json:"version"`
		Package  string `json:"package"`
		Function string `json:"function"`
	} `json:"trace"`
}

func main() {
	failed, err := judge(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vulncheck:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

// depth orders govulncheck's levels: a symbol the code calls is more than
// a package it imports, which is more than a module it requires.
var depth = map[string]int{"module": 0, "package": 1, "symbol": 2}

// judge reads the findings on r, writes one line per vulnerability on w,
// and reports whether one calls for a failure.
func judge(r io.Reader, w io.Writer) (bool, error) {
	type vuln struct {
		module, version, fixed, level string
	}
	vulns := map[string]vuln{}
	dec := json.NewDecoder(r)
	for {
		var msg struct {
			Finding *finding `json:"finding"`
		}
		err := dec.Decode(&msg)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return false, fmt.Errorf("reading govulncheck's JSON: %w", err)
		}
		f := msg.Finding
		if f == nil || len(f.Trace) == 0 {
			continue
		}
		level := "module"
		switch {
		case f.Trace[0].Function != "":
			level = "symbol"
		case f.Trace[0].Package != "":
			level = "package"
		}
		// A vulnerability is judged by its deepest finding.
		if v, seen := vulns[f.OSV]; !seen || depth[level] > depth[v.level] {
			vulns[f.OSV] = vuln{f.Trace[0].Module, f.Trace[0].Version, f.FixedVersion, level}
		}
	}
	ids := make([]string, 0, len(vulns))
	for id := range vulns {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	failed := false
	for _, id := range ids {
		v := vulns[id]
		verdict := "reported"
		switch {
		case v.module == "stdlib":
			verdict = "the Go release's: build with " + strings.TrimPrefix(v.fixed, "v") + " or later"
		case v.level == "symbol":
			verdict = "FAIL: called; upgrade the module"
			failed = true
		default:
			verdict = "not called"
		}
		fmt.Fprintf(w, "%s  %s@%s  fixed in %s  (%s)  %s\n", id, v.module, v.version, v.fixed, v.level, verdict)
	}
	if len(ids) == 0 {
		fmt.Fprintln(w, "no known vulnerability")
	}
	return failed, nil
}
