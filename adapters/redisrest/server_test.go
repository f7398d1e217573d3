package redisrest_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The tests run against a real redis-server that each starts for itself on
// a free port of 127.0.0.1, with no persistence, in a temp directory. They
// are skipped where the binary is missing, unless TOOLCAP_REDIS_E2E=1 says
// that it must be there (CI).

// redisBinary returns the path of redis-server, skipping (or failing, with
// TOOLCAP_REDIS_E2E=1) when there is none.
func redisBinary(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath("redis-server")
	if err != nil {
		if _, serr := os.Stat("/usr/bin/redis-server"); serr == nil {
			return "/usr/bin/redis-server"
		}
		if os.Getenv("TOOLCAP_REDIS_E2E") == "1" {
			tb.Fatalf("redis-server not found and TOOLCAP_REDIS_E2E=1: %v", err)
		}
		tb.Skipf("redis-server not found (install Debian's redis-server; TOOLCAP_REDIS_E2E=1 makes this a failure): %v", err)
	}
	return p
}

// server is a redis-server a test started.
type server struct {
	tb   testing.TB
	bin  string
	dir  string
	port int
	args []string // past the port and the persistence settings

	mu  sync.Mutex
	cmd *exec.Cmd
	out *bytes.Buffer
}

// startServer starts a redis-server with the extra arguments given
// ("--maxmemory", "8mb", …), waits until it answers, and stops it when
// the test ends.
func startServer(tb testing.TB, extra ...string) *server {
	tb.Helper()
	s := &server{tb: tb, bin: redisBinary(tb), dir: tb.TempDir(), port: freePort(tb), args: extra}
	tb.Cleanup(s.kill)
	s.start()
	return s
}

// freePort returns a port of 127.0.0.1 that nothing listens on.
func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// start runs the server on its port and waits (5 s at most) until it
// answers a PING.
func (s *server) start() {
	s.tb.Helper()
	args := append([]string{
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--daemonize", "no", "--loglevel", "warning",
	}, s.args...)
	cmd := exec.Command(s.bin, args...)
	out := new(bytes.Buffer)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		s.tb.Fatalf("start redis-server: %v", err)
	}
	s.mu.Lock()
	s.cmd, s.out = cmd, out
	s.mu.Unlock()
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		var reply redis.Error // NOAUTH: it answers, a password is wanted
		if err == nil || errors.As(err, &reply) {
			return
		}
		if time.Now().After(deadline) {
			s.kill()
			s.tb.Fatalf("redis-server on port %d does not answer after 5 s: %v\n%s", s.port, err, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill ends the server at once (SIGKILL), as a crash would, and waits for
// it. It is safe when the server is not running.
func (s *server) kill() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT) // a stopped process dies only once it runs
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
}

// signal sends sig to the running server.
func (s *server) signal(sig syscall.Signal) {
	s.tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		s.tb.Fatal("signal: redis-server not running")
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.tb.Fatalf("signal %v to redis-server: %v", sig, err)
	}
}

// Addr is host:port of the server.
func (s *server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL is the server's redis:// URL, database 0.
func (s *server) URL() string { return "redis://" + s.Addr() + "/0" }

// client returns a plain go-redis client of the server, closed when the
// test ends.
func (s *server) client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	s.tb.Cleanup(func() { _ = c.Close() })
	return c
}

// keys lists the keys of the server with their time to live.
func (s *server) keys(ctx context.Context, c *redis.Client) (map[string]time.Duration, error) {
	names, err := c.Keys(ctx, "*").Result()
	if err != nil {
		return nil, err
	}
	out := make(map[string]time.Duration, len(names))
	for _, k := range names {
		d, err := c.PTTL(ctx, k).Result()
		if err != nil {
			return nil, fmt.Errorf("PTTL %s: %w", k, err)
		}
		out[k] = d
	}
	return out, nil
}

// testBytes returns n pseudo-random bytes, the same for the same seed.
func testBytes(seed uint64, n int) []byte {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	b := make([]byte, n)
	_, _ = rand.NewChaCha8(s).Read(b) // never fails
	return b
}

// errNotReady is the error of a wait that ran out of time.
var errNotReady = errors.New("not ready in time")

// waitFor calls f every 50 ms until it reports true, for d at most.
func waitFor(d time.Duration, f func() bool) error {
	deadline := time.Now().Add(d)
	for !f() {
		if time.Now().After(deadline) {
			return errNotReady
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}
