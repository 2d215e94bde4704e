package metrics

import (
	"sync"
	"sync/atomic"
)

// seriesCache maps a label tuple to the series it resolved to. Reads take
// an atomic load and a map lookup, with no lock and no boxing of the key;
// a miss copies the map under a lock. The tuples are bounded (see the
// package doc), so misses end after warm-up.
type seriesCache[K comparable, V any] struct {
	mu sync.Mutex
	m  atomic.Pointer[map[K]V]
}

// get returns the series of key, resolving them with resolve on a miss.
func (c *seriesCache[K, V]) get(key K, resolve func() V) V {
	if m := c.m.Load(); m != nil {
		if v, ok := (*m)[key]; ok {
			return v
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old != nil {
		if v, ok := (*old)[key]; ok {
			return v
		}
	}
	next := make(map[K]V, 1)
	if old != nil {
		next = make(map[K]V, len(*old)+1)
		for k, v := range *old {
			next[k] = v
		}
	}
	v := resolve()
	next[key] = v
	c.m.Store(&next)
	return v
}
