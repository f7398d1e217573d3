package redisrest_test

import (
	"fmt"
	"time"

	"github.com/toolcap/toolcap/adapters/redisrest"
	"github.com/toolcap/toolcap/internal/rest"
)

// A store of what cuts drop, in the Redis a manifest names by URL. Open
// connects on first use, not here; Where names the server for status
// lines, without the URL's password. Give the store to a rest.Keeper, or
// to toolcap's command line with cli.WithStoreOpener.
func ExampleOpen() {
	s, err := redisrest.Open("redis://toolcap:s3cret@redis.internal:6379/2", rest.Config{
		MaxEntryBytes: 8 << 20,
		TTL:           24 * time.Hour,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	fmt.Println(s.Where())
	fmt.Println(s.MaxEntryBytes())

	_, err = redisrest.Open("http://redis.internal:6379", rest.Config{})
	fmt.Println(err)
	// Output:
	// redis://toolcap:xxxxx@redis.internal:6379/2
	// 8388608
	// rest: redis URL http://redis.internal:6379: scheme "http": want redis or rediss
}
