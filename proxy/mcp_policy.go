package proxy

import "github.com/hooks-gateway/hooks-gateway/config"

// ServeMCP makes p serve m's MCP servers at /mcp/{server}, as CompilePolicy
// does for a configuration's, for a policy assembled around an emitter of
// its own (a conformance harness). Call it before p serves: a policy in
// use is never changed.
func (p *Policy) ServeMCP(m config.MCP) { p.MCP = buildMCP(m) }
