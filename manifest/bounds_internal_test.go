package manifest

import (
	"testing"

	gotoml "github.com/pelletier/go-toml/v2"
	"github.com/toolcap/toolcap/internal/settings"
)

// measure returns the depth of the deepest value in v, which sits at depth
// d, and the most keys any table in v holds: the bounds as the docs define
// them, measured on what the TOML parser made of a manifest.
func measure(v any, d int) (depth, keys int) {
	depth = d
	switch x := v.(type) {
	case map[string]any:
		keys = len(x)
		for _, c := range x {
			cd, ck := measure(c, d+1)
			depth, keys = max(depth, cd), max(keys, ck)
		}
	case []any:
		for _, c := range x {
			cd, ck := measure(c, d+1)
			depth, keys = max(depth, cd), max(keys, ck)
		}
	}
	return depth, keys
}

// FuzzCheckBounds checks the pre-scan against the parser: for every input
// the parser accepts, checkBounds rejects it exactly when it is over a bound.
func FuzzCheckBounds(f *testing.F) {
	for _, seed := range []string{
		"[worker.tool_output.per_tool]\nRead = 200\n\"mcp.fs\" = 300\n'a/b' = 1\n",
		"x = [[[]]]\ny = [{a = 1}, {b = [1, {c = 2}]}]\n",
		"[[a.b]]\nc = 1\n[[a.b]]\nc = 2\n[a.b.d]\ne = 1\n",
		"a.b.c = 1\n\"a\".'b'.d = 2\n[\"\\u0061\".e]\nf = 1\n",
		"s = \"\"\"[[[{{{\n\"\"a = 1\"\"\"\"\"\nt = '''[{'''''\nu = 'x[' # [{\n",
		"d = {a = 1979-05-27 07:32:00, b = 1979-05-27T07:32:00Z}\n",
		"\uFEFFk = 1\r\n[t]\r\nv = [\r\n 1, # c\r\n 2,\r\n]\r\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v map[string]any
		if gotoml.Unmarshal(data, &v) != nil {
			checkBounds(data) // must not panic or hang; the parser's error wins
			return
		}
		depth, keys := measure(v, 0)
		within := len(data) <= settings.MaxManifestBytes && depth <= maxNestingDepth && keys <= min(maxTableKeys, maxPerToolEntries)
		if err := checkBounds(data); (err == nil) != within {
			t.Fatalf("checkBounds(%q) = %v; the parsed manifest has depth %d, at most %d keys in a table", data, err, depth, keys)
		}
	})
}
