// Package sessioncache remembers, for each managed session, what the
// gateway made of the parts of a request an agent sends again every turn:
// a wire unit's projection (an input item, a message), keyed by its exact
// bytes; and, for the projected objects it hands out, their canonical
// bytes and the verdicts of interceptors that judge each object on its
// own. A turn then costs what is new in it rather than its whole history.
//
// Everything here is an optimisation of pure functions: a unit's
// projection is a function of its bytes (and of a scope the caller names:
// the surface and its sealing keys), an object's canonical bytes of the
// object, a per-object verdict of the object and the interceptor. Entries
// are only ever looked up by exact bytes or by the very object they were
// made for, and hold that object, so no two values can share an entry.
// Values handed out are shared by every request of the session and must
// not be modified, which is already the contract of a request's
// projection.
//
// A Store bounds the memory of all sessions' caches together; least
// recently used sessions are dropped first. A nil Store or Cache is valid
// and remembers nothing: that is how caching is switched off.
package sessioncache

import (
	"container/list"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/hooks-gateway/hooks-gateway/internal/jcs"
)

// Store holds the caches of every session, within a byte budget.
type Store struct {
	limit    int64 // bytes for all caches together
	perCache int64 // bytes one cache may grow to

	mu     sync.Mutex
	size   int64
	caches map[string]*list.Element // of *Cache, most recent at the front
	lru    list.List

	// hits and misses count unit lookups, for the metrics.
	hits, misses atomic.Uint64
}

// perCacheShare is the part of the budget one session may take: one
// enormous conversation must not evict every other session.
const perCacheShare = 8

// NewStore returns a store of at most limit bytes (estimated: a unit's
// bytes twice, canonical bytes once, a fixed amount per entry); nil when
// limit is not positive, which switches caching off.
func NewStore(limit int64) *Store {
	if limit <= 0 {
		return nil
	}
	return &Store{limit: limit, perCache: max(limit/perCacheShare, 1), caches: map[string]*list.Element{}}
}

// Cache returns the cache of the session named key, made when it has
// none; nil on a nil store.
func (s *Store) Cache(key string) *Cache {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.caches[key]; ok {
		s.lru.MoveToFront(el)
		return el.Value.(*Cache)
	}
	c := &Cache{store: s, key: key}
	s.caches[key] = s.lru.PushFront(c)
	return c
}

// Drop forgets the session named key (it ended).
func (s *Store) Drop(key string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.caches[key]; ok {
		s.remove(el)
	}
}

// Stats are a store's totals.
type Stats struct {
	Sessions int
	Bytes    int64
	// Hits and Misses count the units looked up and found, or not.
	Hits, Misses uint64
}

// Stats returns the store's totals (zero on a nil store).
func (s *Store) Stats() Stats {
	if s == nil {
		return Stats{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{Sessions: s.lru.Len(), Bytes: s.size, Hits: s.hits.Load(), Misses: s.misses.Load()}
}

// remove drops the cache at el; s.mu is held.
func (s *Store) remove(el *list.Element) {
	c := el.Value.(*Cache)
	s.lru.Remove(el)
	delete(s.caches, c.key)
	s.size -= c.clear()
}

// grew accounts the n bytes c just added (n < 0: gave back) and drops
// least recently used caches other than c until the store is within its
// limit. The n bytes are counted even when c was dropped meanwhile:
// dropping it subtracted them already, since c counts what it holds
// before the store does.
func (s *Store) grew(c *Cache, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.size += n
	if el, ok := s.caches[c.key]; !ok || el.Value.(*Cache) != c {
		return
	}
	for s.size > s.limit {
		el := s.lru.Back()
		if el == nil || el.Value.(*Cache) == c {
			break
		}
		s.remove(el)
	}
}

// Cache is one session's memory. Its methods are safe for concurrent use
// and do nothing on a nil Cache.
type Cache struct {
	store *Store
	key   string

	mu    sync.RWMutex
	dead  bool  // dropped from the store: it keeps nothing more
	size  int64 // bytes accounted to the store
	units map[any]map[string]any
	nodes map[unsafe.Pointer]*node
	// trails are the last identity walk's trail per interception point,
	// apart for folded contexts.
	trails map[trailKey]*keptTrail
}

// trailKey names a trail: the interception point, and whether the walks
// are of contexts transforms folded.
type trailKey struct {
	point  string
	folded bool
}

// keptTrail is a point's trail (nil while a walk has it) and the bytes
// accounted for it, which stay accounted while it is out.
type keptTrail struct {
	t    *jcs.Trail
	size int64
}

// node is what the cache knows of one object it handed out. It holds the
// object, so no other object can take its address while it is here.
type node struct {
	obj      map[string]any
	canon    []byte
	depth    int // the level and bound canon was made at
	maxDepth int
	verdicts []verdict
}

// verdict is what judge made of a node.
type verdict struct {
	judge any
	v     any
}

// Fixed costs of entries, for the budget (map slots, headers).
const (
	unitOverhead    = 128
	nodeOverhead    = 96
	verdictOverhead = 48
	trailOverhead   = 128
)

// clear empties c and marks it dead, returning the bytes it held.
func (c *Cache) clear() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.size
	c.dead, c.size, c.units, c.nodes, c.trails = true, 0, nil, nil, nil
	return n
}

// add accounts n bytes to c: false (and nothing accounted) when c is
// dead or full. c.mu is held.
func (c *Cache) add(n int64) bool {
	if c.dead || c.size+n > c.store.perCache {
		return false
	}
	c.size += n
	return true
}

// Unit returns the value kept for the unit whose bytes are raw, within
// scope.
func (c *Cache) Unit(scope any, raw []byte) (any, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.RLock()
	v, ok := c.units[scope][string(raw)]
	c.mu.RUnlock()
	if ok {
		c.store.hits.Add(1)
	} else {
		c.store.misses.Add(1)
	}
	return v, ok
}

// KeepUnit keeps v for the unit whose bytes are raw, within scope. size
// estimates v's memory beyond raw's.
func (c *Cache) KeepUnit(scope any, raw []byte, v any, size int) {
	if c == nil {
		return
	}
	n := int64(len(raw)+size) + unitOverhead
	c.mu.Lock()
	if !c.add(n) {
		c.mu.Unlock()
		return
	}
	if c.units == nil {
		c.units = map[any]map[string]any{}
	}
	us := c.units[scope]
	if us == nil {
		us = map[string]any{}
		c.units[scope] = us
	}
	if _, dup := us[string(raw)]; dup {
		c.size -= n // a concurrent request of the session kept it first
		c.mu.Unlock()
		return
	}
	us[string(raw)] = v
	c.mu.Unlock()
	c.store.grew(c, n)
}

// KeepNode has c remember canonical bytes and verdicts for obj, which
// must never be modified afterwards.
func (c *Cache) KeepNode(obj map[string]any) {
	if c == nil || obj == nil {
		return
	}
	c.mu.Lock()
	if _, ok := c.nodes[key(obj)]; ok || !c.add(nodeOverhead) {
		c.mu.Unlock()
		return
	}
	if c.nodes == nil {
		c.nodes = map[unsafe.Pointer]*node{}
	}
	c.nodes[key(obj)] = &node{obj: obj}
	c.mu.Unlock()
	c.store.grew(c, nodeOverhead)
}

// key is obj's address: the map header a map value points to.
func key(obj map[string]any) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&obj)) }

// lookup is the node of obj; c.mu is held.
func (c *Cache) lookup(obj map[string]any) *node {
	return c.nodes[key(obj)]
}

// Canonical implements jcs.Memo.
func (c *Cache) Canonical(obj map[string]any, depth, maxDepth int) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := c.lookup(obj)
	if n == nil || n.canon == nil || n.depth != depth || n.maxDepth != maxDepth {
		return nil, false
	}
	return n.canon, true
}

// Keeps implements jcs.Memo.
func (c *Cache) Keeps(obj map[string]any) bool {
	if c == nil {
		return false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.lookup(obj) != nil
}

// Remember implements jcs.Memo.
func (c *Cache) Remember(obj map[string]any, depth, maxDepth int, b []byte) {
	if c == nil {
		return
	}
	n64 := int64(len(b))
	c.mu.Lock()
	n := c.lookup(obj)
	if n == nil || n.canon != nil || !c.add(n64) {
		c.mu.Unlock()
		return
	}
	n.canon, n.depth, n.maxDepth = b, depth, maxDepth
	c.mu.Unlock()
	c.store.grew(c, n64)
}

// Verdict returns what judge made of obj, when it is kept.
func (c *Cache) Verdict(judge any, obj map[string]any) (any, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if n := c.lookup(obj); n != nil {
		for _, v := range n.verdicts {
			if v.judge == judge {
				return v.v, true
			}
		}
	}
	return nil, false
}

// RememberVerdict keeps what judge made of obj, when obj is a node.
func (c *Cache) RememberVerdict(judge any, obj map[string]any, v any) {
	if c == nil {
		return
	}
	c.mu.Lock()
	n := c.lookup(obj)
	if n == nil || !c.add(verdictOverhead) {
		c.mu.Unlock()
		return
	}
	for _, x := range n.verdicts {
		if x.judge == judge {
			c.size -= verdictOverhead
			c.mu.Unlock()
			return
		}
	}
	n.verdicts = append(n.verdicts, verdict{judge, v})
	c.mu.Unlock()
	c.store.grew(c, verdictOverhead)
}

// TakeTrail hands the trail of the last identity walk at point (of
// folded contexts, or of emitted ones) to the caller, who gives it back
// with KeepTrail; nil when there is none or another walk has it.
func (c *Cache) TakeTrail(point string, folded bool) *jcs.Trail {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := c.trails[trailKey{point, folded}]
	if k == nil {
		return nil
	}
	t := k.t
	k.t = nil
	return t
}

// KeepTrail keeps t as the trail of the last identity walk at point (of
// folded contexts, or of emitted ones), in place of whatever that trail
// was, when the cache has room for it.
func (c *Cache) KeepTrail(point string, folded bool, t *jcs.Trail) {
	if c == nil || t == nil {
		return
	}
	c.mu.Lock()
	if c.dead {
		c.mu.Unlock()
		return
	}
	key := trailKey{point, folded}
	k := c.trails[key]
	if k == nil {
		k = new(keptTrail)
		if c.trails == nil {
			c.trails = map[trailKey]*keptTrail{}
		}
		c.trails[key] = k
	}
	n := int64(t.Size()) + trailOverhead
	delta := n - k.size
	if delta > 0 && !c.add(delta) {
		// No room: the point keeps nothing, and gives back what it held.
		delta = -k.size
		c.size += delta
		delete(c.trails, key)
	} else {
		if delta <= 0 {
			c.size += delta
		}
		k.t, k.size = t, n
	}
	c.mu.Unlock()
	if delta != 0 {
		c.store.grew(c, delta)
	}
}
