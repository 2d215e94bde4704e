package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	chatwire "github.com/hooks-gateway/hooks-gateway/internal/wire/chat"
	"github.com/hooks-gateway/hooks-gateway/providers"
	"github.com/hooks-gateway/hooks-gateway/proxy"
	"github.com/hooks-gateway/hooks-gateway/sdk"
	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// gatewayModelID is the model the harness asks the gateway for; the router
// sends it to the scripted upstream.
const gatewayModelID = "mock"

// gatewayCallTimeout bounds one HTTP exchange of the harness (an emit call,
// a model call, the gateway's call to the scripted upstream). Everything is
// in-process, so it only turns a hang into a failure.
const gatewayCallTimeout = 10 * time.Second

// Error types of the gateway's OpenAI-style envelope that carry a verdict
// (proxy/errors.go): a policy deny (403) and a host_error:* deny (503, or
// 504 for an interceptor timeout).
const (
	gatewayTypeDenied    = "agent_hooks_denied"
	gatewayTypeHostError = "agent_hooks_host_error"
)

// GatewayDeclaration is the declared surface of the gateway harness on
// api. The gateway hosts the same emitter as the SDK-local harness, so it
// declares the same capabilities, postures, profiles and identity
// provider whatever the surface; the name says which surface ran.
func GatewayDeclaration(api wire.API) Declaration {
	d := SDKLocalDeclaration()
	d.Name = "gateway/" + string(api)
	return d
}

// GatewayAPIs lists the surfaces the gateway harness drives, in report
// order.
func GatewayAPIs() []wire.API {
	return []wire.API{wire.ChatCompletions, wire.Responses, wire.Messages}
}

// NewGatewayHarness returns the gateway harness on chat completions (see
// GatewayHarness).
func NewGatewayHarness() Harness { return &gatewayHarness{surface: chatSurface()} }

// GatewayHarness returns the factory of harnesses whose production path is
// the real gateway over HTTP on api: the vector's emitter behind
// proxy.Server on a real listener, driven by an SDK remote session (the
// emit API for startup, input, the tool points, output and shutdown) and
// by the surface's official client through the session's transport (the
// gateway emits pre_model_call and post_model_call in the same session).
// Only the model (a scripted upstream answering in the surface's own
// format) and the tools are mocked.
func GatewayHarness(api wire.API) (HarnessFactory, error) {
	s, err := gatewaySurfaceFor(api)
	if err != nil {
		return nil, err
	}
	return func() Harness { return &gatewayHarness{surface: s} }, nil
}

// gatewaySurface is what the harness needs of one API surface: the
// scripted upstream's native answers, the gateway upstream that reaches
// it, and the model seam driving the surface with its official client.
type gatewaySurface struct {
	api wire.API
	// upstreamPath is where the gateway's upstream posts the surface's
	// operation on the scripted server.
	upstreamPath string
	// render is model_script[n] as the upstream's native answer.
	render func(n int, r Response) ([]byte, error)
	// errorBody is an upstream error in the surface's envelope.
	errorBody func(msg string) []byte
	// newUpstream is the gateway's upstream for the scripted server.
	newUpstream func(baseURL string, transport http.RoundTripper) (providers.Upstream, error)
	// newModel is the model seam sending to the gateway at root through hc.
	newModel func(root string, hc *http.Client, tools []Tool) modelSeam
	// renderStream, when set, is model_script[n] as the upstream's SSE
	// events, terminal sentinel included; cut ends the stream after them,
	// the connection dropped mid-answer. Without it the upstream refuses
	// to stream.
	renderStream func(n int, r Response) (events []sseEvent, cut bool, err error)
}

// sseEvent is one server-sent event of a scripted stream: name, when set,
// is its "event:" line; data is its one data line.
type sseEvent struct {
	name string
	data []byte
}

// writeTo writes the event in text/event-stream framing.
func (e sseEvent) writeTo(w io.Writer) error {
	if e.name != "" {
		if _, err := fmt.Fprintf(w, "event: %s\n", e.name); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "data: %s\n\n", e.data)
	return err
}

// gatewaySurfaceFor returns api's surface kit.
func gatewaySurfaceFor(api wire.API) (gatewaySurface, error) {
	switch api {
	case wire.ChatCompletions:
		return chatSurface(), nil
	case wire.Responses:
		return responsesSurface(), nil
	case wire.Messages:
		return messagesSurface(), nil
	}
	return gatewaySurface{}, fmt.Errorf("the gateway harness has no surface %q (surfaces: chat_completions, responses, messages)", api)
}

// openAIUpstream is the gateway's OpenAI-type upstream for the scripted
// server; it serves chat completions and responses alike.
func openAIUpstream(baseURL string, transport http.RoundTripper) (providers.Upstream, error) {
	return providers.NewOpenAI(providers.OpenAIConfig{
		Name:      "ctk-mock",
		BaseURL:   baseURL,
		Timeout:   gatewayCallTimeout,
		Models:    []string{gatewayModelID},
		Transport: transport,
	})
}

type gatewayHarness struct {
	surface gatewaySurface
	// streaming is the gateway's streaming configuration; declaration,
	// when named, replaces GatewayDeclaration (the incremental harness).
	streaming   config.Streaming
	declaration Declaration
	// mcpTools serves the vector's tools from an MCP server behind the
	// gateway's /mcp/{name} route, where the tool calls go (see
	// GatewayMCPHarness).
	mcpTools bool
	tools    *mcpToolServer
	v        *Vector
	recorder *contextRecorder
	records  *recordCollector
	upstream *httptest.Server
	gateway  *httptest.Server
}

func (h *gatewayHarness) Declaration() Declaration {
	if h.declaration.Name != "" {
		return h.declaration
	}
	return GatewayDeclaration(h.surface.api)
}

// Setup builds the vector's emitter (recording every record), the scripted
// upstream, and the gateway in front of it.
func (h *gatewayHarness) Setup(v *Vector) error {
	h.v = v
	h.recorder = &contextRecorder{}
	h.records = &recordCollector{}
	opts, err := emitterOptions(v, h.recorder)
	if err != nil {
		return err
	}
	opts.Sink = h.records
	// As proxy.BuildPolicy does: a pre_model_call transform must still be
	// a message list the gateway can send upstream.
	opts.TargetValidators = map[enforcement.Point]enforcement.TargetValidator{
		enforcement.PreModelCall: chatwire.ValidateMessages,
	}
	em, err := enforcement.NewEmitter(opts)
	if err != nil {
		return err
	}
	h.upstream = httptest.NewServer(newScriptedUpstream(h.surface, v.Scenario.ModelScript))
	up, err := h.surface.newUpstream(h.upstream.URL, h.upstream.Client().Transport)
	if err != nil {
		return err
	}
	router, err := providers.NewRouter([]providers.Route{{Patterns: []string{gatewayModelID}, Upstream: up}})
	if err != nil {
		return err
	}
	// Every surface the product serves, with the default wire allowances.
	surfaces, err := proxy.Surfaces(config.Default())
	if err != nil {
		return err
	}
	pol := &proxy.Policy{Emitter: em, Router: router, Version: "ctk-" + v.ID}
	if h.mcpTools {
		if h.tools, err = newMCPToolServer(v.Scenario.Tools); err != nil {
			return err
		}
		pol.ServeMCP(h.tools.config())
	}
	srv := proxy.New(proxy.Options{
		Policy:    pol,
		Store:     sessions.NewMemory(sessions.Options{}),
		Logger:    slog.New(slog.DiscardHandler),
		Surfaces:  surfaces,
		Streaming: h.streaming,
	})
	h.gateway = httptest.NewServer(srv)
	return nil
}

// Teardown stops the gateway, then the upstream; each Close waits for its
// requests in flight and closes the harness's idle connections.
func (h *gatewayHarness) Teardown() {
	if h.gateway != nil {
		h.gateway.Close()
	}
	if h.upstream != nil {
		h.upstream.Close()
	}
	if h.tools != nil {
		h.tools.close()
	}
}

// Run drives the reference agent loop (CTK.md §2.2) through the gateway.
func (h *gatewayHarness) Run(ctx context.Context) (*RunRecord, error) {
	httpClient := h.gateway.Client()
	// The SDK's own copy of the records: the gateway's (already in
	// h.records) plus the host-failure records of emissions the SDK failed
	// closed on without a gateway verdict.
	sdkRecords := &recordCollector{}
	session, err := sdk.NewRemoteSession(sdk.RemoteConfig{
		BaseURL:    h.gateway.URL,
		Agent:      enforcement.Agent{ID: "ref-agent", Framework: "reference-agent"},
		SessionID:  "ctk-" + h.v.ID,
		HTTPClient: httpClient,
		Timeout:    gatewayCallTimeout,
		Sink:       sdkRecords,
	})
	if err != nil {
		return nil, err
	}
	modelClient := &http.Client{Transport: session.Transport(httpClient.Transport)}
	model := h.surface.newModel(h.gateway.URL, modelClient, h.v.Scenario.Tools)
	loop := &agentLoop{v: h.v, session: session, model: model}
	if h.tools != nil {
		loop.tools = &mcpToolSeam{url: h.gateway.URL + mcpRoutePrefix + mcpServerName, client: modelClient}
	}
	runErr := loop.run(ctx)
	if h.tools != nil {
		// The tools ran behind the gateway: their failures and their log
		// are the server's.
		runErr = errors.Join(h.tools.failure(), runErr)
		loop.invocations = h.tools.invocations()
	}
	if err := sdkFailures(sdkRecords.take()); err != nil {
		// The cause first: the loop's own error usually follows from it.
		return nil, errors.Join(err, runErr)
	}
	if runErr != nil {
		return nil, runErr
	}
	rr := &RunRecord{
		Outcome:         loop.outcome,
		FinalOutput:     loop.final,
		ToolInvocations: loop.invocations,
		Interceptions:   h.recorder.contexts(),
	}
	if rr.ToolInvocations == nil {
		rr.ToolInvocations = []ToolInvocation{}
	}
	if inc, ok := model.(incrementalModel); ok {
		rr.ReleasedOutput = inc.releasedOutput()
		if rr.Persisted, err = inc.persisted(); err != nil {
			return nil, fmt.Errorf("serialize the transcript: %w", err)
		}
	}
	if err := fillRecords(rr, h.records.take()); err != nil {
		return nil, err
	}
	return rr, nil
}

// incrementalModel is a model seam that reads streams: it reports the
// text released to it and the transcript it kept.
type incrementalModel interface {
	releasedOutput() string
	persisted() (string, error)
}

// sdkFailures reports the emissions the SDK failed closed on by itself
// (gateway unreachable, malformed answer, unencodable context). Their
// records carry sequence -1 and never reach the gateway's sink, and their
// deny is the SDK's, not the policy's: the run did not test the gateway,
// so it is a harness error rather than a verdict to assert.
func sdkFailures(records []*enforcement.Record) error {
	var errs []error
	for _, r := range records {
		if r.Sequence >= 0 {
			continue
		}
		errs = append(errs, fmt.Errorf("the SDK failed closed at %s without a gateway verdict: %s: %s",
			r.InterceptionPoint, r.Verdict.Reason, r.Verdict.Message))
	}
	return errors.Join(errs...)
}

// recordCollector is a thread-safe record sink. As the emitter's sink it
// holds every record the gateway writes, for model calls and for the emit
// API alike, in order.
type recordCollector struct {
	mu   sync.Mutex
	recs []*enforcement.Record
}

// WriteRecord implements enforcement.RecordSink.
func (c *recordCollector) WriteRecord(_ context.Context, r *enforcement.Record) error {
	c.mu.Lock()
	c.recs = append(c.recs, r)
	c.mu.Unlock()
	return nil
}

// take returns the records collected so far and forgets them.
func (c *recordCollector) take() []*enforcement.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.recs
	c.recs = nil
	return out
}

// modelBlockedError is a model call the gateway refused with a verdict.
type modelBlockedError struct {
	call   int
	point  enforcement.Point
	status int
	code   string
}

func (e *modelBlockedError) Error() string {
	return fmt.Sprintf("model_script[%d]: the gateway blocked the model call at %s (HTTP %d, %s)", e.call, e.point, e.status, e.code)
}

// Is makes the error match errModelCallBlocked.
func (e *modelBlockedError) Is(target error) bool { return target == errModelCallBlocked }

// messageText is the wire text of a transcript value: a string as is, any
// other JSON value as its exact JSON text.
func messageText(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	b, err := jsonvalue.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// modelPointVerdict sorts a gateway error answer to model call i, read
// from whichever envelope the surface uses: a verdict error (policy deny
// 403, host_error 503/504) at a model point is the model call being
// blocked, which ends the run as blocked (CTK.md §2.2); anything else is a
// harness error.
func modelPointVerdict(i, status int, typ, code, point string) error {
	p := enforcement.Point(point)
	// Anthropic's envelope types errors by status; only verdict errors
	// carry an interception point.
	verdict := typ == gatewayTypeDenied || typ == gatewayTypeHostError || p != ""
	if verdict && (p == enforcement.PreModelCall || p == enforcement.PostModelCall) {
		return &modelBlockedError{call: i, point: p, status: status, code: code}
	}
	return fmt.Errorf("model_script[%d]: the gateway answered HTTP %d (type %q, code %q, point %q)",
		i, status, typ, code, point)
}

// scriptedUpstream is one surface's upstream endpoint answering its N-th
// call with model_script[N] in the surface's native format
// (non-streaming). Any other route is a 404, so a gateway that sends a
// surface's call to another operation fails the run.
type scriptedUpstream struct {
	surface gatewaySurface
	script  []ModelTurn

	mu    sync.Mutex
	calls int
}

func newScriptedUpstream(s gatewaySurface, script []ModelTurn) *scriptedUpstream {
	return &scriptedUpstream{surface: s, script: script}
}

func (u *scriptedUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != u.surface.upstreamPath {
		u.fail(w, http.StatusNotFound, "no route for "+r.Method+" "+r.URL.Path)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		u.fail(w, http.StatusBadRequest, "the request body could not be read")
		return
	}
	var req struct {
		Stream bool `json:"stream"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		u.fail(w, http.StatusBadRequest, "the request is not a JSON object")
		return
	}
	if req.Stream && u.surface.renderStream == nil {
		u.fail(w, http.StatusBadRequest, "the scripted upstream does not stream")
		return
	}
	n := u.next()
	if n >= len(u.script) {
		u.fail(w, http.StatusInternalServerError, fmt.Sprintf("model call %d is beyond the %d scripted responses", n, len(u.script)))
		return
	}
	if req.Stream {
		u.stream(w, n)
		return
	}
	out, err := u.surface.render(n, u.script[n].Respond)
	if err != nil {
		u.fail(w, http.StatusInternalServerError, fmt.Sprintf("model_script[%d]: %v", n, err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}

// stream answers model call n with its SSE events, flushing each; a cut
// stream's connection is closed after its events.
func (u *scriptedUpstream) stream(w http.ResponseWriter, n int) {
	events, cut, err := u.surface.renderStream(n, u.script[n].Respond)
	if err != nil {
		u.fail(w, http.StatusInternalServerError, fmt.Sprintf("model_script[%d]: %v", n, err))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	for _, e := range events {
		if e.writeTo(w) != nil {
			return // the gateway hung up
		}
		if f != nil {
			f.Flush()
		}
	}
	if cut {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close() // the stream dies mid-answer
			}
		}
	}
}

// next counts a model call and returns its index.
func (u *scriptedUpstream) next() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := u.calls
	u.calls++
	return n
}

// fail answers with the surface's error envelope.
func (u *scriptedUpstream) fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(u.surface.errorBody(msg))
}

// scriptedArgs is the exact JSON text of a scripted tool call's args:
// number tokens kept (9007199254740993 reaches the gateway intact), and
// missing args are {}.
func scriptedArgs(tc ToolCall) ([]byte, error) {
	args := tc.Args
	if args == nil {
		args = map[string]any{}
	}
	text, err := jsonvalue.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("tool call %s args: %w", tc.ID, err)
	}
	return text, nil
}
