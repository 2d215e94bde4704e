package proxy

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"go.opentelemetry.io/otel/trace"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	chatwire "github.com/hooks-gateway/hooks-gateway/internal/wire/chat"
	"github.com/hooks-gateway/hooks-gateway/metrics"
	"github.com/hooks-gateway/hooks-gateway/providers"
	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// upstream is a real HTTP model server for tests: it records every body it
// receives and answers with respond.
type upstream struct {
	*httptest.Server
	mu      sync.Mutex
	bodies  [][]byte
	respond func(w http.ResponseWriter, r *http.Request, body []byte)
}

func newUpstream(t *testing.T, respond func(w http.ResponseWriter, r *http.Request, body []byte)) *upstream {
	t.Helper()
	u := &upstream{respond: respond}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.bodies = append(u.bodies, body)
		u.mu.Unlock()
		u.respond(w, r, body)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) received() [][]byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([][]byte(nil), u.bodies...)
}

// jsonReply answers every request with body.
func jsonReply(body string) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}
}

// sseReply answers every request with the given SSE events.
func sseReply(events ...string) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			io.WriteString(w, "data: "+e+"\n\n")
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		}
	}
}

// recordSink collects records in emission order.
type recordSink struct {
	mu   sync.Mutex
	recs []*enforcement.Record
}

func (s *recordSink) WriteRecord(_ context.Context, r *enforcement.Record) error {
	s.mu.Lock()
	s.recs = append(s.recs, r)
	s.mu.Unlock()
	return nil
}

func (s *recordSink) all() []*enforcement.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*enforcement.Record(nil), s.recs...)
}

func (s *recordSink) points(session string) []enforcement.Point {
	var out []enforcement.Point
	for _, r := range s.all() {
		if session == "" || trailName(r.SessionID) == session {
			out = append(out, r.InterceptionPoint)
		}
	}
	return out
}

// policy is a test interceptor written as a function of the context.
type policy func(c enforcement.Context) enforcement.Verdict

func (p policy) Intercept(_ context.Context, c enforcement.Context) (enforcement.Verdict, error) {
	return p(c), nil
}

func allowAll(enforcement.Context) enforcement.Verdict { return enforcement.Allow() }

// gateway is a running gateway under test.
type gateway struct {
	*httptest.Server
	srv     *Server
	records *recordSink
	metrics *metrics.Metrics
}

type gatewayConfig struct {
	policy    policy
	upstream  string // base URL of the upstream (…/v1)
	store     sessions.Store
	timeout   time.Duration // upstream timeout
	keepAlive time.Duration
	buffer    int64
	maxBody   int64
	mode      enforcement.Mode
	// pointModes override mode per point.
	pointModes map[enforcement.Point]enforcement.Mode
	// interceptTimeout bounds the interceptor; default 2s.
	interceptTimeout time.Duration
	// tracer, when set, turns tracing on.
	tracer trace.Tracer
	// identity is the emitter's identity provider; nil is jcs-sha256.
	identity *enforcement.IdentityProvider
	// log receives the gateway's logs and the HTTP server's error log
	// (recovered handler panics); nil discards both.
	log io.Writer
	// allowRequestMembers are the chat surface's extra request members.
	allowRequestMembers []string
	// strictMembers refuses the chat members the gateway does not know
	// (wire.chat.unknown_members: refuse).
	strictMembers bool
	// maxResponse is limits.max_response_bytes; 0 is the default.
	maxResponse int64
	// budget is limits.buffer_budget; 0 derives it.
	budget int64
	// maxMessages is limits.max_messages; 0 is the default.
	maxMessages int
	// maxInputMessages is limits.max_input_messages; 0 is the default.
	maxInputMessages int
	// streaming is the streaming configuration; zero buffers every stream.
	streaming config.Streaming
	// maxRequests is server.max_requests; 0 is no cap.
	maxRequests int
	// denyReplay is sessions.deny_replay_window; 0 is off.
	denyReplay time.Duration
	// endWait is Options.EndWait; 0 is the default.
	endWait time.Duration
	// surfaces, when set, replace the chat surface the gateway serves.
	surfaces []wire.Surface
	// sink, when set, takes the records as the emitter's own sink (not
	// instrumented, so its WriteRecords is called when it has one);
	// gateway.records then stays empty.
	sink enforcement.RecordSink
}

func newGateway(t *testing.T, gc gatewayConfig) *gateway {
	t.Helper()
	sink := &recordSink{}
	if gc.policy == nil {
		gc.policy = allowAll
	}
	if gc.interceptTimeout == 0 {
		gc.interceptTimeout = 2 * time.Second
	}
	m := metrics.New(metrics.Options{NoRuntimeCollectors: true})
	em, err := enforcement.NewEmitter(enforcement.Options{
		Interceptors: []enforcement.Registration{{Name: "test", Interceptor: gc.policy}},
		Mode:         gc.mode,
		PointModes:   gc.pointModes,
		Sink:         cmp.Or[enforcement.RecordSink](gc.sink, m.InstrumentSink("test", sink)),
		Timeout:      gc.interceptTimeout,
		Observer:     m,
		Identity:     gc.identity,
	})
	if err != nil {
		t.Fatal(err)
	}
	up, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "test-upstream", BaseURL: gc.upstream, APIKey: "upstream-key", Timeout: gc.timeout})
	if err != nil {
		t.Fatal(err)
	}
	router, err := providers.NewRouter([]providers.Route{{Patterns: []string{"*"}, Upstream: up}})
	if err != nil {
		t.Fatal(err)
	}
	if gc.log == nil {
		gc.log = io.Discard
	}
	store := gc.store
	if store == nil {
		store = sessions.NewMemory(sessions.Options{})
	}
	if gc.maxMessages == 0 {
		gc.maxMessages = config.DefaultMaxMessages
	}
	surfaces := gc.surfaces
	if surfaces == nil {
		surfaces = []wire.Surface{chatwire.New(chatwire.Options{AllowRequestMembers: gc.allowRequestMembers, StrictMembers: gc.strictMembers, MaxMessages: gc.maxMessages})}
	}
	srv := New(Options{
		Policy:            &Policy{Emitter: em, Router: router},
		Store:             store,
		StreamBufferLimit: gc.buffer,
		MaxResponseBytes:  gc.maxResponse,
		BufferBudget:      gc.budget,
		MaxInputMessages:  gc.maxInputMessages,
		KeepAlive:         gc.keepAlive,
		Streaming:         gc.streaming,
		MaxRequests:       gc.maxRequests,
		DenyReplayWindow:  gc.denyReplay,
		EndWait:           gc.endWait,
		MaxRequestBytes:   gc.maxBody,
		Logger:            slog.New(slog.NewTextHandler(gc.log, nil)),
		Metrics:           m,
		Tracer:            gc.tracer,
		Surfaces:          surfaces,
	})
	hs := httptest.NewUnstartedServer(srv)
	hs.Config.ErrorLog = log.New(gc.log, "", 0)
	hs.Start()
	t.Cleanup(hs.Close)
	return &gateway{Server: hs, srv: srv, records: sink, metrics: m}
}

// client is the official OpenAI Go client pointed at the gateway.
func (g *gateway) client(opts ...option.RequestOption) openai.Client {
	base := []option.RequestOption{option.WithBaseURL(g.URL + "/v1"), option.WithAPIKey("client-key"), option.WithMaxRetries(0)}
	return openai.NewClient(append(base, opts...)...)
}

// post sends a raw chat request and returns status, headers and body.
func (g *gateway) post(t *testing.T, body string, header map[string]string) (int, http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// envelope is OpenAI's error envelope as the tests read it.
type envelope struct {
	Error envelopeBody `json:"error"`
}

type envelopeBody struct {
	Message           string  `json:"message"`
	Type              string  `json:"type"`
	Code              string  `json:"code"`
	Param             *string `json:"param"`
	InterceptionPoint string  `json:"interception_point,omitempty"`
	SessionID         string  `json:"session_id,omitempty"`
	Sequence          *int64  `json:"sequence,omitempty"`
}

// errorBody decodes the gateway's error envelope.
func errorBody(t *testing.T, b []byte) envelopeBody {
	t.Helper()
	var env struct {
		Error envelopeBody `json:"error"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("not an error envelope: %s", b)
	}
	return env.Error
}

func userParams(model, text string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    model,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)},
	}
}

func equalPoints(t *testing.T, got []enforcement.Point, want ...enforcement.Point) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("points = %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("points = %v, want %v", got, want)
		}
	}
}

const completionJSON = `{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"gpt-test","system_fingerprint":"fp","choices":[{"index":0,"message":{"role":"assistant","content":"Hello there, FRIEND","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`

const toolCallJSON = `{"id":"chatcmpl-2","object":"chat.completion","created":1700000000,"model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"/etc/passwd\",\"limit\":10}"}},{"id":"call_b","type":"function","function":{"name":"list","arguments":"{ \"dir\" : \"/tmp\" }"}}]},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":9,"completion_tokens":7,"total_tokens":16}}`

func chunk(delta string, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `{"id":"chatcmpl-s","object":"chat.completion.chunk","created":1700000000,"model":"gpt-test","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + f + `}]}`
}

const usageChunk = `{"id":"chatcmpl-s","object":"chat.completion.chunk","created":1700000000,"model":"gpt-test","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2,"total_tokens":6}}`

// mintedID matches the id the gateway mints for a chat answer.
var mintedID = regexp.MustCompile(`"id":"(chatcmpl-[0-9a-f]{24})"`)

// upstreamMeta matches what the gateway edits in an upstream chat answer:
// its id, and its system_fingerprint (removed).
var (
	upstreamID          = regexp.MustCompile(`"id":"[^"]*"`)
	upstreamFingerprint = regexp.MustCompile(`,?"system_fingerprint":"[^"]*"`)
)

// asReleased is the upstream chat answer (a JSON body, or the events of
// an SSE stream) as the gateway releases it when the verdict left it:
// each chunk's or the body's id (its first, in these fixtures) replaced by
// the one the gateway minted, which it reads from got, and no
// system_fingerprint; every other byte is the upstream's (the tests'
// upstreams answer with the requested model).
func asReleased(upstream, got string) string {
	m := mintedID.FindString(got)
	if m == "" {
		return upstream
	}
	var b strings.Builder
	for _, line := range strings.SplitAfter(upstreamFingerprint.ReplaceAllString(upstream, ""), "\n") {
		if loc := upstreamID.FindStringIndex(line); loc != nil {
			line = line[:loc[0]] + m + line[loc[1]:]
		}
		b.WriteString(line)
	}
	return b.String()
}
