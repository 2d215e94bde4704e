package enforcement

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// SequenceSource hands out a session's sequence numbers: unique and strictly
// increasing under concurrent use, starting at 0 (§3.1, §12.2). Stores
// shared by several hosts (Redis) implement it too.
type SequenceSource interface {
	Next(ctx context.Context) (int64, error)
}

// Counter is an in-memory SequenceSource.
type Counter struct{ next atomic.Int64 }

// Next returns 0, 1, 2, … atomically.
func (c *Counter) Next(context.Context) (int64, error) { return c.next.Add(1) - 1, nil }

// Agent identifies the agent in every context (§4.1).
type Agent struct {
	ID string
	// Framework matches ^[a-z0-9_-]+$.
	Framework string
	Name      string
	Version   string
}

// Builder constructs a session's contexts: it owns spec, interception_point,
// timestamp, sequence, agent and session, and sets target to the member the
// point's target mirrors (§4.2).
type Builder struct {
	Agent     Agent
	SessionID string
	Sequence  SequenceSource
	// Optional members added to every context (trace, tenant, actor, …).
	Common map[string]any
	// Now defaults to time.Now.
	Now func() time.Time
	// AdoptFields hands Build's fields and Common over instead of copying
	// them: a value that already is a value tree (jsonvalue.Adopt) becomes
	// part of the context as is, shared by every context built with it.
	// The caller must not change those trees afterwards. The engine never
	// does: interceptors get copies, and a transform copies the context
	// before applying.
	AdoptFields bool
	// TrustedFields, with AdoptFields, takes fields and Common as they
	// are, without the walk that proves them value trees: the caller
	// vouches that they are, built from decoded JSON. A mistake cannot
	// pass unchecked: the emitter's §12.3 check walks every context
	// before its identity or any interceptor and denies one holding
	// anything but JSON values (host_error:context_invalid).
	TrustedFields bool

	// shared holds, for an AdoptFields builder, the agent and session
	// members every context it builds shares.
	shared struct {
		once           sync.Once
		agent, session map[string]any
	}
	// Agents, when set on an AdoptFields builder, supplies the agent
	// member, shared with the other builders using it (see AgentMembers).
	Agents *AgentMembers
	// Stamps, when set, formats the timestamps and is shared with other
	// builders (see Stamps); nil keeps a cache of the builder's own.
	Stamps *Stamps

	// stamps is the builder's own timestamp cache.
	stamps Stamps
}

// agentMember is the context's agent member.
func (b *Builder) agentMember() map[string]any {
	agent := map[string]any{"id": b.Agent.ID, "framework": b.Agent.Framework}
	if b.Agent.Name != "" {
		agent["name"] = b.Agent.Name
	}
	if b.Agent.Version != "" {
		agent["version"] = b.Agent.Version
	}
	return agent
}

// ProjectionError reports that a context could not be constructed from the
// host's values (§10.3 host projection failure). The sequence number was
// consumed; pass the error to Emitter.RecordHostFailure so records stay
// gapless.
type ProjectionError struct {
	Point     Point
	SessionID string
	Sequence  int64
	Timestamp string
	Err       error
}

func (e *ProjectionError) Error() string {
	return fmt.Sprintf("agent-hooks: cannot build %s context: %v", e.Point, e.Err)
}

func (e *ProjectionError) Unwrap() error { return e.Err }

// HostFailure returns the record description for RecordHostFailure.
func (e *ProjectionError) HostFailure() HostFailure {
	return HostFailure{Point: e.Point, SessionID: e.SessionID, Sequence: e.Sequence, Timestamp: e.Timestamp, Message: e.Err.Error()}
}

// Failure takes the next sequence number and the time for a record of
// point that stands where no context can be built at all (pass it to
// Emitter.RecordHostFailure): a model call cut before its response has
// no response to build its post_model_call from. message names the
// failure, never content. A failure to take the number is returned as is.
func (b *Builder) Failure(ctx context.Context, point Point, message string) (HostFailure, error) {
	seq, err := b.Sequence.Next(ctx)
	if err != nil {
		return HostFailure{}, fmt.Errorf("agent-hooks: sequence for %s: %w", point, err)
	}
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	ts, _ := b.timestamp(now())
	return HostFailure{Point: point, SessionID: b.SessionID, Sequence: seq, Timestamp: ts, Message: message}, nil
}

// TimestampFormat is RFC 3339 UTC with milliseconds.
const TimestampFormat = "2006-01-02T15:04:05.000Z"

// Build constructs a context for point from fields: the point's conditional
// members (and any optional ones) as Go values. Values are converted to JSON
// value trees, rejecting NaN, ±Inf and invalid strings (§4.4); the caller's
// maps and slices are never aliased (unless AdoptFields hands fields
// over). A failure to take a sequence number is
// returned as is; a failure after it is a *ProjectionError.
func (b *Builder) Build(ctx context.Context, point Point, fields map[string]any) (Context, error) {
	if !point.Valid() {
		return nil, fmt.Errorf("agent-hooks: unknown interception point %q", point)
	}
	seq, err := b.Sequence.Next(ctx)
	if err != nil {
		return nil, fmt.Errorf("agent-hooks: sequence for %s: %w", point, err)
	}
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	ts, boxedTS := b.timestamp(now())
	fail := func(err error) (Context, error) {
		return nil, &ProjectionError{Point: point, SessionID: b.SessionID, Sequence: seq, Timestamp: ts, Err: err}
	}
	// The core members are seven, target included: an exact size keeps a
	// small context in a single map group.
	c := make(Context, len(fields)+len(b.Common)+7)
	convert := jsonvalue.FromGo
	switch {
	case b.AdoptFields && b.TrustedFields:
		convert = trusted
	case b.AdoptFields:
		convert = jsonvalue.Adopt
	}
	for k, v := range b.Common {
		tv, err := convert(v)
		if err != nil {
			return fail(fmt.Errorf("%s: %w", k, err))
		}
		c[k] = tv
	}
	for k, v := range fields {
		tv, err := convert(v)
		if err != nil {
			return fail(fmt.Errorf("%s: %w", k, err))
		}
		c[k] = tv
	}
	var agent, session map[string]any
	given, _ := c["session"].(map[string]any)
	if b.AdoptFields {
		// Nothing writes into a built context: its contexts share these.
		b.shared.once.Do(func() {
			if b.Agents != nil {
				b.shared.agent = b.Agents.member(b)
			} else {
				b.shared.agent = b.agentMember()
			}
			b.shared.session = map[string]any{"id": b.SessionID}
		})
		agent = b.shared.agent
		if given == nil {
			session = b.shared.session
		}
	} else {
		agent = b.agentMember()
	}
	if session == nil {
		// The session member gets the id in a map of its own: a given
		// one may be the caller's.
		session = make(map[string]any, len(given)+1)
		for k, v := range given {
			session[k] = v
		}
		session["id"] = b.SessionID
	}
	c["spec"] = SpecVersion
	c["interception_point"] = pointValue(point)
	c["timestamp"] = boxedTS
	c["sequence"] = sequenceValue(seq)
	c["agent"] = agent
	c["session"] = session
	alias, ok := targetAlias(c, point)
	if !ok {
		return fail(errors.New("missing " + targetName(point)))
	}
	c["target"] = alias
	return c, nil
}

// trusted is the conversion of a TrustedFields builder: none.
func trusted(v any) (any, error) { return v, nil }

func targetName(p Point) string {
	path := shapes[p].targetOf
	if len(path) == 2 {
		return path[0] + "." + path[1]
	}
	return path[0]
}

// ToolCall is a tool invocation as contexts carry it.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Args any    `json:"args"`
}

// ModelResponse is the post_model_call target (§4.2).
type ModelResponse struct {
	Content      any        `json:"content"`
	ToolCalls    []ToolCall `json:"tool_calls"`
	FinishReason string     `json:"finish_reason"`
}

// Shutdown reasons (§4.2).
const (
	ShutdownCompleted = "completed"
	ShutdownError     = "error"
	ShutdownCancelled = "cancelled"
)

// The field constructors below return each point's conditional members for
// Build (or for a remote emitter), in the shapes of §4.2.

// StartupFields is agent_startup's agent_init with the tool names sorted.
// The names are a value tree already ([]any of strings), so a builder
// that adopts its fields takes them as they are.
func StartupFields(tools []string) map[string]any {
	// Small enough to be inlined: the outer map then stays on the caller's
	// stack (Build only reads it).
	return map[string]any{"agent_init": map[string]any{"tools_registered": sortedNames(tools)}}
}

// sortedNames is tools sorted, as a value tree.
func sortedNames(tools []string) []any {
	sorted := append([]string{}, tools...)
	sort.Strings(sorted)
	names := make([]any, len(sorted))
	for i, n := range sorted {
		names[i] = n
	}
	return names
}

// InputFields is input's input; role is user, system or external.
func InputFields(content any, role string) map[string]any {
	return map[string]any{"input": map[string]any{"content": content, "role": role}}
}

// PreModelFields is pre_model_call's model and messages.
func PreModelFields(modelID string, messages any) map[string]any {
	return map[string]any{"model": map[string]any{"id": modelID}, "messages": messages}
}

// PostModelFields is post_model_call's model and response; a nil tool-call
// list is sent as [] and missing args as {} (§4.2).
func PostModelFields(modelID string, resp ModelResponse) map[string]any {
	calls := make([]any, 0, len(resp.ToolCalls))
	for _, tc := range resp.ToolCalls {
		calls = append(calls, toolCallFields(tc))
	}
	return map[string]any{
		"model":    map[string]any{"id": modelID},
		"response": map[string]any{"content": resp.Content, "tool_calls": calls, "finish_reason": resp.FinishReason},
	}
}

// PreToolFields is pre_tool_call's tool_call.
func PreToolFields(call ToolCall) map[string]any {
	return map[string]any{"tool_call": toolCallFields(call)}
}

// PostToolFields is post_tool_call's tool_call (with the arguments actually
// passed) and tool_result.
func PostToolFields(call ToolCall, value any, isError bool) map[string]any {
	return map[string]any{
		"tool_call":   toolCallFields(call),
		"tool_result": map[string]any{"value": value, "is_error": isError},
	}
}

// OutputFields is output's output.
func OutputFields(content any) map[string]any {
	return map[string]any{"output": map[string]any{"content": content}}
}

// ShutdownFields is agent_shutdown's summary.
func ShutdownFields(reason string) map[string]any {
	return map[string]any{"summary": map[string]any{"reason": reasonValue(reason)}}
}

// reasonValue is a shutdown reason boxed, without an allocation for the
// three the spec names (the constants are static).
func reasonValue(reason string) any {
	switch reason {
	case ShutdownCompleted:
		return ShutdownCompleted
	case ShutdownError:
		return ShutdownError
	case ShutdownCancelled:
		return ShutdownCancelled
	}
	return reason
}

func toolCallFields(call ToolCall) map[string]any {
	args := call.Args
	if args == nil {
		args = map[string]any{}
	}
	return map[string]any{"id": call.ID, "name": call.Name, "args": args}
}
