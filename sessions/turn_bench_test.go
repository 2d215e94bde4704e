package sessions_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/sessions"
	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// BenchmarkRedisTurn times the store calls of one model-call turn of a
// known session (four emissions) on a local Redis: the separate calls
// (Begin, Acquire, four Next, Release: seven round trips) against
// BeginCall (BeginCall, three Next, Release: five).
func BenchmarkRedisTurn(b *testing.B) {
	url, _ := redistest.Start(b)
	r, err := sessions.NewRedis(context.Background(), sessions.RedisOptions{URL: url, KeyPrefix: "bench:"})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	const sessionsN = 100
	keys := make([]sessions.Key, sessionsN)
	for i := range keys {
		keys[i] = key("bench-" + strconv.Itoa(i))
		if _, _, err := r.Begin(ctx, keys[i], owner); err != nil {
			b.Fatal(err)
		}
		if err := r.Admit(ctx, keys[i]); err != nil {
			b.Fatal(err)
		}
	}
	next := func(k sessions.Key, n int) {
		for range n {
			if _, err := r.Next(ctx, k); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("separate", func(b *testing.B) {
		for i := range b.N {
			k, id := keys[i%sessionsN], "call-"+strconv.Itoa(i)
			if _, _, err := r.Begin(ctx, k, owner); err != nil {
				b.Fatal(err)
			}
			if err := r.Acquire(ctx, k, id, time.Minute); err != nil {
				b.Fatal(err)
			}
			next(k, 4)
			if err := r.Release(ctx, k, id); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("BeginCall", func(b *testing.B) {
		for i := range b.N {
			k, id := keys[i%sessionsN], "call-"+strconv.Itoa(i)
			if _, err := r.BeginCall(ctx, k, owner, sessions.Call{ID: id, Lease: time.Minute}); err != nil {
				b.Fatal(err)
			}
			next(k, 3)
			if err := r.Release(ctx, k, id); err != nil {
				b.Fatal(err)
			}
		}
	})
}
