package proxy

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// The overhead benchmarks send the same request to the upstream directly
// and through the gateway (embedded-default-like policy: one allow and one
// regex-style interceptor, per-request sessions), alternating request by
// request so machine drift hits both alike, and report latency percentiles
// of each and the gateway's added latency. Timings are reported, never
// asserted.

// request2KiB is a chat request of about 2 KiB.
func request2KiB(stream bool) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"gpt-test","messages":[{"role":"system","content":"You are a careful assistant."}`)
	for i := 0; i < 6; i++ {
		fmt.Fprintf(&b, `,{"role":"user","content":"Question %d: summarise the quarterly report for the finance team please."}`, i)
		fmt.Fprintf(&b, `,{"role":"assistant","content":"Answer %d: revenue grew, costs fell, and the outlook is stable overall."}`, i)
	}
	b.WriteString(`,{"role":"user","content":"And what should we do next quarter?"}`)
	fmt.Fprintf(&b, `],"temperature":0.2,"stream":%v}`, stream)
	return []byte(b.String())
}

// response1KiB is a chat completion of about 1 KiB.
var response1KiB = `{"id":"chatcmpl-b","object":"chat.completion","created":1700000000,"model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":"` +
	strings.Repeat("The report shows steady growth. ", 28) + `","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":400,"completion_tokens":200,"total_tokens":600}}`

// stream200 is an SSE body of 200 content chunks.
func stream200() []byte {
	var b bytes.Buffer
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "data: %s\n\n", chunk(fmt.Sprintf(`{"content":"tok%d "}`, i), ""))
	}
	fmt.Fprintf(&b, "data: %s\n\ndata: %s\n\ndata: [DONE]\n\n", chunk(`{}`, "stop"), usageChunk)
	return b.Bytes()
}

func benchOverhead(b *testing.B, stream bool) {
	var body []byte
	ctype := "application/json"
	if stream {
		body, ctype = stream200(), "text/event-stream"
	} else {
		body = []byte(response1KiB)
	}
	up := newUpstream(&testing.T{}, func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Type", ctype)
		w.Write(body)
	})
	defer up.Close()
	gw := newGateway(&testing.T{}, gatewayConfig{upstream: up.URL})
	defer gw.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	req := request2KiB(stream)
	do := func(url string) time.Duration {
		start := time.Now()
		resp, err := client.Post(url+"/chat/completions", "application/json", bytes.NewReader(req))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
		return time.Since(start)
	}
	for range 50 { // warm connections and caches
		do(up.URL)
		do(gw.URL + "/v1")
	}
	direct := make([]time.Duration, 0, b.N)
	through := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		direct = append(direct, do(up.URL))
		through = append(through, do(gw.URL+"/v1"))
	}
	b.StopTimer()
	pct := func(d []time.Duration, p float64) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[int(p*float64(len(s)-1))].Microseconds())
	}
	b.ReportMetric(pct(direct, 0.5), "direct-p50-µs")
	b.ReportMetric(pct(direct, 0.99), "direct-p99-µs")
	b.ReportMetric(pct(through, 0.5), "gateway-p50-µs")
	b.ReportMetric(pct(through, 0.99), "gateway-p99-µs")
	b.ReportMetric(pct(through, 0.5)-pct(direct, 0.5), "added-p50-µs")
	b.ReportMetric(pct(through, 0.99)-pct(direct, 0.99), "added-p99-µs")
}

// BenchmarkOverheadJSON: 2 KiB request, 1 KiB non-streamed response.
func BenchmarkOverheadJSON(b *testing.B) { benchOverhead(b, false) }

// BenchmarkOverheadStream200: 2 KiB request, a 200-chunk streamed response
// (fully buffered and verdicted before the first byte reaches the client).
func BenchmarkOverheadStream200(b *testing.B) { benchOverhead(b, true) }
