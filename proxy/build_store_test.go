package proxy

import (
	"context"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/sessions"
	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// buildStore turns sessions.redis_cluster and sessions.redis_sentinel into
// a working store: a session claimed through one store built from the
// configuration is seen as claimed through a second one.
func TestBuildStoreClusterAndSentinel(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	_, sentinel := redistest.StartSentinel(t)
	for name, sc := range map[string]config.Sessions{
		"cluster":  {Store: config.StoreRedis, RedisCluster: c.Addrs()[:1], KeyPrefix: "gw:"},
		"sentinel": {Store: config.StoreRedis, RedisSentinel: &config.RedisSentinel{Master: redistest.SentinelMaster, Addrs: []string{sentinel}}, KeyPrefix: "gw:"},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			open := func() sessions.Store {
				s, err := buildStore(ctx, sc)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = s.Close() })
				return s
			}
			a, b := open(), open()
			k := sessions.Key{Tenant: "t", ID: "s-" + name}
			o := sessions.Owner{KeyID: "k", AgentID: "a"}
			if claimed, _, err := a.Begin(ctx, k, o); err != nil || !claimed {
				t.Fatalf("Begin = %v, %v; want the claim", claimed, err)
			}
			if claimed, _, err := b.Begin(ctx, k, o); err != nil || claimed {
				t.Fatalf("second Begin = %v, %v; want the existing session", claimed, err)
			}
			if err := b.Ping(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
