package proxy

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/internal/agenttraffic"
	"github.com/hooks-gateway/hooks-gateway/internal/cputime"
	"github.com/hooks-gateway/hooks-gateway/internal/seal"
)

// The agent benchmarks serve, through the embedded default configuration's
// handler (its policy and sessions, records discarded), the requests
// coding agents send and the bench's agent scenarios measure
// (internal/agenttraffic): the per-request cost of reading, projecting,
// identifying and judging a long history, without a load generator.
// The model is not the embedded default's in-process mock, which decodes
// the whole prompt to answer it (as much CPU as the gateway's own path
// on these requests): it is a loopback upstream of the surface's type
// that reads the request and sends a short canned answer, so the figures
// hold the gateway's path plus one HTTP hop's two ends, which a bare
// proxy spends too. Compare CPU-ns/op and allocs/op before and after a
// change; profile with -cpuprofile.

// Canned answers of each surface: a short text.
const (
	cannedResponse = `{"id":"resp_bench","object":"response","created_at":1700000000,"status":"completed","model":"gpt-bench","output":[{"type":"message","id":"msg_bench","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Done: the shard tests pass.","annotations":[]}]}],"usage":{"input_tokens":21000,"output_tokens":8,"total_tokens":21008}}`
	cannedMessage  = `{"id":"msg_bench","type":"message","role":"assistant","model":"claude-bench","content":[{"type":"text","text":"Done: the shard tests pass."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":21000,"output_tokens":8}}`
	cannedChat     = `{"id":"chatcmpl-bench","object":"chat.completion","created":1700000000,"model":"gpt-bench","choices":[{"index":0,"message":{"role":"assistant","content":"Done: the shard tests pass.","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":21000,"completion_tokens":8,"total_tokens":21008}}`
)

// cannedUpstream answers every model call with its surface's canned
// answer after reading (and discarding) the request.
func cannedUpstream() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/responses"):
			io.WriteString(w, cannedResponse)
		case strings.HasSuffix(r.URL.Path, "/messages"):
			io.WriteString(w, cannedMessage)
		default:
			io.WriteString(w, cannedChat)
		}
	}))
}

// agentBenchKey is the sealing key the benchmarks configure, so the Codex
// history can carry its function calls' ids as the gateway's seals.
var agentBenchKey = seal.Key{ID: "bench", Secret: []byte("hooks-gateway-bench-sealing-key-not-a-secret-0123456789abcdef")}

// agentCapture is a captured request body of e2e/testdata.
func agentCapture(b *testing.B, fixture, path string) []byte {
	body, err := agenttraffic.LoadCapture(filepath.Join("..", agenttraffic.CaptureDir), fixture, path)
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// benchAgent serves body at path through the default configuration with
// agentBenchKey as its sealing key and a canned upstream of the surface,
// header (when set) on every request.
func benchAgent(b *testing.B, path string, body []byte, header http.Header) {
	up := cannedUpstream()
	defer up.Close()
	benchUpstream(b, up, path, body, header)
}

// benchUpstream is benchAgent with upstream up.
func benchUpstream(b *testing.B, up *httptest.Server, path string, body []byte, header http.Header) {
	if _, set := os.LookupEnv("OPENAI_API_KEY"); set {
		b.Setenv("OPENAI_API_KEY", "") // the default then keeps the mock
		os.Unsetenv("OPENAI_API_KEY")
	}
	cfg := config.Default()
	typ, base := config.TypeOpenAI, up.URL+"/v1"
	if strings.HasSuffix(path, "/messages") {
		typ, base = config.TypeAnthropic, up.URL // the anthropic type adds /v1/messages
	}
	u := cfg.Upstreams[0] // the openai upstream: its timeouts
	u.Name, u.Type, u.BaseURL, u.APIKeyEnv, u.APIKey, u.Models = "bench", typ, base, "", "", []string{"*"}
	cfg.Upstreams = []config.Upstream{u}
	cfg.Seal.Keys = []config.SealKey{{ID: agentBenchKey.ID, SecretEnv: "HOOKS_BENCH_SEAL", Secret: agentBenchKey.Secret}}
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	asm, err := Build(context.Background(), cfg, io.Discard, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	defer asm.Close()
	serve := func() {
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header[k] = v
		}
		rec := httptest.NewRecorder()
		asm.Server.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
	}
	serve()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	cpu0 := cputime.Process()
	for b.Loop() {
		serve()
	}
	cputime.ReportPerOp(b, cpu0)
	if st := asm.Server.opts.SessionCache.Stats(); st.Sessions > 0 {
		// What the managed session's history takes in the cache
		// (docs/configuration.md, sessions.cache_bytes).
		b.ReportMetric(float64(st.Bytes)/1024, "cache-KiB")
	}
}

// codex84k is the bench's codex request: the captured Codex request grown
// to 84 KiB with 40 tool rounds, its function calls' ids sealed.
func codex84k(b *testing.B) []byte {
	k, err := seal.New(agentBenchKey)
	if err != nil {
		b.Fatal(err)
	}
	body, err := agenttraffic.Codex(agentCapture(b, agenttraffic.CodexFixture, "/v1/responses"), 40, 84<<10,
		func(id string) string { return k.SealString(agenttraffic.ItemIDSealKind, id) })
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// BenchmarkHandlerCodex84k: the 84 KiB Codex Responses history
// (store: false), per-request session: the parse, projection, identity and
// default policy of a whole agent conversation, every request.
func BenchmarkHandlerCodex84k(b *testing.B) { benchAgent(b, "/v1/responses", codex84k(b), nil) }

// BenchmarkHandlerCodex84kManaged: the same request as the next turn of
// one managed session whose history the gateway has already seen.
func BenchmarkHandlerCodex84kManaged(b *testing.B) {
	benchAgent(b, "/v1/responses", codex84k(b), http.Header{HeaderSession: {"bench-codex"}})
}

// BenchmarkHandlerClaudeCode84k: the captured Claude Code Messages request
// (system prompt, tool set) grown to 84 KiB with 40 Bash tool rounds.
func BenchmarkHandlerClaudeCode84k(b *testing.B) {
	body, err := agenttraffic.ClaudeCode(agentCapture(b, agenttraffic.ClaudeCodeFixture, "/v1/messages"), 40, 84<<10)
	if err != nil {
		b.Fatal(err)
	}
	benchAgent(b, "/v1/messages", body, nil)
}

// BenchmarkHandlerClaudeCode84kManaged: the same request as the next turn
// of one managed session whose history the gateway has already seen.
func BenchmarkHandlerClaudeCode84kManaged(b *testing.B) {
	body, err := agenttraffic.ClaudeCode(agentCapture(b, agenttraffic.ClaudeCodeFixture, "/v1/messages"), 40, 84<<10)
	if err != nil {
		b.Fatal(err)
	}
	benchAgent(b, "/v1/messages", body, http.Header{HeaderSession: {"bench-claude-code"}})
}

// BenchmarkHandlerChatTurn50: turn 50 (about 84 KB) of the bench's chat
// conversation, per-request session.
func BenchmarkHandlerChatTurn50(b *testing.B) {
	benchAgent(b, "/v1/chat/completions", agenttraffic.ChatTurns(50, agenttraffic.ChatOutputBytes)[49], nil)
}

// BenchmarkHandlerChatTurn50Managed: turn 50 as the next turn of one
// managed session whose history the gateway has already seen.
func BenchmarkHandlerChatTurn50Managed(b *testing.B) {
	benchAgent(b, "/v1/chat/completions", agenttraffic.ChatTurns(50, agenttraffic.ChatOutputBytes)[49], http.Header{HeaderSession: {"bench-chat"}})
}
