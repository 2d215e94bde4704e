package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/sdk"
)

// SDKLocalDeclaration is the declared surface of the SDK-local harness:
// model and tool calls, lossless 64-bit and beyond-u64 integers, every
// profile and knob, jcs-sha256 (plus the vector-scoped null and ctk-fault
// providers), posture continue, buffered output.
func SDKLocalDeclaration() Declaration {
	return Declaration{
		Name:           "sdk-local",
		Capabilities:   []string{"model_calls", "tool_calls", "int64_json", "bigint_json"},
		Postures:       map[string]string{PostureToolSeamHostError: PostureContinue},
		BufferedOutput: true,
		Profiles: []string{
			string(enforcement.SequentialFirstDeny), string(enforcement.SequentialRunAll),
			string(enforcement.ParallelStrictest), string(enforcement.ParallelUnanimous),
		},
		IdentityProvider: enforcement.IdentityJCSSHA256,
	}
}

// IncrementalDeclaration is d for a host that mediates model streams
// incrementally under the §12.1 exception: it declares
// incremental_output and buffered_output false, and its name gains the
// suffix "-incremental".
func IncrementalDeclaration(d Declaration) Declaration {
	d.Name += "-incremental"
	d.Capabilities = append(append([]string(nil), d.Capabilities...), CapabilityIncrementalOutput)
	d.BufferedOutput = false
	d.ExposureBound = IncrementalExposureBound
	return d
}

// IncrementalExposureBound is the §12.1a exposure-bound statement of the
// incremental hosts (enforcement.StreamMediator).
const IncrementalExposureBound = "none — release is watermark-gated: a segment's text is released only after a post_model_call verdict over the whole prefix it ends permits it unchanged, and only up to that prefix's last word boundary (a token still arriving is held back whole); a deny withholds everything not yet released; a transform releases nothing of its prefix and the rest is judged whole, and a verdict that would rewrite released text fails closed (host_error:streaming_unsupported); text no verdict covered when a stream dies is refused with finish_reason stream_incomplete and host_error:streaming_unsupported, never released nor persisted"

// NewSDKLocalHarness returns a harness whose production path is the SDK's
// Session over an in-process enforcement.Emitter; only the model and the
// tools are mocked.
func NewSDKLocalHarness() Harness { return &sdkLocal{} }

// NewSDKLocalIncrementalHarness is the SDK-local harness with streamed
// model answers mediated by Session.ModelCallStream: a scripted response
// with stream chunks is delivered chunk by chunk, and the run reports the
// text released and the transcript kept.
func NewSDKLocalIncrementalHarness() Harness { return &sdkLocal{incremental: true} }

type sdkLocal struct {
	v           *Vector
	emitter     *enforcement.Emitter
	recorder    *contextRecorder
	incremental bool
}

func (h *sdkLocal) Declaration() Declaration {
	if h.incremental {
		return IncrementalDeclaration(SDKLocalDeclaration())
	}
	return SDKLocalDeclaration()
}

func (h *sdkLocal) Setup(v *Vector) error {
	h.v = v
	h.recorder = &contextRecorder{}
	opts, err := emitterOptions(v, h.recorder)
	if err != nil {
		return err
	}
	opts.RecordBuffer = 1 << 12
	h.emitter, err = enforcement.NewEmitter(opts)
	return err
}

func (h *sdkLocal) Teardown() {}

// emitterOptions translates a vector's host configuration (mode,
// composition, identity provider, scripted interceptors, resolver,
// redactor) into emitter options. Interceptor 0 records what it sees into
// rec. Every harness that hosts an Emitter shares this translation.
func emitterOptions(v *Vector, rec *contextRecorder) (enforcement.Options, error) {
	var opts enforcement.Options
	opts.Mode = enforcement.Enforce
	if v.Mode == ModeEvaluateOnly {
		opts.Mode = enforcement.EvaluateOnly
	}
	comp := v.Composition.WithDefaults()
	opts.Composition = enforcement.Composition{
		Profile:             enforcement.Profile(comp.Profile),
		OnApproval:          comp.OnApproval,
		OnDisagreement:      comp.OnDisagreement,
		OnTransformConflict: comp.OnTransformConflict,
	}
	provider, err := identityProvider(v.IdentityProvider)
	if err != nil {
		return opts, err
	}
	opts.Identity = &provider
	for i, rules := range v.InterceptorScripts() {
		si := &scriptedInterceptor{rules: rules}
		if i == 0 {
			si.recorder = rec
		}
		opts.Interceptors = append(opts.Interceptors, enforcement.Registration{Interceptor: si})
	}
	if v.HasResolver() {
		opts.Resolver = scriptedResolver{rules: v.ApprovalScript}
	}
	if len(v.RedactForApproval) > 0 {
		opts.Redactor, err = enforcement.PathRedactor(v.RedactForApproval, "[redacted]")
		if err != nil {
			return opts, err
		}
	}
	return opts, nil
}

// errProviderFault is the ctk-fault provider's failure on every call.
var errProviderFault = errors.New("ctk-fault provider always fails")

func identityProvider(spec IdentityProviderSpec) (enforcement.IdentityProvider, error) {
	name, ok := spec.Provider()
	switch {
	case !ok:
		return enforcement.NullIdentity(), nil
	case name == enforcement.IdentityJCSSHA256:
		return enforcement.JCSSHA256(), nil
	case name == "ctk-fault":
		return enforcement.NewIdentityProvider(name, func(enforcement.Context) (string, error) {
			return "", errProviderFault
		})
	}
	return enforcement.IdentityProvider{}, fmt.Errorf("unsupported identity provider %q", name)
}

// contextRecorder keeps deep copies of the contexts interceptor 0 received.
type contextRecorder struct {
	mu   sync.Mutex
	seen []any
}

func (r *contextRecorder) add(c enforcement.Context) {
	cp := jsonvalue.DeepCopy(map[string]any(c))
	r.mu.Lock()
	r.seen = append(r.seen, cp)
	r.mu.Unlock()
}

func (r *contextRecorder) contexts() []any {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]any, len(r.seen))
	copy(out, r.seen)
	return out
}

// scriptedInterceptor replays CTK rules (CTK.md §3).
type scriptedInterceptor struct {
	rules    []Rule
	recorder *contextRecorder
}

// errScriptedRaise is the "raise" fault: the interceptor fails natively.
var errScriptedRaise = errors.New("ctk: scripted interceptor raised")

func (s *scriptedInterceptor) Intercept(_ context.Context, c enforcement.Context) (enforcement.Verdict, error) {
	if s.recorder != nil {
		s.recorder.add(c)
	}
	rule, ok := FirstMatch(s.rules, map[string]any(c))
	if !ok {
		return enforcement.Allow(), nil
	}
	switch rule.Fault {
	case FaultRaise:
		return enforcement.Verdict{}, errScriptedRaise
	case FaultMalformedVerdict:
		return enforcement.ParseVerdict(map[string]any{"decision": "transform"})
	case FaultMutate:
		c["target"] = "TAMPERED"
		if tc, ok := c["tool_call"].(map[string]any); ok {
			tc["args"] = map[string]any{"tampered": true}
		}
		return enforcement.Verdict{Decision: enforcement.DecisionAllow, Reason: "ctk:mutated"}, nil
	}
	return enforcement.ParseVerdict(rule.Verdict())
}

// scriptedResolver replays CTK approval rules (CTK.md §4).
type scriptedResolver struct{ rules []ApprovalRule }

var errResolverRaise = errors.New("ctk: scripted resolver raised")

func (s scriptedResolver) Resolve(_ context.Context, req enforcement.ApprovalRequest) (enforcement.ApprovalResolution, error) {
	requestID := ""
	if req.ContextIdentity != nil {
		requestID = *req.ContextIdentity
	}
	tree := map[string]any{"outcome": OutcomeUnresolvedResolution}
	echo := requestID
	if rule, ok := FirstApprovalMatch(s.rules, map[string]any(req.Context)); ok {
		r := rule.Resolve
		if r.Fault == FaultRaise {
			return enforcement.ApprovalResolution{}, errResolverRaise
		}
		tree["outcome"] = r.Outcome
		if r.HasVerdict {
			tree["verdict"] = CloneValue(r.Verdict)
		}
		switch {
		case r.EchoRecomputed:
			echo, _ = enforcement.ContextIdentity(req.Context, 0)
		case r.IdentityOverride != nil:
			echo = *r.IdentityOverride
		}
	}
	if echo == "" && req.ContextIdentity == nil {
		tree["context_identity"] = nil
	} else {
		tree["context_identity"] = echo
	}
	return enforcement.ParseApprovalResolution(tree)
}

// OutcomeUnresolvedResolution is the resolver's answer when no rule matches.
const OutcomeUnresolvedResolution = enforcement.OutcomeUnresolved

// Run drives the reference agent loop of CTK.md §2.2 through sdk.Session.
func (h *sdkLocal) Run(ctx context.Context) (*RunRecord, error) {
	session, err := sdk.NewLocalSession(sdk.LocalConfig{
		Emitter:   h.emitter,
		Agent:     enforcement.Agent{ID: "ref-agent", Framework: "reference-agent"},
		SessionID: "ctk-" + h.v.ID,
	})
	if err != nil {
		return nil, err
	}
	model := &localModel{v: h.v, session: session, incremental: h.incremental}
	loop := &agentLoop{v: h.v, session: session, model: model}
	if err := loop.run(ctx); err != nil {
		return nil, err
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
	if h.incremental {
		rr.ReleasedOutput = model.released.String()
		persisted, err := jsonvalue.Marshal(model.history)
		if err != nil {
			return nil, fmt.Errorf("serialize the transcript: %w", err)
		}
		rr.Persisted = string(persisted)
	}
	if dropped := h.emitter.RecordsDropped(); dropped > 0 {
		return nil, fmt.Errorf("record buffer dropped %d records", dropped)
	}
	if err := fillRecords(rr, h.emitter.TakeRecords()); err != nil {
		return nil, err
	}
	return rr, nil
}

// fillRecords puts wire-shaped records and their identity pairs on rr.
func fillRecords(rr *RunRecord, records []*enforcement.Record) error {
	rr.Records = make([]any, 0, len(records))
	rr.Identities = make([]IdentityPair, 0, len(records))
	for _, r := range records {
		b, err := r.MarshalJSON()
		if err != nil {
			return fmt.Errorf("marshal record: %w", err)
		}
		tree, err := jsonvalue.Decode(b)
		if err != nil {
			return fmt.Errorf("decode record: %w", err)
		}
		rr.Records = append(rr.Records, tree)
		rr.Identities = append(rr.Identities, IdentityPair{Input: r.InputIdentity, Enforced: r.EnforcedIdentity})
	}
	return nil
}

// agentLoop is the CTK reference agent (CTK.md §2.2) written against the
// SDK: it mocks only the model (model_script) and the tools (behaviors).
// The model side is a modelSeam, so that the same loop drives a model call
// bracketed by the Session (SDK-local) or by a gateway over HTTP.
type agentLoop struct {
	v       *Vector
	session *sdk.Session
	model   modelSeam
	// tools, when set, carries the tool calls (a gateway's MCP route,
	// which brackets them itself); nil brackets them with the session
	// around the mock tools.
	tools       toolSeam
	outcome     string
	final       any
	invocations []ToolInvocation
}

// modelSeam is the agent loop's model side: it owns the transcript the
// model is shown and performs the guarded model calls over it.
type modelSeam interface {
	// open starts the transcript with the (verdicted) input.
	open(role string, content any) error
	// call performs model call i (model_script[i]) over the transcript and
	// returns the verdicted response. An error that is a
	// *enforcement.BlockedError or matches errModelCallBlocked ends the run
	// as blocked; any other error is a harness error.
	call(ctx context.Context, i int) (enforcement.ModelResponse, error)
	// toolMessage adds the tool message answering tc: the tool's result, or
	// "blocked: <reason>" when the tool seam denied.
	toolMessage(tc enforcement.ToolCall, content any) error
	// closeTurn ends a tool-calling turn once all its tool messages are in.
	closeTurn(resp enforcement.ModelResponse)
}

// toolSeam is the agent loop's tool side when the tool points are not the
// session's to emit.
type toolSeam interface {
	// call runs tool call tc and returns the tool message answering it:
	// the result, or "blocked: <reason>" when the tool seam denied. An
	// error is a harness error.
	call(ctx context.Context, tc enforcement.ToolCall) (any, error)
}

// errModelCallBlocked is matched by the error of a model call that a host
// outside the Session blocked (a gateway answering with a verdict error).
var errModelCallBlocked = errors.New("ctk: model call blocked")

func (l *agentLoop) run(ctx context.Context) error {
	l.outcome = OutcomeCompleted
	err := l.turn(ctx)
	var blocked *enforcement.BlockedError
	switch {
	case errors.As(err, &blocked), errors.Is(err, sdk.ErrSessionBlocked), errors.Is(err, errModelCallBlocked):
		l.outcome, l.final = OutcomeBlocked, nil
	case err != nil:
		return err
	}
	reason := enforcement.ShutdownCompleted
	if l.outcome != OutcomeCompleted {
		reason = enforcement.ShutdownError
	}
	_, err = l.session.End(ctx, reason)
	return err
}

// turn runs startup, one input, the model/tool loop and output; a returned
// *BlockedError ends the run as blocked.
func (l *agentLoop) turn(ctx context.Context) error {
	sc := l.v.Scenario
	if err := l.session.Start(ctx, sc.ToolNames()); err != nil {
		return err
	}
	content, err := l.session.Input(ctx, sc.Input.Content, sc.Input.Role)
	if err != nil {
		return err
	}
	if err := l.model.open(sc.Input.Role, content); err != nil {
		return err
	}
	var final any
	for i := range sc.ModelScript {
		resp, err := l.model.call(ctx, i)
		if err != nil {
			return err
		}
		if len(resp.ToolCalls) == 0 {
			final = resp.Content
			break
		}
		for _, tc := range resp.ToolCalls {
			msg, err := l.toolCall(ctx, tc)
			if err != nil {
				return err
			}
			if err := l.model.toolMessage(tc, msg); err != nil {
				return err
			}
		}
		l.model.closeTurn(resp)
	}
	if final == nil {
		return nil
	}
	out, err := l.session.Output(ctx, final)
	if err != nil {
		return err
	}
	l.final = out
	return nil
}

// toolCall runs tc through the tool seam, or brackets the mock tool with
// the session, and returns the tool message answering it.
func (l *agentLoop) toolCall(ctx context.Context, tc enforcement.ToolCall) (any, error) {
	if l.tools != nil {
		return l.tools.call(ctx, tc)
	}
	res, err := l.session.ToolCall(ctx, tc, l.tool(tc.Name))
	if err != nil {
		return nil, err
	}
	if res.Blocked != nil {
		return res.Message(), nil
	}
	return res.Value, nil
}

// localModel is the SDK-local model seam: Session.ModelCall around the
// scripted response, over the reference transcript of CTK.md §2.2 (the
// pre_model_call-verdicted messages, then the tool messages, then an
// assistant message with the response content).
type localModel struct {
	v       *Vector
	session *sdk.Session
	history []any
	// incremental streams scripted responses that have stream chunks
	// through Session.ModelCallStream; released collects what egressed.
	incremental bool
	released    strings.Builder
}

func (m *localModel) open(role string, content any) error {
	m.history = []any{map[string]any{"role": role, "content": content}}
	return nil
}

func (m *localModel) call(ctx context.Context, i int) (enforcement.ModelResponse, error) {
	scripted := m.v.Scenario.ModelScript[i].Respond
	if m.incremental && scripted.Stream != nil {
		return m.stream(ctx, i, scripted)
	}
	return m.session.ModelCall(ctx, "mock", m.history, func(_ context.Context, messages any) (enforcement.ModelResponse, error) {
		msgs, ok := messages.([]any)
		if !ok {
			return enforcement.ModelResponse{}, fmt.Errorf("model_script[%d]: verdicted messages are not an array", i)
		}
		m.history = msgs
		return scriptedResponse(scripted), nil
	})
}

// stream delivers a scripted response chunk by chunk through
// Session.ModelCallStream. A truncated script dies after its chunks. The
// transcript keeps only released text: a blocked stream's released prefix
// becomes the assistant message (the spec allows persisting it), nothing
// withheld does.
func (m *localModel) stream(ctx context.Context, i int, scripted Response) (enforcement.ModelResponse, error) {
	start := m.released.Len()
	resp, err := m.session.ModelCallStream(ctx, "mock", m.history,
		func(_ context.Context, messages any, yield func(string) error) (enforcement.ModelResponse, error) {
			msgs, ok := messages.([]any)
			if !ok {
				return enforcement.ModelResponse{}, fmt.Errorf("model_script[%d]: verdicted messages are not an array", i)
			}
			m.history = msgs
			for _, chunk := range scripted.Stream {
				if err := yield(chunk); err != nil {
					return enforcement.ModelResponse{}, err
				}
			}
			if scripted.StreamTruncated {
				return enforcement.ModelResponse{}, errStreamTruncated
			}
			return scriptedResponse(scripted), nil
		},
		func(text string) error {
			m.released.WriteString(text)
			return nil
		}, sdk.StreamOptions{})
	if err != nil {
		if partial := m.released.String()[start:]; partial != "" {
			m.history = append(m.history, map[string]any{"role": "assistant", "content": partial})
		}
		return enforcement.ModelResponse{}, err
	}
	return resp, nil
}

// errStreamTruncated is the scripted stream dying (stream_truncated).
var errStreamTruncated = errors.New("ctk: scripted stream truncated")

func (m *localModel) toolMessage(tc enforcement.ToolCall, content any) error {
	m.history = append(m.history, map[string]any{"role": "tool", "tool_call_id": tc.ID, "content": content})
	return nil
}

func (m *localModel) closeTurn(resp enforcement.ModelResponse) {
	assistant := resp.Content
	if assistant == nil {
		assistant = ""
	}
	m.history = append(m.history, map[string]any{"role": "assistant", "content": assistant})
}

// tool returns the mock tool named name; an unknown tool or an unmatched
// behavior is a harness error, never a verdict outcome.
func (l *agentLoop) tool(name string) sdk.ToolFunc {
	return func(_ context.Context, args any) (any, bool, error) {
		t, ok := l.v.Scenario.Tool(name)
		if !ok {
			return nil, false, fmt.Errorf("unknown mock tool %q", name)
		}
		ret, isErr, ok := t.Dispatch(args)
		if !ok {
			return nil, false, fmt.Errorf("mock tool %q has no behavior for its arguments", name)
		}
		l.invocations = append(l.invocations, ToolInvocation{Name: name, Args: jsonvalue.DeepCopy(args)})
		return ret, isErr, nil
	}
}

func scriptedResponse(r Response) enforcement.ModelResponse {
	out := enforcement.ModelResponse{Content: CloneValue(r.Content), FinishReason: r.FinishReason}
	for _, tc := range r.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, enforcement.ToolCall{ID: tc.ID, Name: tc.Name, Args: CloneValue(tc.Args)})
	}
	return out
}
