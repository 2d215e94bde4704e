// Package heaptest measures the live heap for tests that check what a
// component keeps after a request: the bytes still reachable after full
// collections, compared before and after.
package heaptest

import "runtime"

// Live returns the bytes of live heap objects after a full collection (two,
// so objects freed by finalizers of the first are gone too).
func Live() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
