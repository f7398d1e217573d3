//go:build toolcap_nomcp

package main

import "github.com/toolcap/toolcap/cli"

// options are none in the hook-only build: it links neither the exact
// tokenizers nor the Redis store, so that it starts as fast as it can.
func options() []cli.Option { return nil }
