package metrics

import "github.com/prometheus/client_golang/prometheus"

// The outcomes of an MCP request, for hooks_gateway_mcp_requests_total.
const (
	// MCPAllowed: the server's answer reached the client as it was (or
	// the gateway answered itself, as for ping).
	MCPAllowed = "allowed"
	// MCPTransformed: a verdict rewrote what the server received or what
	// the client received.
	MCPTransformed = "transformed"
	// MCPDenied: a verdict blocked the request or its answer, or the
	// method is one the gateway does not mediate.
	MCPDenied = "denied"
	// MCPError: anything else (a malformed request, a server that failed
	// or answered invalidly, a host error the gateway closed on).
	MCPError = "error"
)

// MCPOtherMethod is the method label of every method outside the set the
// caller names (methods are client-chosen strings).
const MCPOtherMethod = "other"

// mcpSeriesKey is the label tuple of one MCP request's series.
type mcpSeriesKey struct{ server, method, outcome string }

// newMCPRequests registers hooks_gateway_mcp_requests_total.
func newMCPRequests(reg *prometheus.Registry) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hooks_gateway_mcp_requests_total",
		Help: "MCP requests (JSON-RPC messages with an id) answered on /mcp/{server}, by configured server, method (the gateway's mediated methods and ping; other for the rest) and outcome (allowed, transformed, denied, error).",
	}, []string{"server", "method", "outcome"})
	reg.MustRegister(c)
	return c
}

// ObserveMCP counts one MCP request to server. The caller bounds the
// labels: server is a configured server's name, method one of the
// gateway's known methods or MCPOtherMethod (never a tool name), outcome
// one of MCPAllowed, MCPTransformed, MCPDenied, MCPError.
func (m *Metrics) ObserveMCP(server, method, outcome string) {
	m.mcpSeries.get(mcpSeriesKey{server: server, method: method, outcome: outcome}, func() prometheus.Counter {
		return m.mcpRequests.WithLabelValues(server, method, outcome)
	}).Inc()
}
