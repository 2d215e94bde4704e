package main

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// retainedStreamBytes is the size of the large stream BenchmarkStreamRetained
// reads: the 7.8 MB stream of the abuse report, just under the default
// 8 MiB buffer limit.
const retainedStreamBytes = 7_800_000

// BenchmarkStreamRetained measures what one large buffered stream costs in
// memory on each surface, through the surface's real stream reader: the
// live heap held while the verdict is pending (the read and assembled
// stream and its projection, retained-x, per byte of stream on the wire),
// the live heap at the moment of release (the stream and the released
// bytes, release-x), and the bytes allocated in all (alloc-x). The stream
// is the mock upstream's, with as many token-sized deltas as make it
// about 7.8 MB. docs/performance.md quotes its figures.
func BenchmarkStreamRetained(b *testing.B) {
	for _, c := range benchSurfaces() {
		sse := sizedStream(c, retainedStreamBytes)
		b.Run(fmt.Sprintf("%s/%dKB", c.name, len(sse)/1000), func(b *testing.B) {
			benchStreamRetained(b, c.surface, c.request(2048, true, false), sse)
		})
	}
}

func benchStreamRetained(b *testing.B, s wire.Surface, reqBody, sse []byte) {
	req, err := s.ParseRequest(reqBody, nil)
	if err != nil {
		b.Fatal(err)
	}
	var base, judged, released runtime.MemStats
	var retained, atRelease, allocated float64
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&base)
		st, err := s.ReadStream(req, bytes.NewReader(sse), 8<<20)
		if err != nil {
			b.Fatal(err)
		}
		proj := st.Response().Project()
		runtime.GC()
		runtime.ReadMemStats(&judged)
		out, err := st.Release(nil)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&released)
		runtime.KeepAlive(st)
		runtime.KeepAlive(proj)
		runtime.KeepAlive(out)
		retained += float64(int64(judged.HeapAlloc) - int64(base.HeapAlloc))
		atRelease += float64(int64(released.HeapAlloc) - int64(base.HeapAlloc))
		allocated += float64(released.TotalAlloc - base.TotalAlloc)
	}
	n := float64(b.N) * float64(len(sse))
	b.ReportMetric(retained/n, "retained-x")
	b.ReportMetric(atRelease/n, "release-x")
	b.ReportMetric(allocated/n, "alloc-x")
	b.ReportMetric(retained/float64(b.N)/(1<<20), "retained-MiB")
}

// sizedStream is c's mock streamed answer with enough deltas to be about
// size bytes (never more).
func sizedStream(c surfaceCase, size int) []byte {
	n := size / 64
	for {
		sse := joinEvents(c.sse(upstreamOptions{chunks: n}))
		if len(sse) <= size && len(sse) > size-size/100 {
			return sse
		}
		n = int(float64(n) * float64(size) / float64(len(sse)) * 0.995)
	}
}
