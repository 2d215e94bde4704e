package config

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// MCP configures the gateway's MCP routes: each server is served at
// /mcp/{name} over the Streamable HTTP transport, every request it
// answers mediated (see docs/mcp.md).
type MCP struct {
	Servers []MCPServer
	// AllowMethods are request methods beyond those the gateway knows that
	// clients may send; each is bracketed as a tool call under its method
	// name, as the known read methods are. Any other method is refused.
	AllowMethods []string
}

// MCPServer is one upstream MCP server.
type MCPServer struct {
	// Name is the route segment (/mcp/{name}) and, by default, the
	// qualifier of its tools' names.
	Name string
	// URL is the server's Streamable HTTP endpoint.
	URL string
	// Headers are sent to the server on every request (Authorization,
	// say); HeadersEnv names variables holding values kept out of the
	// file, resolved into Headers at load. A client's own Authorization is
	// its gateway key and never reaches the server.
	Headers    map[string]string
	HeadersEnv map[string]string
	// ToolPrefix qualifies the server's tool names in contexts:
	// tool_call.name is ToolPrefix + the tool's name. Nil takes
	// "mcp__<name>__", the names Claude Code and Codex give MCP tools.
	ToolPrefix *string
	// Timeout bounds one request to the server, answer included.
	Timeout time.Duration

	// resolved holds HeadersEnv's values, read at load.
	resolved map[string]string
}

// DefaultMCPTimeout bounds an MCP request by default.
const DefaultMCPTimeout = 5 * time.Minute

// Prefix is the qualifier of the server's tool names.
func (s MCPServer) Prefix() string {
	if s.ToolPrefix != nil {
		return *s.ToolPrefix
	}
	return "mcp__" + s.Name + "__"
}

// RequestHeaders are the headers sent to the server: Headers, and
// HeadersEnv's values. Never log them.
func (s MCPServer) RequestHeaders() http.Header {
	h := make(http.Header, len(s.Headers)+len(s.resolved))
	for k, v := range s.Headers {
		h.Set(k, v)
	}
	for k, v := range s.resolved {
		h.Set(k, v)
	}
	return h
}

// Server returns the configured server named name.
func (m MCP) Server(name string) (MCPServer, bool) {
	i := slices.IndexFunc(m.Servers, func(s MCPServer) bool { return s.Name == name })
	if i < 0 {
		return MCPServer{}, false
	}
	return m.Servers[i], true
}

var (
	mcpNamePattern   = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
	mcpMethodPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_/.-]{0,127}$`)
	mcpPrefixPattern = regexp.MustCompile(`^[A-Za-z0-9_.:/-]{0,64}$`)
)

// mcpReservedHeaders are the headers the gateway sets itself on MCP
// requests: a server entry may not set them.
var mcpReservedHeaders = []string{"Content-Type", "Accept", "Content-Length", "Mcp-Session-Id", "Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name", "Host", "Last-Event-Id"}

func (d *decoder) mcp(n *yaml.Node, field string, m *MCP) {
	d.mapping(n, field, map[string]handler{
		"servers": func(f string, v *yaml.Node) {
			d.sequence(v, f, func(f string, _ int, v *yaml.Node) {
				s := MCPServer{Timeout: DefaultMCPTimeout}
				d.mapping(v, f, map[string]handler{
					"name":        func(f string, v *yaml.Node) { s.Name = d.str(v, f) },
					"url":         func(f string, v *yaml.Node) { s.URL = d.str(v, f) },
					"headers":     func(f string, v *yaml.Node) { s.Headers = d.stringMap(v, f) },
					"headers_env": func(f string, v *yaml.Node) { s.HeadersEnv = d.stringMap(v, f) },
					"tool_prefix": func(f string, v *yaml.Node) { p := d.str(v, f); s.ToolPrefix = &p },
					"timeout":     func(f string, v *yaml.Node) { s.Timeout = d.duration(v, f, s.Timeout) },
				})
				m.Servers = append(m.Servers, s)
			})
		},
		"allow_methods": func(f string, v *yaml.Node) { m.AllowMethods = d.strings(v, f) },
	})
}

func (c *Config) resolveMCPEnv(get func(string) string) {
	for i := range c.MCP.Servers {
		s := &c.MCP.Servers[i]
		s.resolved = make(map[string]string, len(s.HeadersEnv))
		for h, env := range s.HeadersEnv {
			s.resolved[h] = get(env)
		}
	}
}

func (v *validator) mcp() {
	seen := make(map[string]int, len(v.c.MCP.Servers))
	for i, s := range v.c.MCP.Servers {
		f := index("mcp.servers", i)
		if !mcpNamePattern.MatchString(s.Name) {
			v.problem(f+".name", "must be 1 to 63 lowercase letters, digits, '_' or '-', starting with a letter or digit (got %q)", s.Name)
		} else if j, dup := seen[s.Name]; dup {
			v.problem(f+".name", "repeats %s", index("mcp.servers", j))
		} else {
			seen[s.Name] = i
		}
		if s.URL == "" {
			v.problem(f+".url", "is required: the server's Streamable HTTP endpoint")
		} else {
			v.serverURL(f+".url", s.URL)
		}
		if s.ToolPrefix != nil && !mcpPrefixPattern.MatchString(*s.ToolPrefix) {
			v.problem(f+".tool_prefix", "must be at most 64 letters, digits or _.:/- (got %q)", *s.ToolPrefix)
		}
		if s.Timeout <= 0 {
			v.problem(f+".timeout", "must be positive (got %s)", s.Timeout)
		}
		for _, hs := range []struct {
			field string
			m     map[string]string
		}{{"headers", s.Headers}, {"headers_env", s.HeadersEnv}} {
			for h, val := range hs.m {
				hf := f + "." + hs.field + "." + h
				switch {
				case !validHeaderName(h):
					v.problem(hf, "is not a valid HTTP header name")
				case slices.ContainsFunc(mcpReservedHeaders, func(r string) bool { return strings.EqualFold(r, h) }):
					v.problem(hf, "is set by the gateway itself")
				case hs.field == "headers_env":
					v.secret(hf, val, s.resolved[h], false)
				case strings.ContainsAny(val, "\r\n"):
					v.problem(hf, "must not contain a line break")
				}
			}
		}
	}
	for i, k := range v.c.Auth.APIKeys {
		for j, name := range k.MCPServers {
			if _, ok := seen[name]; !ok {
				v.problem(index(index("auth.api_keys", i)+".mcp_servers", j), "names no server of mcp.servers (got %q)", name)
			}
		}
	}
	for i, m := range v.c.MCP.AllowMethods {
		f := index("mcp.allow_methods", i)
		switch {
		case !mcpMethodPattern.MatchString(m):
			v.problem(f, "must be an MCP method name such as vendor/method (got %q)", m)
		case strings.HasPrefix(m, "notifications/"):
			v.problem(f, "names a notification: only request methods can be allowed")
		}
	}
}

// serverURL checks an MCP server's URL: as a model upstream's, except
// that a query is kept (some servers route by it).
func (v *validator) serverURL(field, raw string) {
	v.httpURL(field, raw, "send them in headers_env", true)
}

func validHeaderName(h string) bool {
	if h == "" {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// summary is the startup log's note on the MCP routes.
func (m MCP) summary() string {
	if len(m.Servers) == 0 {
		return ""
	}
	names := make([]string, len(m.Servers))
	for i, s := range m.Servers {
		names[i] = s.Name
	}
	return fmt.Sprintf("; mcp servers %s", strings.Join(names, ", "))
}
