package rest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/internal/cut"
	"github.com/toolcap/toolcap/internal/rest"
	"github.com/toolcap/toolcap/internal/shape"
)

// failCommit is a memory store whose entries fail to commit.
type failCommit struct{ rest.Store }

type failCommitEntry struct{ rest.Entry }

func (f failCommit) Create(ctx context.Context, scope string) (rest.Entry, error) {
	e, err := f.Store.Create(ctx, scope)
	return failCommitEntry{e}, err
}

func (failCommitEntry) Commit() (rest.Info, error) { return rest.Info{}, errors.New("disk full") }

// Past a 1 MiB limit the Stream adds the read to a cut it made in its
// Writer's storage: the output and figures are still Keeper.Text's of the
// output held whole, and when the store then fails to commit, the plain
// cut is shape.Text's, the storage restored for it.
func TestStreamLargeLimitIsText(t *testing.T) {
	const limit = 2 << 20
	in := numbered(limit+limit/3, 5)
	for _, spec := range []cut.Spec{{}, {Keep: cut.KeepHeadTail}} {
		p := shape.Policy{MaxBytes: limit, KeepRest: true, Spec: spec}
		ctx := rest.WithScope(context.Background(), "s")
		stream := func(k *rest.Keeper) (string, chain.Truncation) {
			s := k.NewStream(ctx, p)
			for i := 0; i < len(in); i += 64 << 10 {
				s.Write([]byte(in[i:min(len(in), i+64<<10)]))
			}
			out, tr, _ := s.Result()
			if tr.Ref != "" {
				out = strings.ReplaceAll(out, tr.Ref, "REF")
			}
			return out, tr
		}
		k := newKeeper(t, rest.Config{})
		got, gt := stream(k)
		want, wt, _ := k.Text(ctx, in, p)
		want = strings.ReplaceAll(want, wt.Ref, "REF")
		if gt.Ref == "" || wt.Ref == "" {
			t.Fatalf("%v: refs %q and %q, want both kept", spec.Keep, gt.Ref, wt.Ref)
		}
		gt.Ref, wt.Ref = "", ""
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%v: stream (-text +stream):\n%s", spec.Keep, diff)
		}
		if diff := cmp.Diff(wt, gt); diff != "" {
			t.Errorf("%v: figures (-text +stream):\n%s", spec.Keep, diff)
		}

		kf, err := rest.NewKeeper(failCommit{rest.NewMemory(rest.Config{})})
		if err != nil {
			t.Fatal(err)
		}
		got, gt = stream(kf)
		want, wt, _ = shape.Text(in, p)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%v, a failed commit: stream (-plain cut +stream):\n%s", spec.Keep, diff)
		}
		if diff := cmp.Diff(wt, gt); diff != "" {
			t.Errorf("%v, a failed commit: figures (-plain cut +stream):\n%s", spec.Keep, diff)
		}
	}
}
