// Package sdk is the host an agent embeds: a Session drives the AGENT-HOOKS
// interception points around the agent's own loop (start, input, guarded
// model calls, guarded tool calls, output, end) and returns what the agent
// must use next: the verdicted value, or a typed error carrying the record.
//
// The SDK is pure Go. A Session dispatches to a local enforcement.Emitter
// (NewLocalSession) or to a hooks-gateway's emit API (NewRemoteSession),
// with the same API and semantics, so an agent switches by configuration.
// A remote session's Transport routes the agent's model calls through the
// gateway in the same session.
package sdk

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// BlockedError is returned when a combined verdict blocks an action. It
// carries the outcome and its record.
type BlockedError = enforcement.BlockedError

// ErrSessionBlocked is returned for every step after agent_startup was
// denied: the session must not process input (§6.1a).
var ErrSessionBlocked = errors.New("agent-hooks: session blocked at agent_startup")

// ErrSessionEnded is returned for steps after End.
var ErrSessionEnded = errors.New("agent-hooks: session ended")

// ErrNotStarted is returned for steps before Start.
var ErrNotStarted = errors.New("agent-hooks: session not started")

// emitter is what a Session dispatches through.
type emitter interface {
	emit(ctx context.Context, point enforcement.Point, fields map[string]any) (*enforcement.Outcome, error)
}

// LocalConfig configures a Session that enforces in-process.
type LocalConfig struct {
	Emitter *enforcement.Emitter
	Agent   enforcement.Agent
	// SessionID defaults to a random 128-bit hex id.
	SessionID string
	// Sequence defaults to an in-memory counter starting at 0.
	Sequence enforcement.SequenceSource
	// Mode, when set, overrides the emitter's mode for this session (§8).
	Mode enforcement.Mode
	// Common optional members added to every context (trace, tenant, …).
	Common map[string]any
}

// Session is one agent session. Its methods are safe for concurrent use
// (parallel tool calls): sequence numbers come from the sequence source.
type Session struct {
	em emitter
	id string

	mu      sync.Mutex
	started bool
	blocked bool
	ended   bool
}

// NewLocalSession returns a session enforcing with cfg.Emitter.
func NewLocalSession(cfg LocalConfig) (*Session, error) {
	if cfg.Emitter == nil {
		return nil, errors.New("sdk: LocalConfig.Emitter is required")
	}
	if cfg.Agent.ID == "" || cfg.Agent.Framework == "" {
		return nil, errors.New("sdk: Agent.ID and Agent.Framework are required")
	}
	id := cfg.SessionID
	if id == "" {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("sdk: session id: %w", err)
		}
		id = hex.EncodeToString(b[:])
	}
	seq := cfg.Sequence
	if seq == nil {
		seq = &enforcement.Counter{}
	}
	l := &localEmitter{
		emitter: cfg.Emitter,
		builder: &enforcement.Builder{Agent: cfg.Agent, SessionID: id, Sequence: seq, Common: cfg.Common},
		mode:    cfg.Mode,
	}
	return &Session{em: l, id: id}, nil
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// localEmitter builds contexts and emits them in-process.
type localEmitter struct {
	emitter *enforcement.Emitter
	builder *enforcement.Builder
	mode    enforcement.Mode
}

func (l *localEmitter) emit(ctx context.Context, point enforcement.Point, fields map[string]any) (*enforcement.Outcome, error) {
	return l.emitWith(ctx, point, fields)
}

// emitWith is emit with emission options (a streamed response's target
// validator).
func (l *localEmitter) emitWith(ctx context.Context, point enforcement.Point, fields map[string]any, extra ...enforcement.EmitOption) (*enforcement.Outcome, error) {
	c, err := l.builder.Build(ctx, point, fields)
	if err != nil {
		var pe *enforcement.ProjectionError
		if errors.As(err, &pe) {
			f := pe.HostFailure()
			f.Mode = l.mode
			l.emitter.RecordHostFailure(ctx, f)
		}
		return nil, err
	}
	opts := extra
	if l.mode != "" {
		opts = append(opts, enforcement.WithMode(l.mode))
	}
	return l.emitter.EmitUnchecked(ctx, c, opts...)
}

// step checks the session state before a step between start and end.
func (s *Session) step() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.ended:
		return ErrSessionEnded
	case !s.started:
		return ErrNotStarted
	case s.blocked:
		return ErrSessionBlocked
	}
	return nil
}

// emitChecked emits and turns a blocking outcome into a *BlockedError.
func (s *Session) emitChecked(ctx context.Context, point enforcement.Point, fields map[string]any) (*enforcement.Outcome, error) {
	out, err := s.em.emit(ctx, point, fields)
	if err != nil {
		return out, err
	}
	if !out.Proceed {
		return out, &BlockedError{Outcome: out}
	}
	return out, nil
}

// Start emits agent_startup with the registered tool names. A deny blocks
// the session: every later step returns ErrSessionBlocked, and End still
// closes the trail.
func (s *Session) Start(ctx context.Context, tools []string) error {
	s.mu.Lock()
	if s.started || s.ended {
		s.mu.Unlock()
		return errors.New("agent-hooks: session already started")
	}
	s.started = true
	s.mu.Unlock()
	_, err := s.emitChecked(ctx, enforcement.AgentStartup, enforcement.StartupFields(tools))
	if err != nil {
		s.mu.Lock()
		s.blocked = true
		s.mu.Unlock()
	}
	return err
}

// Input emits input for an external request and returns the content the
// turn must use (transformed when the verdict says so).
func (s *Session) Input(ctx context.Context, content any, role string) (any, error) {
	if err := s.step(); err != nil {
		return nil, err
	}
	out, err := s.emitChecked(ctx, enforcement.Input, enforcement.InputFields(content, role))
	if err != nil {
		return nil, err
	}
	in, _ := out.Context["input"].(map[string]any)
	return in["content"], nil
}

// ModelFunc performs a model call with the verdicted messages.
type ModelFunc func(ctx context.Context, messages any) (enforcement.ModelResponse, error)

// ModelCall brackets one model call: pre_model_call over messages, the call
// with the verdicted messages, post_model_call over the response. It returns
// the verdicted response. A model error is an errored action: no
// post_model_call, the error is returned. A post_model_call deny discards
// the response (§6.1).
func (s *Session) ModelCall(ctx context.Context, model string, messages any, call ModelFunc) (enforcement.ModelResponse, error) {
	if err := s.step(); err != nil {
		return enforcement.ModelResponse{}, err
	}
	pre, err := s.emitChecked(ctx, enforcement.PreModelCall, enforcement.PreModelFields(model, messages))
	if err != nil {
		return enforcement.ModelResponse{}, err
	}
	resp, err := call(ctx, pre.Context["messages"])
	if err != nil {
		return enforcement.ModelResponse{}, fmt.Errorf("model call: %w", err)
	}
	post, err := s.emitChecked(ctx, enforcement.PostModelCall, enforcement.PostModelFields(model, resp))
	if err != nil {
		return enforcement.ModelResponse{}, err
	}
	return responseFrom(post.Context["response"])
}

// responseFrom reads a verdicted response back; a transform that broke its
// shape cannot be acted on and fails closed.
func responseFrom(v any) (enforcement.ModelResponse, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return enforcement.ModelResponse{}, errors.New("agent-hooks: verdicted response is not an object")
	}
	r := enforcement.ModelResponse{Content: obj["content"]}
	r.FinishReason, _ = obj["finish_reason"].(string)
	calls, _ := obj["tool_calls"].([]any)
	for i, c := range calls {
		co, ok := c.(map[string]any)
		if !ok {
			return enforcement.ModelResponse{}, fmt.Errorf("agent-hooks: verdicted tool_calls[%d] is not an object", i)
		}
		tc := enforcement.ToolCall{Args: co["args"]}
		tc.ID, _ = co["id"].(string)
		tc.Name, _ = co["name"].(string)
		r.ToolCalls = append(r.ToolCalls, tc)
	}
	return r, nil
}

// ToolFunc runs a tool with the verdicted arguments. isError reports a tool
// that ran and failed (its value is still evaluated at post_tool_call).
type ToolFunc func(ctx context.Context, args any) (value any, isError bool, err error)

// ToolResult is what the agent feeds back to the model after a tool call.
type ToolResult struct {
	// Invoked reports whether the tool ran.
	Invoked bool
	// Args are the arguments actually passed (post-transform).
	Args any
	// Value is the verdicted result; nil when Blocked.
	Value   any
	IsError bool
	// ResultLabels are the result labels of the post_tool_call verdict
	// (spec §5.4: the union of the permitting interceptors' result_labels),
	// to be kept with Value and carried wherever the result goes. nil when
	// the call did not proceed: labels of a blocked result are dropped.
	ResultLabels []string
	// Blocked is set when pre_tool_call or post_tool_call denied; surface
	// Message to the model as a tool error and continue (posture continue).
	Blocked *BlockedError
}

// Message is the tool message for a blocked call: "blocked: <reason>".
func (r ToolResult) Message() string {
	if r.Blocked == nil {
		return ""
	}
	return "blocked: " + r.Blocked.Outcome.Verdict.Reason
}

// ToolCall brackets one tool call. A pre_tool_call deny skips the tool and
// post_tool_call; a post_tool_call deny discards the result (§6.1, §6.2).
// Both are reported in ToolResult.Blocked rather than as errors, because the
// tool seam's posture is continue: the loop goes on. The error is for
// failures that end the turn (session state, cancellation, a tool error).
func (s *Session) ToolCall(ctx context.Context, call enforcement.ToolCall, fn ToolFunc) (ToolResult, error) {
	if err := s.step(); err != nil {
		return ToolResult{}, err
	}
	pre, err := s.emitChecked(ctx, enforcement.PreToolCall, enforcement.PreToolFields(call))
	var blocked *BlockedError
	if errors.As(err, &blocked) {
		return ToolResult{Blocked: blocked}, nil
	}
	if err != nil {
		return ToolResult{}, err
	}
	tc, _ := pre.Context["tool_call"].(map[string]any)
	args := tc["args"]
	value, isError, err := fn(ctx, args)
	if err != nil {
		return ToolResult{Invoked: true, Args: args}, fmt.Errorf("tool %s: %w", call.Name, err)
	}
	effective := enforcement.ToolCall{ID: call.ID, Name: call.Name, Args: args}
	post, err := s.emitChecked(ctx, enforcement.PostToolCall, enforcement.PostToolFields(effective, value, isError))
	if errors.As(err, &blocked) {
		return ToolResult{Invoked: true, Args: args, Blocked: blocked}, nil
	}
	if err != nil {
		return ToolResult{Invoked: true, Args: args}, err
	}
	tr, _ := post.Context["tool_result"].(map[string]any)
	labels := append([]string(nil), post.Verdict.ResultLabels...)
	return ToolResult{Invoked: true, Args: args, Value: tr["value"], IsError: isError, ResultLabels: labels}, nil
}

// Output emits output before the final response is returned and gives the
// content to return (transformed when the verdict says so).
func (s *Session) Output(ctx context.Context, content any) (any, error) {
	if err := s.step(); err != nil {
		return nil, err
	}
	out, err := s.emitChecked(ctx, enforcement.Output, enforcement.OutputFields(content))
	if err != nil {
		return nil, err
	}
	o, _ := out.Context["output"].(map[string]any)
	return o["content"], nil
}

// End emits agent_shutdown (completed, error or cancelled). A deny there is
// only recorded (§6.1a). It returns the record-bearing outcome; calling End
// twice is an error. A session blocked at startup ends with reason error.
func (s *Session) End(ctx context.Context, reason string) (*enforcement.Outcome, error) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return nil, ErrSessionEnded
	}
	s.ended = true
	if s.blocked {
		reason = enforcement.ShutdownError
	}
	s.mu.Unlock()
	return s.em.emit(ctx, enforcement.AgentShutdown, enforcement.ShutdownFields(reason))
}
