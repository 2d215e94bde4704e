package proxy

import (
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/mcp"
	"github.com/hooks-gateway/hooks-gateway/metrics"
)

// countMCP marks the request for hooks_gateway_mcp_requests_total under
// the configured server: method "other" and outcome error until the
// request says more (a body that does not parse stays so).
func (o *requestObs) countMCP(server string) {
	if o != nil {
		o.mcpServer, o.mcpMethod, o.mcpOutcome = server, metrics.MCPOtherMethod, metrics.MCPError
	}
}

// mcpMessage labels the request by its message: a request by its method
// when the gateway knows it (a client-chosen name is never a label), a
// notification or a client's response not at all (they are not requests).
func (o *requestObs) mcpMessage(m *mcp.Message) {
	if o == nil || o.mcpServer == "" || m == nil {
		return
	}
	if m.Kind != mcp.Request {
		o.mcpServer = ""
		return
	}
	if m.Method == mcp.MethodPing || bracketed(m.Method) {
		o.mcpMethod = m.Method
	}
}

// mcpDone sets the request's outcome; "" leaves it an error.
func (o *requestObs) mcpDone(outcome string) {
	if o != nil && outcome != "" {
		o.mcpOutcome = outcome
	}
}

// mcpOutcomeOf is the outcome of a request answered with ae: denied when
// a verdict blocked it, else an error (a host error the gateway closed
// on, a failure).
func mcpOutcomeOf(ae *apiError) string {
	if ae.typ == typeDenied {
		return metrics.MCPDenied
	}
	return metrics.MCPError
}

// appliedTransform reports whether out rewrote the context its action
// uses: a transform verdict in enforce mode (evaluate-only verdicts
// change nothing).
func appliedTransform(out *enforcement.Outcome) bool {
	return out != nil && out.Mode == enforcement.Enforce && out.Verdict.Decision == enforcement.DecisionTransform
}
