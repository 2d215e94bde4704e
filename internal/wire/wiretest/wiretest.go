// Package wiretest drives a surface's readers as the proxy does, for the
// surfaces' tests and benchmarks.
package wiretest

import (
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// ReleaseIncrementally reads r as incremental mediation does: Text after
// every event, Head and a Delta every every-th event while the answer is
// plain and has new text, then the Stream and the Tail after what was
// released. Any error fails tb.
func ReleaseIncrementally(tb testing.TB, r wire.StreamReader, every int) {
	tb.Helper()
	released := 0
	for n := 0; ; n++ {
		done, err := r.Next()
		if err != nil {
			tb.Fatal(err)
		}
		if done {
			break
		}
		t := r.Text()
		if !r.Plain() || n%every != 0 || len(t) == released {
			continue
		}
		if released == 0 {
			if _, err := r.Head(); err != nil {
				tb.Fatal(err)
			}
		}
		if _, err := r.Delta(released, t[released:]); err != nil {
			tb.Fatal(err)
		}
		released = len(t)
	}
	st, err := r.Stream()
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := r.Tail(st, nil, r.Text()[:released]); err != nil {
		tb.Fatal(err)
	}
}
