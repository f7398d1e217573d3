// Command readall reads its standard input to the end and exits: the floor
// of any hook process, which must start and read its payload.
// BenchmarkHookProcess measures toolcap's hook against it.
package main

import (
	"io"
	"os"
)

func main() {
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		os.Exit(1)
	}
}
