// Package settings holds the names and bounds that package manifest and
// the toolcap command share, and a user of the library does not need: the
// environment variables of the environment layer, the store names of the
// rest table, the source of a default, and how a key and a duration are
// written back in TOML. They are not part of the manifest's API, so that
// it stays small; docs/manifest.md lists them for users.
package settings

import (
	"fmt"
	"net/url"
	"strings"
	"time"
)

// EnvPrefix starts every environment variable the environment layer reads.
const EnvPrefix = "TOOLCAP_"

// The environment variables the environment layer understands; levels are
// separated by "__", and the tool name after PER_TOOL__ keeps its case.
const (
	EnvDefaultMaxBytes  = EnvPrefix + "WORKER__TOOL_OUTPUT__DEFAULT_MAX_BYTES"
	EnvDefaultKeep      = EnvPrefix + "WORKER__TOOL_OUTPUT__DEFAULT_KEEP"
	EnvBatchMaxBytes    = EnvPrefix + "WORKER__TOOL_OUTPUT__BATCH_MAX_BYTES"
	EnvDefaultMaxTokens = EnvPrefix + "WORKER__TOOL_OUTPUT__DEFAULT_MAX_TOKENS"
	EnvBatchMaxTokens   = EnvPrefix + "WORKER__TOOL_OUTPUT__BATCH_MAX_TOKENS"
	EnvTokenizer        = EnvPrefix + "WORKER__TOOL_OUTPUT__TOKENIZER"
	EnvKeepRest         = EnvPrefix + "WORKER__TOOL_OUTPUT__KEEP_REST"
	EnvPerToolPrefix    = EnvPrefix + "WORKER__TOOL_OUTPUT__PER_TOOL__"
)

// The environment variables of the keys of [worker.tool_output.rest]: the
// key's name in upper case after REST__.
const (
	EnvRestDir           = EnvPrefix + "WORKER__TOOL_OUTPUT__REST__DIR"
	EnvRestMaxBytes      = EnvPrefix + "WORKER__TOOL_OUTPUT__REST__MAX_BYTES"
	EnvRestMaxEntryBytes = EnvPrefix + "WORKER__TOOL_OUTPUT__REST__MAX_ENTRY_BYTES"
	EnvRestTTL           = EnvPrefix + "WORKER__TOOL_OUTPUT__REST__TTL"
	EnvRestTool          = EnvPrefix + "WORKER__TOOL_OUTPUT__REST__TOOL"
	EnvRestStore         = EnvPrefix + "WORKER__TOOL_OUTPUT__REST__STORE"
)

// SourceDefault is the Source of a value nobody set: the built-in default.
const SourceDefault = "built-in default"

// The stores the rest table's store key names: "memory", "dir", or the
// URL of a Redis shared by replicas (redis://host:6379/0, rediss:// for
// TLS; the store lives in module
// github.com/toolcap/toolcap/adapters/redisrest). "" lets the front end
// choose (a directory for toolcap mcp and the CLI; a worker keeps the
// store its program passes).
const (
	RestStoreMemory = "memory"
	RestStoreDir    = "dir"
	// RestStoreRedis and RestStoreRedisTLS are the schemes of a Redis
	// store's URL.
	RestStoreRedis    = "redis"
	RestStoreRedisTLS = "rediss"
)

// IsRedisStore reports whether the store value s names a Redis: a
// redis:// or rediss:// URL. A value that passed the manifest's checks is
// then one a Redis store can open.
func IsRedisStore(s string) bool {
	s = strings.ToLower(s) // a URL's scheme is case-insensitive
	return strings.HasPrefix(s, RestStoreRedis+"://") || strings.HasPrefix(s, RestStoreRedisTLS+"://")
}

// TOMLKey writes s as a TOML key: bare when it can be (letters, digits, "_"
// and "-"), otherwise as a basic string with TOML's escapes, so that
// "mcp.fs.read" stays one key when pasted into a manifest.
func TOMLKey(s string) string {
	bare := s != ""
	for i := 0; i < len(s) && bare; i++ {
		c := s[i]
		bare = c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
	}
	if bare {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// FormatDuration writes d as a manifest's ttl shows it: as
// time.Duration.String does, without its trailing zero units: "24h",
// "1h30m", "90s".
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// RedactStore returns the store value s with the password of a URL, if
// any, replaced by "xxxxx"; a URL that does not parse loses everything
// before the last '@' of its authority.
func RedactStore(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	start := strings.Index(s, "://")
	if start < 0 {
		return s
	}
	start += len("://")
	end := len(s)
	if i := strings.IndexAny(s[start:], "/?#"); i >= 0 {
		end = start + i
	}
	if at := strings.LastIndex(s[start:end], "@"); at >= 0 {
		return s[:start] + "xxxxx" + s[start+at:]
	}
	return s
}

// MaxManifestBytes is the largest manifest file or Bytes layer accepted: 1
// MiB. A file is read no further than one byte past it.
const MaxManifestBytes = 1 << 20
