package metrics

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// BenchmarkEmit is one enforce-mode pre_model_call emission (one allow
// interceptor, a ~1 KiB context) with and without the metrics observer:
// the difference is the observer's cost per emission.
func BenchmarkEmit(b *testing.B) {
	messages := []any{}
	for range 8 {
		messages = append(messages, map[string]any{"role": "user", "content": strings.Repeat("quarterly report ", 6)})
	}
	fields := map[string]any{"model": map[string]any{"id": "gpt-test"}, "messages": messages}
	for _, tc := range []struct {
		name string
		obs  enforcement.Observer
	}{
		{"without", nil},
		{"with", New(Options{NoRuntimeCollectors: true})},
	} {
		b.Run(tc.name+"Observer", func(b *testing.B) {
			opts := enforcement.Options{
				Interceptors: []enforcement.Registration{{Name: "allow", Interceptor: enforcement.InterceptorFunc(
					func(context.Context, enforcement.Context) (enforcement.Verdict, error) {
						return enforcement.Allow(), nil
					})}},
			}
			if tc.obs != nil {
				opts.Observer = tc.obs
			}
			em, err := enforcement.NewEmitter(opts)
			if err != nil {
				b.Fatal(err)
			}
			builder := &enforcement.Builder{Agent: enforcement.Agent{ID: "a", Framework: "bench"}, SessionID: "s", Sequence: &enforcement.Counter{}}
			c, err := builder.Build(context.Background(), enforcement.PreModelCall, fields)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := em.Emit(ctx, c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkObserve is the observer alone: one emission and one
// interceptor observation, as one single-interceptor emission makes.
func BenchmarkObserve(b *testing.B) {
	m := New(Options{NoRuntimeCollectors: true})
	r := rec(enforcement.PreModelCall, enforcement.Enforce, enforcement.DecisionAllow, "")
	o := enforcement.InterceptorObservation{Name: "allow", Point: enforcement.PreModelCall, Mode: enforcement.Enforce, Decision: enforcement.DecisionAllow, Duration: 40 * time.Microsecond}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.ObserveEmission(r, 50*time.Microsecond)
			m.ObserveInterceptor(o)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				m.ObserveEmission(r, 50*time.Microsecond)
				m.ObserveInterceptor(o)
			}
		})
	})
}

// BenchmarkObserveRequest is the per-request gateway series: the request's
// counter and two histograms, the upstream call's counter and histogram.
func BenchmarkObserveRequest(b *testing.B) {
	m := New(Options{NoRuntimeCollectors: true})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.ObserveRequest("/v1/chat/completions", "chat_completions", 200, false, time.Millisecond, 500*time.Microsecond)
			m.ObserveUpstream("openai", "200", 500*time.Microsecond)
		}
	})
}
