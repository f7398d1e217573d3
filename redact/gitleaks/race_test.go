//go:build race

package gitleaks_test

// The rule samples' generator builds with -race too, so that it shares
// the packages the test binary built.
func init() {
	goRunFlags = append(goRunFlags, "-race")
	raceEnabled = true
}
