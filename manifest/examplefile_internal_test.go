package manifest

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	gotoml "github.com/pelletier/go-toml/v2"
)

// exampleFile is the commented example manifest at the repository root.
const exampleFile = "../toolcap.example.toml"

// commentedKey matches a commented-out key of the example file, "# key = value":
// an alternative to a live key, or a key that cannot be live.
var commentedKey = regexp.MustCompile(`^# ([A-Za-z0-9_]+ = .+)$`)

// TestExampleFileKeys holds toolcap.example.toml to the key table: every key
// of [worker.tool_output], of its rest table and of a per_tool entry's long
// form, and the short form, appears in the file (live, or commented out as
// "# key = value"), and the file has no key the table lacks.
func TestExampleFileKeys(t *testing.T) {
	want := map[string]bool{"per_tool.<tool> = <limit>": true, clientsName + ".<client> = <limit>": true}
	for _, k := range keys {
		if k.table == "" {
			want[k.name] = true
		} else {
			want[k.table+"."+k.name] = true
		}
		if k.field != "" {
			want[perToolName+".<tool>."+k.field] = true
		}
	}

	data, err := os.ReadFile(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := gotoml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", exampleFile, err)
	}
	got := map[string]bool{}
	exampleKeys(doc, got)

	// A commented-out key counts where it sits: under the table header
	// above it.
	header := ""
	for i, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "[") {
			header = line
			continue
		}
		m := commentedKey.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var alt map[string]any
		if err := gotoml.Unmarshal([]byte(header+"\n"+m[1]+"\n"), &alt); err != nil {
			t.Errorf("%s:%d: the commented-out key %q is not TOML under %s: %v", exampleFile, i+1, m[1], header, err)
			continue
		}
		exampleKeys(alt, got)
	}

	if diff := cmp.Diff(slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(got))); diff != "" {
		t.Errorf("keys of %s mismatch the manifest package's keys (-want +got):\n%s", exampleFile, diff)
	}
}

// exampleKeys adds to got the keys doc sets, as TestExampleFileKeys names
// them: "default_max_bytes", "rest.ttl", "per_tool.<tool>.keep", and
// "per_tool.<tool> = <limit>" for the short form. A key outside
// [worker.tool_output] is named with its table, so that it shows up as
// unexpected.
func exampleKeys(doc map[string]any, got map[string]bool) {
	for name, v := range doc {
		if name != "worker" {
			got["(outside [worker.tool_output]) "+name] = true
			continue
		}
		worker, _ := v.(map[string]any)
		for name, v := range worker {
			if name != "tool_output" {
				got["(outside [worker.tool_output]) worker."+name] = true
				continue
			}
			table, _ := v.(map[string]any)
			for name, v := range table {
				sub, isTable := v.(map[string]any)
				switch {
				case name == perToolName && isTable:
					for _, entry := range sub {
						fields, long := entry.(map[string]any)
						if !long {
							got[perToolName+".<tool> = <limit>"] = true
						}
						for field := range fields {
							got[perToolName+".<tool>."+field] = true
						}
					}
				case name == restName && isTable:
					for key := range sub {
						got[restName+"."+key] = true
					}
				case name == historyName && isTable:
					for key := range sub {
						got[historyName+"."+key] = true
					}
				case name == clientsName && isTable:
					for _, v := range sub {
						if _, table := v.(map[string]any); !table {
							got[clientsName+".<client> = <limit>"] = true
						}
					}
				default:
					got[name] = true
				}
			}
		}
	}
}
