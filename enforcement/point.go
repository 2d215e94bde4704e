package enforcement

// Point is one of the eight interception points of spec §3.
type Point string

// The closed set of interception points (spec §3).
const (
	AgentStartup  Point = "agent_startup"
	Input         Point = "input"
	PreModelCall  Point = "pre_model_call"
	PostModelCall Point = "post_model_call"
	PreToolCall   Point = "pre_tool_call"
	PostToolCall  Point = "post_tool_call"
	Output        Point = "output"
	AgentShutdown Point = "agent_shutdown"
)

// Points lists the interception points in lifecycle order.
func Points() []Point {
	return []Point{AgentStartup, Input, PreModelCall, PostModelCall, PreToolCall, PostToolCall, Output, AgentShutdown}
}

// Valid reports whether p is one of the eight points.
func (p Point) Valid() bool {
	switch p {
	case AgentStartup, Input, PreModelCall, PostModelCall, PreToolCall, PostToolCall, Output, AgentShutdown:
		return true
	}
	return false
}

// Transformable reports whether a transform verdict is permitted at p
// (spec §3: never at the session boundaries).
func (p Point) Transformable() bool {
	return p.Valid() && p != AgentStartup && p != AgentShutdown
}

// conditional describes the per-point required fields (spec §4.2) and the
// subfield whitelists of the identity projection (spec §10.2).
type conditional struct {
	field     string   // the conditional member
	subfields []string // required subfields, nil when the member is taken whole
}

// pointShape is the closed required+conditional shape of one point.
type pointShape struct {
	fields []conditional
	// targetOf is the member path that target aliases: one element for a
	// top-level member, two for a nested one (tool_call.args).
	targetOf []string
}

var shapes = map[Point]pointShape{
	AgentStartup:  {fields: []conditional{{"agent_init", []string{"tools_registered"}}}, targetOf: []string{"agent_init"}},
	Input:         {fields: []conditional{{"input", []string{"content", "role"}}}, targetOf: []string{"input"}},
	PreModelCall:  {fields: []conditional{{"model", []string{"id"}}, {"messages", nil}}, targetOf: []string{"messages"}},
	PostModelCall: {fields: []conditional{{"model", []string{"id"}}, {"response", []string{"content", "tool_calls", "finish_reason"}}}, targetOf: []string{"response"}},
	PreToolCall:   {fields: []conditional{{"tool_call", []string{"id", "name", "args"}}}, targetOf: []string{"tool_call", "args"}},
	PostToolCall:  {fields: []conditional{{"tool_call", []string{"id", "name", "args"}}, {"tool_result", []string{"value", "is_error"}}}, targetOf: []string{"tool_result", "value"}},
	Output:        {fields: []conditional{{"output", []string{"content"}}}, targetOf: []string{"output"}},
	AgentShutdown: {fields: []conditional{{"summary", []string{"reason"}}}, targetOf: []string{"summary"}},
}
