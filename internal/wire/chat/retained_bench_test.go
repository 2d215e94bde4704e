package chat

import (
	"bytes"
	"runtime"
	"testing"
)

// BenchmarkStreamRetained measures what an in-flight buffered stream costs
// in memory: the live heap a read, assembled Stream keeps while its
// verdict is pending, as a multiple of the stream's wire size
// (retained-x; the target is at most 2), and the bytes allocated to get
// there (alloc-x). Streams are held all at once, as concurrent requests
// would hold them.
func BenchmarkStreamRetained(b *testing.B) {
	data := stream200()
	const held = 64
	var before, after runtime.MemStats
	var retained, allocated float64
	for b.Loop() {
		streams := make([]*Stream, held)
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range streams {
			st, err := ReadStream(bytes.NewReader(data), 8<<20, ResponseOptions{})
			if err != nil {
				b.Fatal(err)
			}
			streams[i] = st
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(streams)
		retained += float64(after.HeapAlloc-before.HeapAlloc) / held
		allocated += float64(after.TotalAlloc-before.TotalAlloc) / held
	}
	b.ReportMetric(retained/float64(b.N)/float64(len(data)), "retained-x")
	b.ReportMetric(allocated/float64(b.N)/float64(len(data)), "alloc-x")
	b.ReportMetric(float64(len(data)), "stream-bytes")
}
