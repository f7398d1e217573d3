package redisrest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"

	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/settings"
)

const (
	// DefaultPrefix starts the name of every key the store writes.
	DefaultPrefix = "toolcap:rest:"

	// DefaultTimeout bounds each operation of the store (a round trip,
	// and the dial it may need), on top of the caller's context.
	DefaultTimeout = 2 * time.Second

	// Pause is how long the store fails at once, without asking Redis,
	// after an error that was not Redis's answer: one cut waits for a
	// Redis that is down or stuck, the cuts after it do not.
	Pause = time.Second

	// ChunkBytes is the most bytes of an entry one round trip carries.
	ChunkBytes = 1 << 20

	// TempTTL is how long the temp key of an entry being written lives
	// past its last write, so that a write a crashed process abandoned
	// disappears.
	TempTTL = 10 * time.Minute

	// MaxEntryBytes is the most one entry keeps whatever its Config says:
	// what one Redis string holds (512 MiB) less the entry's header.
	MaxEntryBytes = 512<<20 - headerLen
)

// headerLen is the length of the header each entry's value starts with:
// magic, then the entry's Original and its Size, big-endian. ReadAt
// offsets are past it.
const headerLen = 24

var magic = [8]byte{'t', 'c', 'r', 'e', 'd', 'i', 's', 1}

// Store is a [rest.Store] in Redis. It is safe for concurrent use, and
// several processes, on one machine or many, may share one Redis through
// stores of the same prefix: a ref made through one is readable through
// every other, in its scope.
type Store struct {
	client redis.UniversalClient
	own    bool   // Close closes client: Open made it
	where  string // the redacted URL, or the client's address
	prefix string
	limit  time.Duration // of each operation

	maxEntry int64
	ttl      time.Duration
	log      hclog.Logger

	// downUntil (unix nanoseconds) is the end of the pause after an
	// error that was not Redis's answer; down is that error.
	downUntil atomic.Int64
	down      atomic.Pointer[error]
}

// Option configures a [Store].
type Option func(*Store)

// WithPrefix sets the prefix of every key the store writes;
// [DefaultPrefix] when not given. Stores that share a Redis read each
// other's entries only under the same prefix. On a cluster, a prefix
// holding a hash tag ({…}) puts every entry on one node.
func WithPrefix(prefix string) Option { return func(s *Store) { s.prefix = prefix } }

// WithTimeout sets the deadline of each operation; [DefaultTimeout] when
// not given or not positive.
func WithTimeout(d time.Duration) Option {
	return func(s *Store) {
		if d > 0 {
			s.limit = d
		}
	}
}

// New returns a store in the Redis client reaches, bounded by cfg (see
// the package doc for which fields apply). The client stays the
// caller's: Close leaves it open. With a nil client every operation
// fails.
func New(client redis.UniversalClient, cfg rest.Config, opts ...Option) *Store {
	s := &Store{client: client, prefix: DefaultPrefix, limit: DefaultTimeout, where: clientAddr(client)}
	for _, opt := range opts {
		if opt != nil {
			opt(s)
		}
	}
	s.maxEntry = cfg.MaxEntryBytes
	if s.maxEntry <= 0 {
		s.maxEntry = rest.DefaultMaxEntryBytes
	}
	if cfg.MaxBytes > 0 {
		s.maxEntry = min(s.maxEntry, cfg.MaxBytes)
	}
	s.maxEntry = min(s.maxEntry, MaxEntryBytes)
	s.ttl = cfg.TTL
	if s.ttl <= 0 {
		s.ttl = rest.DefaultTTL
	}
	s.log = hclog.NewNullLogger()
	if cfg.Logger != nil {
		s.log = cfg.Logger.Named("rest")
	}
	return s
}

// Open returns a store in the Redis rawURL names, redis://host:port/db or
// rediss:// for TLS, with go-redis's URL options (?dial_timeout=3s,
// &pool_size=10, …). Credentials come from the URL, or, when it has none,
// from REDIS_USERNAME and REDIS_PASSWORD in the environment; no error and
// no log line shows the password. The dial, read and write timeouts the
// URL does not set are [DefaultTimeout]. Open does not reach Redis: a
// Redis that is down makes the operations fail, not Open.
func Open(rawURL string, cfg rest.Config, opts ...Option) (*Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("rest: redis URL %s: not a URL", settings.RedactStore(rawURL))
	}
	shown := u.Redacted()
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, fmt.Errorf("rest: redis URL %s: scheme %q: want redis or rediss", shown, u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("rest: redis URL %s: no host (want redis://host:6379/0)", shown)
	}
	ro, err := redis.ParseURL(rawURL)
	if err != nil {
		// go-redis's own errors name a database number or an option, never
		// the URL's credentials.
		return nil, fmt.Errorf("rest: redis URL %s: %w", shown, err)
	}
	if ro.Username == "" && ro.Password == "" {
		ro.Username, ro.Password = os.Getenv("REDIS_USERNAME"), os.Getenv("REDIS_PASSWORD")
	}
	q := u.Query()
	if !q.Has("dial_timeout") {
		ro.DialTimeout = DefaultTimeout
	}
	if !q.Has("read_timeout") {
		ro.ReadTimeout = DefaultTimeout
	}
	if !q.Has("write_timeout") {
		ro.WriteTimeout = DefaultTimeout
	}
	// One dial per attempt: a Redis that refuses connections should fail
	// the operation now, not after go-redis's five dials.
	ro.DialerRetries = 1
	ro.ContextTimeoutEnabled = true
	if ro.TLSConfig != nil {
		ro.Dialer = tlsDialer(ro.DialTimeout, ro.TLSConfig)
	}
	s := New(redis.NewClient(ro), cfg, opts...)
	s.own, s.where = true, shown
	return s, nil
}

// clientAddr names where client connects, for Where.
func clientAddr(c redis.UniversalClient) string {
	switch c := c.(type) {
	case nil:
		return "redis (no client)"
	case *redis.Client:
		o := c.Options()
		return fmt.Sprintf("redis://%s/%d", o.Addr, o.DB)
	case *redis.ClusterClient:
		return "redis cluster " + strings.Join(c.Options().Addrs, ",")
	}
	return "redis"
}

// Where names the Redis the store uses, without credentials: for a status
// line such as toolcap config's.
func (s *Store) Where() string { return s.where }

// MaxEntryBytes returns the most one entry keeps ([rest.EntryBound]).
func (s *Store) MaxEntryBytes() int64 { return s.maxEntry }

// Close closes the client when Open made it; a client passed to New is
// the caller's to close.
func (s *Store) Close() error {
	if !s.own {
		return nil
	}
	if err := s.client.Close(); err != nil {
		return fmt.Errorf("rest: redis: close: %w", err)
	}
	return nil
}

// keys returns the key of a committed entry and of its temp key. Both
// hold the same hash tag, whatever the prefix (the temp key's suffix is
// past it), so that a cluster keeps them on one node and the commit
// script may rename one to the other.
func (s *Store) keys(scope, ref string) (final, temp string) {
	final = s.prefix + "{" + rest.EntryKey(scope, ref) + "}"
	return final, final + ":w"
}

// op returns the context of one operation: ctx with the store's deadline.
// It fails at once during a pause.
func (s *Store) op(ctx context.Context, what string) (context.Context, context.CancelFunc, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("rest: redis: %s: %w", what, err)
	}
	if s.client == nil {
		return nil, nil, fmt.Errorf("rest: redis: %s: the store has no client", what)
	}
	if until := s.downUntil.Load(); until != 0 && time.Now().UnixNano() < until {
		var cause error = errors.New("unreachable")
		if p := s.down.Load(); p != nil {
			cause = *p
		}
		return nil, nil, fmt.Errorf("rest: redis %s: %s: not tried again for %s after: %w", s.where, what, Pause, cause)
	}
	c, cancel := context.WithTimeout(ctx, s.limit)
	return c, cancel, nil
}

// failed turns err, from an operation under ctx (the caller's), into the
// store's error: OOM wraps [rest.ErrFull]; an error that is not Redis's
// answer, nor the caller's context ending, starts a pause.
func (s *Store) failed(ctx context.Context, what string, err error) error {
	if redis.IsOOMError(err) {
		return fmt.Errorf("rest: redis %s: %s: %w (%v)", s.where, what, rest.ErrFull, err)
	}
	var reply redis.Error
	if !errors.As(err, &reply) && ctx.Err() == nil {
		s.down.Store(&err)
		s.downUntil.Store(time.Now().Add(Pause).UnixNano())
	}
	return fmt.Errorf("rest: redis %s: %s: %w", s.where, what, err)
}

// Create starts a new entry in scope. It sends nothing: an entry that
// fits one round trip is written by its Commit. It fails when ctx is
// done, or during a pause after an error.
func (s *Store) Create(ctx context.Context, scope string) (rest.Entry, error) {
	_, cancel, err := s.op(ctx, "create")
	if err != nil {
		return nil, err
	}
	cancel()
	ref := rest.NewRef()
	final, temp := s.keys(scope, ref)
	return &entry{s: s, ctx: ctx, ref: ref, final: final, temp: temp, b: rest.NewBounded(s.maxEntry), buf: getBuf()}, nil
}

// Open returns the committed entry ref of scope and renews its time to
// live, in one round trip. Every ref it cannot read (unknown, expired,
// evicted, foreign, malformed, or a value that is not an entry) is
// [rest.ErrUnknown]; a malformed ref never reaches Redis.
func (s *Store) Open(ctx context.Context, scope, ref string) (rest.Reader, error) {
	if !rest.ValidRef(ref) {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("rest: redis: open: %w", err)
		}
		return nil, rest.ErrUnknown
	}
	c, cancel, err := s.op(ctx, "open")
	if err != nil {
		return nil, err
	}
	defer cancel()
	key, _ := s.keys(scope, ref)
	var (
		renewed *redis.BoolCmd
		head    *redis.StringCmd
		length  *redis.IntCmd
	)
	_, err = s.client.TxPipelined(c, func(p redis.Pipeliner) error {
		renewed = p.PExpire(c, key, s.ttl)
		head = p.GetRange(c, key, 0, headerLen-1)
		length = p.StrLen(c, key)
		return nil
	})
	if err != nil {
		return nil, s.failed(ctx, "open", err)
	}
	if !renewed.Val() {
		return nil, rest.ErrUnknown
	}
	info, ok := parseHeader(head.Val(), length.Val())
	if !ok {
		// Not an entry of this store: the key is another program's, or
		// was cut short. Leave it; the ref reads as unknown.
		s.log.Warn("redis key is not a whole entry", "key", key[:min(len(key), len(s.prefix)+13)], "bytes", length.Val())
		return nil, rest.ErrUnknown
	}
	info.Ref = ref
	return &reader{s: s, ctx: ctx, key: key, info: info}, nil
}

// header returns the header of an entry that holds size bytes of an
// output of original bytes.
func header(original, size int64) [headerLen]byte {
	var h [headerLen]byte
	copy(h[:], magic[:])
	binary.BigEndian.PutUint64(h[8:], uint64(original))
	binary.BigEndian.PutUint64(h[16:], uint64(size))
	return h
}

// parseHeader reads the header h of a value of length bytes, and false
// when it is not the header of a whole entry.
func parseHeader(h string, length int64) (rest.Info, bool) {
	if len(h) != headerLen || h[:len(magic)] != string(magic[:]) {
		return rest.Info{}, false
	}
	original := int64(binary.BigEndian.Uint64([]byte(h[8:16])))
	size := int64(binary.BigEndian.Uint64([]byte(h[16:24])))
	if size < 0 || original < size || size != length-headerLen {
		return rest.Info{}, false
	}
	return rest.Info{Size: size, Original: original}, true
}

// RouteLogs sends go-redis's own log lines (a failed dial, a pool
// warning) to l at debug level, instead of the standard error that
// go-redis writes them to, one line per failed dial, for the whole
// process: go-redis has one logger. The store's failures reach the front
// end as errors, which it logs once per outage; these lines are the
// detail. A nil l drops them.
func RouteLogs(l hclog.Logger) {
	if l == nil {
		l = hclog.NewNullLogger()
	}
	redis.SetLogger(redisLogger{l.Named("redis")})
}

// redisLogger is go-redis's logging interface on an hclog.Logger.
type redisLogger struct{ l hclog.Logger }

func (r redisLogger) Printf(_ context.Context, format string, v ...any) {
	r.l.Debug(strings.TrimSpace(fmt.Sprintf(format, v...)))
}
