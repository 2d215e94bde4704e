package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/providers"
)

const (
	mib = 1 << 20
	// limitWord is denied at post_model_call by limitsGateway's policy: an
	// answer ending in it is refused only if the whole answer was judged.
	limitWord = "FORBIDDEN-TAIL"
)

// sizedJSON is a chat completion of exactly size bytes whose content ends
// with tail.
func sizedJSON(size int, tail string) []byte {
	head := `{"id":"chatcmpl-big","object":"chat.completion","created":1700000000,"model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":"`
	end := `"},"finish_reason":"stop"}]}`
	fill := size - len(head) - len(end) - len(tail)
	return []byte(head + strings.Repeat("a", fill) + tail + end)
}

// escapeHeavyJSON is a chat completion of exactly size bytes whose content
// is raw U+2028 characters: 3 bytes each on the wire, 6 once re-encoded in
// a context, the costliest representation a body can have.
func escapeHeavyJSON(size int) []byte {
	b := sizedJSON(size, "")
	at := bytes.Index(b, []byte(`"content":"`)) + len(`"content":"`)
	n := bytes.IndexByte(b[at:], '"') / 3 * 3
	copy(b[at:at+n], strings.Repeat("\u2028", n/3))
	return b
}

// sizedSSE is a chat completion stream of exactly size bytes on the wire
// (framing and [DONE] included), its content in 64 KiB deltas ending with
// tail.
func sizedSSE(size int, tail string) []byte {
	frame := func(b *bytes.Buffer, data string) { b.WriteString("data: " + data + "\n\n") }
	var fixed bytes.Buffer
	frame(&fixed, chunk(`{"role":"assistant","content":""}`, ""))
	frame(&fixed, chunk(`{}`, "stop"))
	frame(&fixed, "[DONE]")
	perDelta := len("data: \n\n") + len(chunk(`{"content":""}`, ""))
	var mid bytes.Buffer
	left := size - fixed.Len()
	for left > 0 {
		n := min(64<<10, left-perDelta)
		if left-perDelta-n < perDelta+1 { // the rest would not hold a delta
			n = left - perDelta
		}
		text := strings.Repeat("a", n)
		if left-perDelta-n == 0 {
			text = text[:n-len(tail)] + tail
		}
		frame(&mid, chunk(`{"content":"`+text+`"}`, ""))
		left -= perDelta + n
	}
	out := fixed.Bytes()
	first := bytes.Index(out, []byte("\n\n")) + 2
	return append(append(append([]byte{}, out[:first]...), mid.Bytes()...), out[first:]...)
}

// limitsGateway is a gateway built from configuration with every limit at
// its default, in front of an upstream answering with body, and a policy
// that denies limitWord in a response.
func limitsGateway(t testing.TB, body []byte, sse bool) *httptest.Server {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if sse {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.Write(body)
	}))
	t.Cleanup(up.Close)
	t.Setenv("LIMITS_TEST_UPSTREAM_KEY", "upstream-key")
	src := fmt.Sprintf(`upstreams:
  - name: up
    type: openai
    base_url: %s/v1
    api_key_env: LIMITS_TEST_UPSTREAM_KEY
interceptors:
  - name: deny-tail
    type: regex
    points: [post_model_call]
    action: deny
    reason: policy:tail
    patterns: ['%s']
`, up.URL, limitWord)
	cfg, err := config.Parse("gateway.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	asm, err := Build(context.Background(), cfg, io.Discard, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	g := httptest.NewServer(asm.Server)
	t.Cleanup(func() {
		g.Close()
		asm.Close()
	})
	return g
}

// TestResponseSizeIsTheConfiguredLimit: with the default configuration a
// JSON or SSE answer up to the 8 MiB limit (limits.max_response_bytes,
// streaming.buffer_limit) is accepted and judged whole, never refused for
// the size of the context built from it; one byte more is refused with the
// documented error.
func TestResponseSizeIsTheConfiguredLimit(t *testing.T) {
	const limit = config.DefaultBufferLimit
	if config.DefaultMaxResponseBytes != limit {
		t.Fatalf("default max_response_bytes %d, buffer_limit %d", config.DefaultMaxResponseBytes, limit)
	}
	cases := []struct {
		name   string
		sse    bool
		size   int
		tail   string
		status int
		code   string
	}{
		{"json 7.5MiB", false, 7*mib + mib/2, "", 200, ""},
		{"json 7.5MiB judged whole", false, 7*mib + mib/2, limitWord, 403, "policy:tail"},
		{"json at the limit", false, limit, "", 200, ""},
		{"json at the limit, all U+2028", false, -limit, "", 200, ""},
		{"json over the limit", false, limit + 1, "", 502, "upstream_response_too_large"},
		{"sse 7.5MiB", true, 7*mib + mib/2, "", 200, ""},
		{"sse 7.5MiB judged whole", true, 7*mib + mib/2, limitWord, 403, "policy:tail"},
		{"sse at the limit", true, limit, "", 200, ""},
		{"sse over the limit", true, limit + 1, "", 503, enforcement.ReasonStreamingUnsupported},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body []byte
			switch {
			case tc.size < 0: // the escape-heavy answer
				tc.size = -tc.size
				body = escapeHeavyJSON(tc.size)
			case tc.sse:
				body = sizedSSE(tc.size, tc.tail)
			default:
				body = sizedJSON(tc.size, tc.tail)
			}
			if len(body) != tc.size {
				t.Fatalf("test answer is %d bytes, want %d", len(body), tc.size)
			}
			g := limitsGateway(t, body, tc.sse)
			status, _, got := do(t, http.MethodPost, g.URL+"/v1/chat/completions", chatBody("hi", tc.sse), nil)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %.300s", status, tc.status, got)
			}
			if tc.code == "" {
				if string(got) != asReleased(string(body), string(got)) {
					t.Fatalf("the allowed answer was not released unchanged (%d bytes, sent %d)", len(got), len(body))
				}
				return
			}
			e := errorBody(t, got)
			if e.Code != tc.code {
				t.Fatalf("error code %q, want %q: %s", e.Code, tc.code, got)
			}
			if strings.Contains(e.Message, "context") {
				t.Errorf("refused for its context, not its size: %s", e.Message)
			}
		})
	}
}

// BenchmarkBufferedResponseRetained measures what one buffered response
// costs in memory: the live heap the gateway holds while post_model_call
// judges it (the body, the parsed or assembled response, the context, the
// interceptor's copy), per byte of response on the wire (retained-x).
// docs/configuration.md quotes its figures.
func BenchmarkBufferedResponseRetained(b *testing.B) {
	for _, size := range []int{1 * mib, 7*mib + mib/2} {
		for _, sse := range []bool{false, true} {
			name := fmt.Sprintf("json/%dKiB", size>>10)
			body := sizedJSON(size, "")
			if sse {
				name, body = fmt.Sprintf("sse/%dKiB", size>>10), sizedSSE(size, "")
			}
			b.Run(name, func(b *testing.B) {
				benchRetained(b, body, sse)
			})
		}
	}
}

func benchRetained(b *testing.B, body []byte, sse bool) {
	var base, judged runtime.MemStats
	measure := policy(func(c enforcement.Context) enforcement.Verdict {
		if c.Point() == enforcement.PostModelCall {
			runtime.GC()
			runtime.ReadMemStats(&judged)
		}
		return enforcement.Allow()
	})
	url := retainedGateway(b, body, sse, measure)
	req := chatBody("hi", sse)
	var retained float64
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&base)
		status, _, _, err := send(context.Background(), http.MethodPost, url, req, nil)
		if err != nil || status != 200 {
			b.Fatalf("status %d, %v", status, err)
		}
		retained += float64(int64(judged.HeapAlloc) - int64(base.HeapAlloc))
	}
	b.ReportMetric(retained/float64(b.N)/float64(len(body)), "retained-x")
}

// retainedGateway is a gateway with one in-process interceptor, the default
// limits and the context bound derived from them, in front of an upstream
// answering with body; it returns the chat completions URL.
func retainedGateway(b *testing.B, body []byte, sse bool, p policy) string {
	b.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		ct := "application/json"
		if sse {
			ct = "text/event-stream"
		}
		w.Header().Set("Content-Type", ct)
		w.Write(body)
	}))
	b.Cleanup(up.Close)
	em, err := enforcement.NewEmitter(enforcement.Options{
		Interceptors:    []enforcement.Registration{{Name: "measure", Interceptor: p}},
		MaxContextBytes: config.DefaultMaxContextBytes,
	})
	if err != nil {
		b.Fatal(err)
	}
	upstream, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "up", BaseURL: up.URL + "/v1", APIKey: "k"})
	if err != nil {
		b.Fatal(err)
	}
	router, err := providers.NewRouter([]providers.Route{{Patterns: []string{"*"}, Upstream: upstream}})
	if err != nil {
		b.Fatal(err)
	}
	g := httptest.NewServer(New(Options{
		Policy:            &Policy{Emitter: em, Router: router},
		MaxResponseBytes:  config.DefaultMaxResponseBytes,
		StreamBufferLimit: config.DefaultBufferLimit,
		Logger:            slog.New(slog.DiscardHandler),
	}))
	b.Cleanup(g.Close)
	return g.URL + "/v1/chat/completions"
}
