package proxy

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/internal/agenttraffic"
	"github.com/hooks-gateway/hooks-gateway/internal/seal"
	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// TestSessionCacheRecordsUnchanged serves the same managed conversations
// (a Codex history with sealed ids, a Claude Code history whose system
// prompt the default policy redacts, a growing chat) through two
// gateways, one with the session cache and one without, on one fixed
// clock, and compares every record they write byte for byte: the cache
// changes no record, identity, verdict or answer. Redis keeps the
// sessions, so the two gateways' session ids are the same.
func TestSessionCacheRecordsUnchanged(t *testing.T) {
	url, _ := redistest.Start(t)
	up := cannedUpstream()
	defer up.Close()
	turns := sessionCacheTurns(t)

	run := func(cacheBytes int64, prefix string) (records []byte, answers []string) {
		var out lockedBuffer
		for _, c := range turns {
			cfg := cachedGatewayConfig(t, up.URL, c.path, url, prefix, cacheBytes)
			clock := fixedClock()
			asm, err := Build(context.Background(), cfg, &out, slog.New(slog.NewTextHandler(io.Discard, nil)),
				func(o *Options) { o.Now = clock })
			if err != nil {
				t.Fatal(err)
			}
			if (asm.Server.opts.SessionCache == nil) != (cacheBytes == 0) {
				t.Fatalf("cache_bytes %d: cache %v", cacheBytes, asm.Server.opts.SessionCache)
			}
			for i, body := range c.bodies {
				for range 2 { // each turn twice: the second reuses all of it
					req := httptest.NewRequest(http.MethodPost, c.path, bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set(HeaderSession, c.name)
					rec := httptest.NewRecorder()
					asm.Server.ServeHTTP(rec, req)
					if rec.Code != http.StatusOK {
						t.Fatalf("%s turn %d: status %d: %s", c.name, i, rec.Code, rec.Body.String())
					}
					answers = append(answers, rec.Body.String())
				}
			}
			if cacheBytes > 0 {
				wantCacheMetrics(t, asm.Server)
			}
			if st := asm.Server.opts.SessionCache.Stats(); cacheBytes > 0 && st.Bytes == 0 {
				t.Fatalf("%s: the cache kept nothing", c.name)
			}
			// Ending the session forgets its cache.
			end := httptest.NewRequest(http.MethodPost, "/v1/agent-hooks/sessions/"+c.name+"/end", strings.NewReader(`{"reason":"completed"}`))
			end.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			asm.Server.ServeHTTP(rec, end)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: end: status %d: %s", c.name, rec.Code, rec.Body.String())
			}
			if st := asm.Server.opts.SessionCache.Stats(); st.Sessions != 0 || st.Bytes != 0 {
				t.Fatalf("%s: the ended session's cache is kept: %+v", c.name, st)
			}
			asm.Close()
		}
		return []byte(out.String()), answers
	}
	withRecords, withAnswers := run(config.DefaultSessionCacheBytes, "on:")
	withoutRecords, withoutAnswers := run(0, "off:")
	if n := bytes.Count(withRecords, []byte("\n")); n < 20 {
		t.Fatalf("only %d records", n)
	}
	if !bytes.Contains(withRecords, []byte(`"transform"`)) {
		t.Fatal("no transform among the records: the redaction path was not compared")
	}
	if !bytes.Equal(withRecords, withoutRecords) {
		a, b := strings.Split(string(withRecords), "\n"), strings.Split(string(withoutRecords), "\n")
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				t.Fatalf("record %d differs:\nwith the cache:    %.600s\nwithout the cache: %.600s", i, a[i], b[i])
			}
		}
		t.Fatalf("%d records with the cache, %d without", len(a), len(b))
	}
	for i := range withAnswers {
		// Answers carry fresh ids and seals (random nonces): the rest must
		// match.
		if mintedIDs.ReplaceAllString(withAnswers[i], "#") != mintedIDs.ReplaceAllString(withoutAnswers[i], "#") {
			t.Fatalf("answer %d differs:\n%.400s\n%.400s", i, withAnswers[i], withoutAnswers[i])
		}
	}
}

// wantCacheMetrics fails unless s's metrics show the session cache
// holding a session and answering lookups from it.
func wantCacheMetrics(t *testing.T, s *Server) {
	t.Helper()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	for _, re := range []string{
		`(?m)^hooks_gateway_session_cache_units_total\{result="hit"\} [1-9]`,
		`(?m)^hooks_gateway_session_cache_units_total\{result="miss"\} [1-9]`,
		`(?m)^hooks_gateway_session_cache_sessions [1-9]`,
		`(?m)^hooks_gateway_session_cache_bytes [1-9]`,
	} {
		if !regexp.MustCompile(re).MatchString(body) {
			t.Fatalf("/metrics (status %d) has no series matching %s", rec.Code, re)
		}
	}
}

// mintedIDs are what an answer holds that the gateway mints afresh, and
// the wall-clock second it was made in.
var mintedIDs = regexp.MustCompile(`"id":"[^"]*"|hgs1_[A-Za-z0-9_-]+|"created(_at)?":[0-9]+`)

// cachedConversation is one managed session's requests, in order.
type cachedConversation struct {
	name, path string
	bodies     [][]byte
}

// sessionCacheTurns are the agent conversations the bench measures,
// turn by turn.
func sessionCacheTurns(t *testing.T) []cachedConversation {
	t.Helper()
	load := func(fixture, path string) []byte {
		b, err := agenttraffic.LoadCapture(filepath.Join("..", agenttraffic.CaptureDir), fixture, path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	k, err := seal.New(agentBenchKey)
	if err != nil {
		t.Fatal(err)
	}
	codex, claude := load(agenttraffic.CodexFixture, "/v1/responses"), load(agenttraffic.ClaudeCodeFixture, "/v1/messages")
	var cx, cc [][]byte
	for rounds := 1; rounds <= 4; rounds++ {
		b, err := agenttraffic.Codex(codex, rounds, 0, func(id string) string { return k.SealString(agenttraffic.ItemIDSealKind, id) })
		if err != nil {
			t.Fatal(err)
		}
		cx = append(cx, b)
		if b, err = agenttraffic.ClaudeCode(claude, rounds, 0); err != nil {
			t.Fatal(err)
		}
		cc = append(cc, b)
	}
	return []cachedConversation{
		{"codex-run", "/v1/responses", cx},
		{"claude-run", "/v1/messages", cc},
		{"chat-run", "/v1/chat/completions", agenttraffic.ChatTurns(4, 512)},
	}
}

// cachedGatewayConfig is cannedGatewayConfig with managed sessions in
// Redis at redisURL under prefix and the session cache at cacheBytes.
func cachedGatewayConfig(t *testing.T, upURL, path, redisURL, prefix string, cacheBytes int64) *config.Config {
	t.Helper()
	cfg := cannedGatewayConfig(t, upURL, path)
	cfg.Sessions.Store, cfg.Sessions.RedisURL, cfg.Sessions.KeyPrefix = config.StoreRedis, redisURL, prefix
	cfg.Sessions.CacheBytes = cacheBytes
	cfg.Records.PolicyMarkers = false // a marker line carries the wall clock
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// cannedGatewayConfig is the embedded default with one upstream of
// path's surface at upURL and the bench's sealing key.
func cannedGatewayConfig(t *testing.T, upURL, path string) *config.Config {
	t.Helper()
	t.Setenv("OPENAI_API_KEY", "")
	cfg := config.Default()
	typ, base := config.TypeOpenAI, upURL+"/v1"
	if strings.HasSuffix(path, "/messages") {
		typ, base = config.TypeAnthropic, upURL
	}
	u := cfg.Upstreams[0]
	u.Name, u.Type, u.BaseURL, u.APIKeyEnv, u.APIKey, u.Models = "canned", typ, base, "", "", []string{"*"}
	cfg.Upstreams = []config.Upstream{u}
	cfg.Seal.Keys = []config.SealKey{{ID: agentBenchKey.ID, SecretEnv: "HOOKS_TEST_SEAL", Secret: agentBenchKey.Secret}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// fixedClock is a clock that starts at one instant and advances a
// millisecond per reading: the same readings in the same order give the
// same timestamps.
func fixedClock() func() time.Time {
	var mu sync.Mutex
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Millisecond)
		return now
	}
}

// TestEmittedShutdownDropsSessionCache: an agent_shutdown an agent emits
// through the emit API drops its session's cache at once, as ending the
// session through /sessions/{id}/end does.
func TestEmittedShutdownDropsSessionCache(t *testing.T) {
	url, _ := redistest.Start(t)
	up := cannedUpstream()
	defer up.Close()
	c := sessionCacheTurns(t)[0]
	cfg := cachedGatewayConfig(t, up.URL, c.path, url, "emitend:", config.DefaultSessionCacheBytes)
	asm, err := Build(context.Background(), cfg, io.Discard, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer asm.Close()
	req := httptest.NewRequest(http.MethodPost, c.path, bytes.NewReader(c.bodies[0]))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderSession, c.name)
	rec := httptest.NewRecorder()
	asm.Server.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatal(rec.Code, rec.Body.String())
	}
	if st := asm.Server.opts.SessionCache.Stats(); st.Sessions != 1 {
		t.Fatalf("after one turn: %+v, want one session cached", st)
	}
	body := `{"interception_point":"agent_shutdown","agent":{"id":"` + asm.Server.opts.DefaultAgentID + `","framework":"f"},"session":{"id":"` + c.name + `"},"summary":{"reason":"completed"}}`
	end := httptest.NewRequest(http.MethodPost, "/v1/agent-hooks/emit", strings.NewReader(body))
	end.Header.Set("Content-Type", "application/json")
	rec = httptest.NewRecorder()
	asm.Server.ServeHTTP(rec, end)
	if rec.Code != 200 {
		t.Fatal(rec.Code, rec.Body.String())
	}
	if st := asm.Server.opts.SessionCache.Stats(); st.Sessions != 0 || st.Bytes != 0 {
		t.Fatalf("the ended session's cache is kept: %+v", st)
	}
}
