//go:build race

package mcpproxy_test

// raceEnabled reports that the tests run under the race detector, which
// makes the relay of a large message some ten times slower.
const raceEnabled = true
