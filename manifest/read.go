package manifest

import (
	"context"
	"io"
	"os"

	"github.com/toolcap/toolcap/internal/settings"
)

// readFile reads the manifest at path, at most settings.MaxManifestBytes of it, and
// gives up with ctx's error once ctx is done. The open and the read run on a
// goroutine, since opening a FIFO that has no writer blocks; a read that
// blocks is interrupted by closing the file, but an open that blocks cannot
// be, so that goroutine lives until the open returns.
func readFile(ctx context.Context, path string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if ctx.Done() == nil {
		return readLimited(ctx, path)
	}
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := readLimited(ctx, path)
		done <- result{data, err}
	}()
	select {
	case r := <-done:
		return r.data, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func readLimited(ctx context.Context, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	stop := context.AfterFunc(ctx, func() { f.Close() })
	defer stop()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > settings.MaxManifestBytes {
		return nil, errTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(f, settings.MaxManifestBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if len(data) > settings.MaxManifestBytes {
		return nil, errTooLarge
	}
	return data, nil
}
