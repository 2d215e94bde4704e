package sessioncache

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jcs"
)

func TestNilIsOff(t *testing.T) {
	if NewStore(0) != nil {
		t.Fatal("a zero budget made a store")
	}
	var s *Store
	c := s.Cache("a")
	c.KeepUnit(nil, []byte("x"), 1, 0)
	c.KeepNode(map[string]any{})
	if _, ok := c.Unit(nil, []byte("x")); ok {
		t.Fatal("a nil cache kept a unit")
	}
	if s.Stats() != (Stats{}) {
		t.Fatal("a nil store has contents")
	}
}

func TestUnitsByExactBytesAndScope(t *testing.T) {
	c := NewStore(1 << 20).Cache("a")
	c.KeepUnit("s1", []byte(`{"a":1}`), "one", 0)
	if v, ok := c.Unit("s1", []byte(`{"a":1}`)); !ok || v != "one" {
		t.Fatalf("got %v %v", v, ok)
	}
	for _, miss := range []struct {
		scope any
		raw   string
	}{{"s2", `{"a":1}`}, {"s1", `{"a":1} `}, {"s1", `{"a":2}`}} {
		if _, ok := c.Unit(miss.scope, []byte(miss.raw)); ok {
			t.Fatalf("hit for %v %q", miss.scope, miss.raw)
		}
	}
}

func TestNodesAnswerForTheirObjectOnly(t *testing.T) {
	c := NewStore(1 << 20).Cache("a")
	obj, twin := map[string]any{"k": "v"}, map[string]any{"k": "v"}
	if c.Keeps(obj) {
		t.Fatal("an unknown object is kept")
	}
	c.KeepNode(obj)
	c.Remember(obj, 3, 128, []byte(`{"k":"v"}`))
	if b, ok := c.Canonical(obj, 3, 128); !ok || string(b) != `{"k":"v"}` {
		t.Fatal("the remembered bytes are not returned")
	}
	for _, d := range [][2]int{{2, 128}, {3, 64}} {
		if _, ok := c.Canonical(obj, d[0], d[1]); ok {
			t.Fatalf("bytes made at level 3 under 128 returned for %v", d)
		}
	}
	if _, ok := c.Canonical(twin, 3, 128); ok || c.Keeps(twin) {
		t.Fatal("an equal but different object shares the entry")
	}
	c.RememberVerdict("j1", obj, true)
	c.RememberVerdict("j1", twin, true)
	if v, ok := c.Verdict("j1", obj); !ok || v != true {
		t.Fatal("verdict lost")
	}
	if _, ok := c.Verdict("j2", obj); ok {
		t.Fatal("another judge's verdict returned")
	}
	if _, ok := c.Verdict("j1", twin); ok {
		t.Fatal("a verdict kept for an object that is no node")
	}
}

// TestBudget: the store stays within its limit by dropping the least
// recently used sessions, and one session never takes more than its
// share.
func TestBudget(t *testing.T) {
	const limit = 64 << 10
	s := NewStore(limit)
	unit := []byte(strings.Repeat("x", 1000))
	for i := range 40 {
		c := s.Cache(fmt.Sprint("session", i))
		for j := range 10 {
			c.KeepUnit(nil, append([]byte(fmt.Sprint(j)), unit...), j, 0)
		}
	}
	st := s.Stats()
	if st.Bytes > limit || st.Sessions == 0 || st.Sessions == 40 {
		t.Fatalf("stats %+v for a %d byte limit", st, limit)
	}
	if _, ok := s.Cache("session39").Unit(nil, append([]byte("0"), unit...)); !ok {
		t.Fatal("the most recent session was dropped")
	}
	if _, ok := s.Cache("session0").Unit(nil, append([]byte("0"), unit...)); ok {
		t.Fatal("the oldest session survived")
	}
	big := s.Cache("big")
	for j := range 100 {
		big.KeepUnit(nil, append([]byte(fmt.Sprint(j)), unit...), j, 0)
	}
	if big.size > limit/perCacheShare {
		t.Fatalf("one session holds %d bytes, more than its share %d", big.size, limit/perCacheShare)
	}
	s.Drop("big")
	if _, ok := big.Unit(nil, append([]byte("0"), unit...)); ok {
		t.Fatal("a dropped session still answers")
	}
	big.KeepUnit(nil, []byte("late"), 1, 0)
	if _, ok := big.Unit(nil, []byte("late")); ok {
		t.Fatal("a dropped session keeps new units")
	}
}

// TestConcurrent exercises a session's cache from many goroutines (run
// with -race).
func TestConcurrent(t *testing.T) {
	s := NewStore(1 << 16)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				c := s.Cache(fmt.Sprint("s", (g+i)%5))
				raw := []byte(fmt.Sprint("unit", i%50))
				c.KeepUnit(nil, raw, i, 64)
				c.Unit(nil, raw)
				obj := map[string]any{"i": i}
				c.KeepNode(obj)
				c.Remember(obj, 2, 128, []byte("{}"))
				c.Canonical(obj, 2, 128)
				c.RememberVerdict(g, obj, i)
				c.Verdict(g, obj)
				if i%97 == 0 {
					s.Drop(fmt.Sprint("s", i%5))
				}
			}
		}()
	}
	wg.Wait()
	if st := s.Stats(); st.Bytes > 1<<16 {
		t.Fatalf("stats %+v", st)
	}
}

// TestAccountingSettles: once every session is dropped, the store holds
// nothing, however drops and additions interleaved.
func TestAccountingSettles(t *testing.T) {
	s := NewStore(1 << 16)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				key := fmt.Sprint("s", (g+i)%3)
				c := s.Cache(key)
				c.KeepUnit(nil, []byte(fmt.Sprint(g, i)), i, 100)
				point := fmt.Sprint("p", i%2)
				tr := c.TakeTrail(point, false)
				if tr == nil {
					tr = trailOf(100 + i%300)
				}
				c.KeepTrail(point, false, tr)
				if i%7 == 0 {
					s.Drop(key)
				}
			}
		}()
	}
	wg.Wait()
	for i := range 3 {
		s.Drop(fmt.Sprint("s", i))
	}
	if st := s.Stats(); st != (Stats{}) {
		t.Fatalf("stats %+v after dropping every session", st)
	}
}

// trailOf is the trail of one identity walk over a string of n bytes.
func trailOf(n int) *jcs.Trail {
	tr := new(jcs.Trail)
	var id [jcs.SHA256IdentitySize]byte
	if err := jcs.SHA256IdentityTrailInto(&id, map[string]any{"a": strings.Repeat("x", n)}, 0, nil, tr); err != nil {
		panic(err)
	}
	return tr
}

// TestTrails: a point's trail goes to one walk at a time, stays accounted
// while it is out, is accounted anew when it comes back, is not kept
// beyond the session's share, and dies with the session.
func TestTrails(t *testing.T) {
	s := NewStore(1 << 20)
	c := s.Cache("s")
	if c.TakeTrail("p", false) != nil {
		t.Fatal("a new cache hands out a trail")
	}
	tr := trailOf(10000)
	c.KeepTrail("p", false, tr)
	want := int64(tr.Size()) + trailOverhead
	if st := s.Stats(); st.Bytes != want {
		t.Fatalf("%d bytes accounted for a trail of %d", st.Bytes, want)
	}
	if got := c.TakeTrail("p", false); got != tr {
		t.Fatal("the trail kept is not the one handed out")
	}
	if c.TakeTrail("p", false) != nil {
		t.Fatal("a trail was handed out twice")
	}
	if c.TakeTrail("q", false) != nil {
		t.Fatal("another point has the trail")
	}
	if c.TakeTrail("p", true) != nil {
		t.Fatal("the point's folded contexts have its emitted contexts' trail")
	}
	if st := s.Stats(); st.Bytes != want {
		t.Fatalf("%d bytes accounted while the trail is out, want %d", st.Bytes, want)
	}
	small := new(jcs.Trail)
	c.KeepTrail("p", false, small)
	if st := s.Stats(); st.Bytes != int64(small.Size())+trailOverhead {
		t.Fatalf("%d bytes accounted after a smaller trail came back", st.Bytes)
	}

	tight := NewStore(8 * 4096) // a session's share: 4 KiB
	tc := tight.Cache("s")
	tc.KeepTrail("p", false, trailOf(100))
	if tc.TakeTrail("p", false) == nil {
		t.Fatal("a small trail was not kept")
	}
	tc.KeepTrail("p", false, trailOf(64<<10))
	if tc.TakeTrail("p", false) != nil || tight.Stats().Bytes != 0 {
		t.Fatalf("a trail beyond the share was kept (%d bytes)", tight.Stats().Bytes)
	}

	s.Drop("s")
	c.KeepTrail("p", false, tr)
	if c.TakeTrail("p", false) != nil || s.Stats().Bytes != 0 {
		t.Fatal("a dropped session keeps a trail")
	}
}
