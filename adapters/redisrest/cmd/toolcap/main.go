// Command toolcap is the toolcap command (package
// [github.com/toolcap/toolcap/cli]) with one addition: a manifest's rest
// store can be a Redis, named by URL, so that refs a replica makes are
// readable from every other:
//
//	[worker.tool_output.rest]
//	store = "redis://redis.internal:6379/0"
//
// Install it with
//
//	go install github.com/toolcap/toolcap/adapters/redisrest/cmd/toolcap@latest
//
// It lives in the redisrest module so that the core module, and the
// toolcap built from it, never link the Redis client. Every other command,
// flag and output is the core toolcap's; see docs/cli.md and docs/rest.md.
package main

import (
	"os"

	"github.com/toolcap/toolcap/adapters/redisrest"
	"github.com/toolcap/toolcap/cli"
	"github.com/toolcap/toolcap/rest"
)

func main() { os.Exit(cli.Main(cli.WithStoreOpener(open))) }

// open opens the Redis store a manifest names, and sends go-redis's own
// log lines to the command's logger, which -v shows.
func open(url string, cfg rest.Config) (rest.Store, error) {
	redisrest.RouteLogs(cfg.Logger)
	s, err := redisrest.Open(url, cfg)
	if err != nil {
		return nil, err
	}
	return s, nil
}
