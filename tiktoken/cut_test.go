package tiktoken_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/tiktoken"
)

// figures are what a cut by tokens reports, in its marker and its Stats.
type figures struct {
	Unit                                      cut.Unit
	Strategy                                  cut.Keep
	N                                         int // the marker's
	OriginalTokens, KeptTokens, DroppedTokens int
}

// TestCutTokensExact cuts each sample to 4,000 exact tokens with each
// strategy: bytes never cut (maxBytes 1 MiB), the sample is within
// cut.TokenWindow(4000), so the output must fill the limit within a few
// tokens and carry a token marker whose N is exact, as CutTokens documents:
// Count(content) minus the counts of what the output keeps, the text before
// the marker and, for head_tail, the text after the marker's line.
func TestCutTokensExact(t *testing.T) {
	const maxBytes, maxTokens = 1 << 20, 4000
	type tc struct {
		sample sample
		enc    string
		keep   cut.Keep
	}
	var tests []tc
	for _, s := range samples {
		tests = append(tests, tc{s, tiktoken.O200kBase, cut.KeepHead}, tc{s, tiktoken.O200kBase, cut.KeepHeadTail})
		if s.json {
			tests = append(tests, tc{s, tiktoken.O200kBase, cut.KeepJSON})
		}
		tests = append(tests, tc{s, tiktoken.Cl100kBase, cut.KeepHead})
	}
	for _, tt := range tests {
		t.Run(tt.sample.name+"/"+tt.enc+"/"+string(tt.keep), func(t *testing.T) {
			t.Parallel()
			content := readSample(t, tt.sample.file)
			if len(content) > cut.TokenWindow(maxTokens) {
				t.Fatalf("sample of %d bytes is over the window of %d", len(content), cut.TokenWindow(maxTokens))
			}
			tok := mustNew(t, tt.enc)
			total := tok.Count(content)

			out, st := cut.CutTokens(content, maxBytes, maxTokens, tok, cut.Spec{Keep: tt.keep})

			if n := tok.Count(out); n > maxTokens || n < maxTokens-100 {
				t.Errorf("output of %d bytes counts %d tokens, want %d..%d", len(out), n, maxTokens-100, maxTokens)
			}
			before, n, after, ok := splitTokenMarker(out, tt.keep == cut.KeepHeadTail)
			if !ok {
				t.Fatalf("no token marker where %s puts it; output ends %q", tt.keep, out[max(0, len(out)-120):])
			}
			kept := tok.Count(before) + tok.Count(after)
			wantN := max(1, total-kept)
			want := figures{Unit: cut.UnitTokens, Strategy: tt.keep, N: wantN,
				OriginalTokens: total, KeptTokens: total - wantN, DroppedTokens: wantN}
			got := figures{Unit: st.Unit, Strategy: st.Strategy, N: n,
				OriginalTokens: st.OriginalTokens, KeptTokens: st.KeptTokens, DroppedTokens: st.DroppedTokens}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("figures (-want +got):\n%s", diff)
			}
			if got, want := out, before+cut.TokenMarker(wantN)+afterLine(after, tt.keep); got != want {
				t.Errorf("output is not before + TokenMarker(%d) + after", wantN)
			}
			switch tt.keep {
			case cut.KeepJSON:
				// A structural cut: the text before the marker is a shorter
				// document.
				if !json.Valid([]byte(before)) {
					t.Errorf("the %d bytes before the marker are not valid JSON", len(before))
				}
			default:
				if !strings.HasPrefix(content, before) || !strings.HasSuffix(content, after) {
					t.Errorf("output is not a head and a tail of the content")
				}
			}
		})
	}
}

// afterLine is what follows a marker: for head_tail, its line's newline and
// the text after it.
func afterLine(after string, keep cut.Keep) string {
	if keep == cut.KeepHeadTail {
		return "\n" + after
	}
	return after
}

// TestCutTokensOverWindow cuts a log of 1 MiB, over cut.TokenWindow(4000):
// CutTokens does not count it whole, so its marker counts bytes, exactly.
func TestCutTokensOverWindow(t *testing.T) {
	const maxBytes, maxTokens = 1 << 20, 4000
	content := repeatTo(readSample(t, "build_log.txt"), 1<<20)[:1<<20]
	tok := mustNew(t, tiktoken.O200kBase)
	for _, keep := range []cut.Keep{cut.KeepHead, cut.KeepHeadTail} {
		t.Run(string(keep), func(t *testing.T) {
			out, st := cut.CutTokens(content, maxBytes, maxTokens, tok, cut.Spec{Keep: keep})
			if n := tok.Count(out); n > maxTokens || n < maxTokens-100 {
				t.Errorf("output of %d bytes counts %d tokens, want %d..%d", len(out), n, maxTokens-100, maxTokens)
			}
			type byteFigures struct {
				Unit                                      cut.Unit
				Dropped                                   int
				OriginalTokens, KeptTokens, DroppedTokens int
			}
			var wantDropped int
			switch keep {
			case cut.KeepHead:
				// The output is a prefix of the content and the marker.
				before, ok := strings.CutSuffix(out, cut.Marker(st.Dropped))
				if !ok || !strings.HasPrefix(content, before) {
					t.Fatalf("output is not a prefix and a byte marker; it ends %q", out[max(0, len(out)-120):])
				}
				wantDropped = len(content) - len(before)
			default:
				// head + marker line + tail: the marker's two newlines stand
				// for two of the content's, which count as dropped.
				i := strings.Index(out, cut.Marker(st.Dropped)+"\n")
				if i < 0 {
					t.Fatalf("no byte marker line in the output")
				}
				head, tail := out[:i], out[i+len(cut.Marker(st.Dropped))+1:]
				if !strings.HasPrefix(content, head) || !strings.HasSuffix(content, tail) {
					t.Fatalf("output is not head + marker + tail of the content")
				}
				wantDropped = len(content) - len(head) - len(tail)
			}
			want := byteFigures{Unit: cut.UnitBytes, Dropped: wantDropped}
			got := byteFigures{Unit: st.Unit, Dropped: st.Dropped,
				OriginalTokens: st.OriginalTokens, KeptTokens: st.KeptTokens, DroppedTokens: st.DroppedTokens}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("figures (-want +got):\n%s", diff)
			}
		})
	}
}
