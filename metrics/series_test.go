package metrics

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/metrics/metricstest"
)

// Tuples observed from many goroutines, interleaved, each land on their
// own series and every observation counts: the cache resolves each tuple
// once and never hands one tuple another's series.
func TestRequestSeriesInterleaved(t *testing.T) {
	m := New(Options{NoRuntimeCollectors: true})
	routes := []string{"/v1/chat/completions", "/v1/responses", "/v1/messages"}
	codes := []int{200, 403, 502}
	const per = 50
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per * len(routes) * len(codes) {
				k := (i + g) % (len(routes) * len(codes))
				route, code := routes[k/len(codes)], codes[k%len(codes)]
				m.ObserveRequest(route, "chat_completions", code, code == 502, time.Millisecond, 0)
				m.ObserveUpstream(route, StatusCode(code), time.Millisecond)
			}
		}()
	}
	wg.Wait()
	want := map[string]float64{}
	wantUp := map[string]float64{}
	for _, r := range routes {
		for _, c := range codes {
			want[fmt.Sprintf("api=chat_completions,code=%d,route=%s", c, r)] = 4 * per
			wantUp[fmt.Sprintf("code=%d,upstream=%s", c, r)] = 4 * per
		}
	}
	fams := scrape(t, m)
	metricstest.WantSeries(t, fams, "hooks_gateway_requests_total", want)
	metricstest.WantSeries(t, fams, "hooks_gateway_upstream_requests_total", wantUp)
	streamed := 0.0
	for _, s := range fams["hooks_gateway_request_duration_seconds"].GetMetric() {
		for _, l := range s.GetLabel() {
			if l.GetName() == "stream" && l.GetValue() == "true" {
				streamed += float64(s.GetHistogram().GetSampleCount())
			}
		}
	}
	if want := float64(4 * per * len(routes)); streamed != want {
		t.Errorf("streamed request durations %v, want %v", streamed, want)
	}
}

// Once its series are resolved, a request's observation allocates nothing.
func TestRequestSeriesAllocs(t *testing.T) {
	m := New(Options{NoRuntimeCollectors: true})
	observe := func() {
		m.ObserveRequest("/v1/chat/completions", "chat_completions", 200, false, time.Millisecond, 0)
		m.ObserveUpstream("openai", "200", time.Millisecond)
	}
	observe()
	if n := testing.AllocsPerRun(100, observe); n != 0 {
		t.Errorf("%v allocations per observed request, want 0", n)
	}
}

// The cache resolves each key once, however many goroutines ask for it at
// once, and hands every key its own series.
func TestSeriesCacheResolvesOnce(t *testing.T) {
	var c seriesCache[int, *int]
	var mu sync.Mutex
	resolved := map[int]int{}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 400 {
				key := (i + g) % 20
				v := c.get(key, func() *int {
					mu.Lock()
					defer mu.Unlock()
					resolved[key]++
					return &key
				})
				if *v != key {
					t.Errorf("key %d got the series of %d", key, *v)
					return
				}
			}
		}()
	}
	wg.Wait()
	for key := range 20 {
		if resolved[key] != 1 {
			t.Errorf("key %d resolved %d times, want once", key, resolved[key])
		}
	}
}
