package shape_test

import (
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/shape"
)

// TestTextInvalidUTF8 is issue 22's first case at the depth of shape: the
// limit holds in UTF-8 bytes of what the client decodes, and the figures
// count that text, in every shaping of a text.
func TestTextInvalidUTF8(t *testing.T) {
	ff := strings.Repeat("\xff", 100_000)
	tests := []struct {
		name        string
		in          string
		p           shape.Policy
		wantLen     int
		wantT       chain.Truncation
		wantChanged bool
	}{
		{
			name: "100,000 0xFF at 16,384", in: ff, p: shape.Bytes(16384),
			// 5,443 U+FFFD (16,329 bytes) and a 53-byte marker.
			wantLen: 16382, wantChanged: true,
			wantT: chain.Truncation{Limit: 16384, OriginalBytes: 300_000, KeptBytes: 16_329, DroppedBytes: 283_671},
		},
		{
			name: "fits as bytes, not decoded", in: strings.Repeat("\xff", 100), p: shape.Bytes(200),
			// 200 - 50 bytes of marker: 50 U+FFFD.
			wantLen: 200, wantChanged: true,
			wantT: chain.Truncation{Limit: 200, OriginalBytes: 300, KeptBytes: 150, DroppedBytes: 150},
		},
		{
			name: "fits decoded: replaced, nothing dropped", in: "ok \xfe\xff", p: shape.Bytes(12),
			wantLen: 9, wantChanged: true,
			wantT: chain.Truncation{Limit: 12, OriginalBytes: 9, KeptBytes: 9},
		},
		{
			name: "fits even at 3 bytes a byte: passed unread", in: "ok \xff", p: shape.Bytes(12),
			wantLen: 4,
		},
		{
			name: "valid: unchanged", in: strings.Repeat("é", 100), p: shape.Bytes(200),
			wantLen: 200,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, tr, changed := shape.Text(tt.in, tt.p)
			if diff := cmp.Diff(tt.wantT, tr); diff != "" {
				t.Errorf("Text figures mismatch (-want +got):\n%s", diff)
			}
			if changed != tt.wantChanged || len(out) != tt.wantLen {
				t.Errorf("Text: changed %v, %d bytes; want %v, %d", changed, len(out), tt.wantChanged, tt.wantLen)
			}
			if changed && !utf8.ValidString(out) {
				t.Errorf("Text changed the text but left invalid UTF-8: %.80q", out)
			}
			if m := cut.FindMarkers(out); len(m) == 1 && m[0].N != tr.DroppedBytes {
				t.Errorf("marker says %d dropped, figures %d", m[0].N, tr.DroppedBytes)
			}
			rout, rtr, rchanged := shape.Recut(tt.in, tt.p)
			if rout != out || rchanged != changed || !cmp.Equal(rtr, tr) {
				t.Errorf("Recut = %d bytes, %+v, %v; Text = %d bytes, %+v, %v", len(rout), rtr, rchanged, len(out), tr, changed)
			}
		})
	}
}

// TestShareInvalidUTF8 checks that texts sharing a limit are measured as
// decoded: together within the limit in UTF-8 bytes.
func TestShareInvalidUTF8(t *testing.T) {
	texts := []string{strings.Repeat("\xff", 3000), "short ok", strings.Repeat("a\xfeé", 2000)}
	out, tr, changed := shape.Texts(texts, shape.Bytes(4096))
	total := 0
	for _, s := range out {
		total += len(s)
		if !utf8.ValidString(s) {
			t.Errorf("part not valid UTF-8: %.60q", s)
		}
	}
	if !changed || total > 4096 {
		t.Errorf("changed %v, %d bytes together at a limit of 4096", changed, total)
	}
	want := chain.Truncation{Limit: 4096, OriginalBytes: 9000 + 8 + 12000}
	want.KeptBytes = tr.KeptBytes
	want.DroppedBytes = want.OriginalBytes - tr.KeptBytes
	if diff := cmp.Diff(want, tr); diff != "" {
		t.Errorf("figures mismatch (-want +got):\n%s", diff)
	}
	// Replaced only: changed, nothing dropped.
	out, tr, changed = shape.Texts([]string{"a\xff\xff", "b"}, shape.Bytes(8))
	if diff := cmp.Diff([]string{"a\uFFFD\uFFFD", "b"}, out); diff != "" || !changed || tr.DroppedBytes != 0 || tr.OriginalBytes != 8 {
		t.Errorf("Texts of a replaced text: changed %v, %+v, (-want +got):\n%s", changed, tr, diff)
	}
}

// TestLinesInvalidUTF8 checks that a list of lines is cut as decoded.
func TestLinesInvalidUTF8(t *testing.T) {
	names := make([]string, 200)
	for i := range names {
		names[i] = "dir/\xff\xfe.txt"
	}
	out, tr, changed := shape.Lines(names, shape.Bytes(500))
	joined := strings.Join(out, "\n")
	if !changed || len(joined) > 500 || !utf8.ValidString(joined) {
		t.Fatalf("changed %v, %d bytes, valid %v", changed, len(joined), utf8.ValidString(joined))
	}
	// Each name decodes to 14 bytes, 15 with its newline.
	if want := 200*15 - 1; tr.OriginalBytes != want || tr.KeptBytes+tr.DroppedBytes != want {
		t.Errorf("figures %+v, want an original of %d", tr, want)
	}
}

// TestErrorMessageInvalidUTF8 checks a JSON-RPC error's message: measured
// as decoded.
func TestErrorMessageInvalidUTF8(t *testing.T) {
	msg, _, tr, changed := shape.ErrorMessage(strings.Repeat("\xff", 1000), nil, shape.Bytes(1024))
	if !changed || len(msg) > 1024 || !utf8.ValidString(msg) || tr.OriginalBytes != 3000 || tr.KeptBytes+tr.DroppedBytes != 3000 {
		t.Errorf("changed %v, %d bytes, valid %v, figures %+v", changed, len(msg), utf8.ValidString(msg), tr)
	}
}

// TestReadInvalidUTF8 checks a text read in pieces of one byte, so that
// every sequence is split across reads: the cut is Text's of the text as
// decoded.
func TestReadInvalidUTF8(t *testing.T) {
	in := strings.Repeat("🦊\xff敏\xe2\x82", 3000)
	p := shape.Bytes(4096)
	out, tr, changed, err := shape.Read(iotest.OneByteReader(strings.NewReader(in)), p)
	if err != nil {
		t.Fatal(err)
	}
	wantOut, wantT, wantChanged := shape.Text(in, p)
	if diff := cmp.Diff(wantT, tr); diff != "" || out != wantOut || changed != wantChanged {
		t.Errorf("Read differs from Text (figures -want +got):\n%s", diff)
	}
	if len(out) > 4096 || !utf8.ValidString(out) {
		t.Errorf("%d bytes, valid %v", len(out), utf8.ValidString(out))
	}
}
