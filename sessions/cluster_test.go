package sessions_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/sessions"
	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// TestRedisClusterFailoverKeepsSequences runs Next traffic from two
// replicas on sessions spread over a three-master cluster (one replica per
// master) while a replica takes over its master (CLUSTER FAILOVER). Every
// number handed out must be unique per session, and the numbers must be
// gapless: after the traffic, the next number equals the count handed out
// plus one (the claim's 0), so no write was lost or burned.
func TestRedisClusterFailoverKeepsSequences(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1)
	ctx := context.Background()
	open := func() *sessions.Redis {
		r, err := sessions.NewRedis(ctx, sessions.RedisOptions{Cluster: c.Addrs()[:3]})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		return r
	}
	a, b := open(), open()
	const n = 24
	keys := make([]sessions.Key, n)
	for i := range keys {
		keys[i] = key(fmt.Sprintf("s%d", i))
		if claimed, _, err := a.Begin(ctx, keys[i], owner); err != nil || !claimed {
			t.Fatalf("Begin = %v, %v", claimed, err)
		}
	}
	replica := findRole(t, c, "slave")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if out, _ := c.Run(replica, "info", "replication"); strings.Contains(out, "master_link_status:up") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("replica not in sync with its master within 10 s")
		}
	}

	var (
		mu   sync.Mutex
		got  = make([][]int64, n)
		errs int
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w, s := range []*sessions.Redis{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; ; j++ {
				select {
				case <-stop:
					return
				default:
				}
				i := (j + w) % n
				v, err := s.Next(ctx, keys[i])
				mu.Lock()
				if err != nil {
					errs++ // fail closed while the slot moves; no number handed out
				} else {
					got[i] = append(got[i], v)
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	// A manual failover gives up (after the node timeout) when the replica
	// is not caught up with its master yet; ask again then.
	deadline := time.Now().Add(20 * time.Second)
	for asked := (time.Time{}); role(t, c, replica) != "master"; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("replica did not take over within 20 s")
		}
		if time.Since(asked) > 5*time.Second {
			if out, err := c.Run(replica, "cluster", "failover"); err != nil || !strings.Contains(out, "OK") {
				t.Fatalf("CLUSTER FAILOVER = %q, %v", out, err)
			}
			asked = time.Now()
		}
	}
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	c.WaitOK()

	total := 0
	for i, k := range keys {
		vs := slices.Clone(got[i])
		slices.Sort(vs)
		total += len(vs)
		for j, v := range vs {
			if v != int64(j+1) {
				t.Fatalf("session %d: numbers %v are not unique and gapless from 1 (at %d: %d)", i, vs, j, v)
			}
		}
		next, err := a.Next(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if next != int64(len(vs)+1) {
			t.Errorf("session %d: next number %d after %d handed out; want %d (a write was lost or burned)", i, next, len(vs), len(vs)+1)
		}
	}
	if total < 100 {
		t.Errorf("only %d numbers handed out; the traffic did not run", total)
	}
	t.Logf("%d numbers handed out, %d calls failed closed during the failover", total, errs)
}

// findRole returns the first node whose ROLE is want.
func findRole(t *testing.T, c *redistest.Cluster, want string) *redistest.Server {
	t.Helper()
	for _, n := range c.Nodes {
		if role(t, c, n) == want {
			return n
		}
	}
	t.Fatalf("no %s in the cluster", want)
	return nil
}

// role returns the first line of ROLE on n ("master" or "slave").
func role(t *testing.T, c *redistest.Cluster, n *redistest.Server) string {
	t.Helper()
	out, err := c.Run(n, "role")
	if err != nil {
		t.Fatalf("ROLE: %v %s", err, out)
	}
	first, _, _ := strings.Cut(out, "\n")
	return strings.TrimSpace(first)
}
