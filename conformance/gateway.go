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

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	chatwire "github.com/hooks-gateway/hooks-gateway/internal/wire/chat"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
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

// GatewayDeclaration is the declared surface of the gateway harness. The
// gateway hosts the same emitter as the SDK-local harness, so it declares
// the same capabilities, postures, profiles and identity provider.
func GatewayDeclaration() Declaration {
	d := SDKLocalDeclaration()
	d.Name = "gateway"
	return d
}

// NewGatewayHarness returns a harness whose production path is the real
// gateway over HTTP: the vector's emitter behind proxy.Server on a real
// listener, driven by an SDK remote session (the emit API for startup,
// input, the tool points, output and shutdown) and by the official
// openai-go client through the session's transport (the gateway emits
// pre_model_call and post_model_call in the same session). Only the model
// (a scripted OpenAI-compatible upstream) and the tools are mocked.
func NewGatewayHarness() Harness { return &gatewayHarness{} }

type gatewayHarness struct {
	v        *Vector
	recorder *contextRecorder
	records  *recordCollector
	upstream *httptest.Server
	gateway  *httptest.Server
}

func (h *gatewayHarness) Declaration() Declaration { return GatewayDeclaration() }

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
	h.upstream = httptest.NewServer(&scriptedUpstream{script: v.Scenario.ModelScript})
	up, err := providers.NewOpenAI(providers.OpenAIConfig{
		Name:      "ctk-mock",
		BaseURL:   h.upstream.URL,
		Timeout:   gatewayCallTimeout,
		Models:    []string{gatewayModelID},
		Transport: h.upstream.Client().Transport,
	})
	if err != nil {
		return err
	}
	router, err := providers.NewRouter([]providers.Route{{Patterns: []string{gatewayModelID}, Upstream: up}})
	if err != nil {
		return err
	}
	srv := proxy.New(proxy.Options{
		Policy: &proxy.Policy{Emitter: em, Router: router, Version: "ctk-" + v.ID},
		Store:  sessions.NewMemory(sessions.Options{}),
		Logger: slog.New(slog.DiscardHandler),
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
	client := openai.NewClient(
		option.WithBaseURL(h.gateway.URL+"/v1"),
		option.WithAPIKey("ctk"), // the gateway authenticates no client; never the environment's key
		option.WithHTTPClient(&http.Client{Transport: session.Transport(httpClient.Transport)}),
		option.WithMaxRetries(0),
		option.WithRequestTimeout(gatewayCallTimeout),
	)
	model := &gatewayModel{client: client, tools: openAITools(h.v.Scenario.Tools)}
	loop := &agentLoop{v: h.v, session: session, model: model}
	runErr := loop.run(ctx)
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
	if err := fillRecords(rr, h.records.take()); err != nil {
		return nil, err
	}
	return rr, nil
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
// holds every record the gateway writes, for chat completions and for the
// emit API alike, in order.
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

// gatewayModel is the gateway model seam: each model call is a chat
// completion sent with openai-go through the session's transport, so the
// gateway brackets it with pre_model_call and post_model_call in the
// session. The transcript is an OpenAI one: the input message, then per
// tool-calling turn the assistant message carrying its tool_calls followed
// by one tool message per call (tool_call_id, result or "blocked: …").
type gatewayModel struct {
	client   openai.Client
	tools    []openai.ChatCompletionToolUnionParam
	messages []openai.ChatCompletionMessageParamUnion
}

// open starts the transcript. A system input is a system message; user and
// external input are user messages (the chat wire has no external role).
func (m *gatewayModel) open(role string, content any) error {
	text, err := messageText(content)
	if err != nil {
		return fmt.Errorf("input content: %w", err)
	}
	msg := openai.UserMessage(text)
	if role == "system" {
		msg = openai.SystemMessage(text)
	}
	m.messages = []openai.ChatCompletionMessageParamUnion{msg}
	return nil
}

// call sends the transcript to the gateway and reads the verdicted
// response back: content (null stays nil), tool calls with their arguments
// decoded number-exactly, finish_reason. The assistant message joins the
// transcript at once, ahead of the tool messages that answer it.
func (m *gatewayModel) call(ctx context.Context, i int) (enforcement.ModelResponse, error) {
	params := openai.ChatCompletionNewParams{
		Model:    gatewayModelID,
		Messages: m.messages,
		Tools:    m.tools,
	}
	completion, err := m.client.Chat.Completions.New(ctx, params)
	if err != nil {
		return enforcement.ModelResponse{}, modelCallError(i, err)
	}
	if len(completion.Choices) != 1 {
		return enforcement.ModelResponse{}, fmt.Errorf("model_script[%d]: the gateway answered %d choices, want 1", i, len(completion.Choices))
	}
	choice := completion.Choices[0]
	msg := choice.Message
	resp := enforcement.ModelResponse{FinishReason: choice.FinishReason}
	assistant := openai.ChatCompletionAssistantMessageParam{}
	switch raw := msg.JSON.Content.Raw(); {
	case raw == "" || raw == "null":
	case msg.JSON.Content.Valid():
		resp.Content = msg.Content
		assistant.Content.OfString = param.NewOpt(msg.Content)
	default:
		return enforcement.ModelResponse{}, fmt.Errorf("model_script[%d]: the response content is not a string or null", i)
	}
	for k, tc := range msg.ToolCalls {
		if tc.Type != "function" {
			return enforcement.ModelResponse{}, fmt.Errorf("model_script[%d]: tool_calls[%d] has type %q, want function", i, k, tc.Type)
		}
		args, err := jsonvalue.Decode([]byte(tc.Function.Arguments))
		if err != nil {
			return enforcement.ModelResponse{}, fmt.Errorf("model_script[%d]: tool_calls[%d].function.arguments: %w", i, k, err)
		}
		resp.ToolCalls = append(resp.ToolCalls, enforcement.ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: args})
		assistant.ToolCalls = append(assistant.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID: tc.ID,
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
					Name:      tc.Function.Name,
					Arguments: tc.Function.Arguments,
				},
			},
		})
	}
	m.messages = append(m.messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &assistant})
	return resp, nil
}

func (m *gatewayModel) toolMessage(tc enforcement.ToolCall, content any) error {
	text, err := messageText(content)
	if err != nil {
		return fmt.Errorf("tool %s result: %w", tc.Name, err)
	}
	m.messages = append(m.messages, openai.ToolMessage(text, tc.ID))
	return nil
}

// closeTurn has nothing to add: the assistant message went in with the
// response.
func (m *gatewayModel) closeTurn(enforcement.ModelResponse) {}

// modelCallError sorts a failed chat completion: a verdict error of the
// gateway at a model point (policy deny 403, host_error 503/504) is the
// model call being blocked, which ends the run as blocked (CTK.md §2.2);
// anything else is a harness error.
func modelCallError(i int, err error) error {
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		return fmt.Errorf("model_script[%d]: chat completion through the gateway: %w", i, err)
	}
	var env struct {
		InterceptionPoint string `json:"interception_point"`
	}
	_ = json.Unmarshal([]byte(apiErr.RawJSON()), &env) // an unreadable envelope leaves the point empty
	point := enforcement.Point(env.InterceptionPoint)
	verdict := apiErr.Type == gatewayTypeDenied || apiErr.Type == gatewayTypeHostError
	if verdict && (point == enforcement.PreModelCall || point == enforcement.PostModelCall) {
		return &modelBlockedError{call: i, point: point, status: apiErr.StatusCode, code: apiErr.Code}
	}
	return fmt.Errorf("model_script[%d]: the gateway answered HTTP %d (type %q, code %q, point %q)",
		i, apiErr.StatusCode, apiErr.Type, apiErr.Code, env.InterceptionPoint)
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

// messageText is the chat-wire text of a transcript value: a string as is,
// any other JSON value as its exact JSON text.
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

// openAITools declares the scenario's tools to the model as functions. The
// vectors' schema member is not a JSON Schema and every harness ignores
// it, so each function takes an open object.
func openAITools(tools []Tool) []openai.ChatCompletionToolUnionParam {
	if len(tools) == 0 {
		return nil
	}
	out := make([]openai.ChatCompletionToolUnionParam, 0, len(tools))
	for _, t := range tools {
		out = append(out, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:       t.Name,
			Parameters: shared.FunctionParameters{"type": "object"},
		}))
	}
	return out
}

// scriptedUpstream is an OpenAI-compatible chat-completions endpoint that
// answers its N-th call with model_script[N] (non-streaming).
type scriptedUpstream struct {
	script []ModelTurn

	mu    sync.Mutex
	calls int
}

func (u *scriptedUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/chat/completions" {
		writeUpstreamError(w, http.StatusNotFound, "no route for "+r.Method+" "+r.URL.Path)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeUpstreamError(w, http.StatusBadRequest, "the request body could not be read")
		return
	}
	var req struct {
		Stream bool `json:"stream"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeUpstreamError(w, http.StatusBadRequest, "the request is not a JSON object")
		return
	}
	if req.Stream {
		writeUpstreamError(w, http.StatusBadRequest, "the scripted upstream does not stream")
		return
	}
	u.mu.Lock()
	n := u.calls
	u.calls++
	u.mu.Unlock()
	if n >= len(u.script) {
		writeUpstreamError(w, http.StatusInternalServerError, fmt.Sprintf("model call %d is beyond the %d scripted responses", n, len(u.script)))
		return
	}
	out, err := completionBody(n, u.script[n].Respond)
	if err != nil {
		writeUpstreamError(w, http.StatusInternalServerError, fmt.Sprintf("model_script[%d]: %v", n, err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}

// completionBody renders a scripted response as an OpenAI chat completion:
// content as scripted (null included), tool_calls as function calls whose
// arguments are the exact JSON text of the scripted args (number tokens
// kept, so 9007199254740993 reaches the gateway intact; missing args are
// {}), finish_reason as scripted.
func completionBody(n int, r Response) ([]byte, error) {
	msg := map[string]any{"role": "assistant", "content": r.Content}
	if len(r.ToolCalls) > 0 {
		calls := make([]any, 0, len(r.ToolCalls))
		for _, tc := range r.ToolCalls {
			args := tc.Args
			if args == nil {
				args = map[string]any{}
			}
			text, err := jsonvalue.Marshal(args)
			if err != nil {
				return nil, fmt.Errorf("tool call %s args: %w", tc.ID, err)
			}
			calls = append(calls, map[string]any{
				"id":       tc.ID,
				"type":     "function",
				"function": map[string]any{"name": tc.Name, "arguments": string(text)},
			})
		}
		msg["tool_calls"] = calls
	}
	return jsonvalue.Marshal(map[string]any{
		"id":      fmt.Sprintf("chatcmpl-ctk-%d", n),
		"object":  "chat.completion",
		"created": json.Number("0"),
		"model":   gatewayModelID,
		"choices": []any{map[string]any{
			"index":         json.Number("0"),
			"message":       msg,
			"finish_reason": r.FinishReason,
		}},
	})
}

// writeUpstreamError answers with OpenAI's error envelope.
func writeUpstreamError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "ctk_mock_error"}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}
