package config

import (
	"strings"
	"testing"
)

// TestMCPProblems holds the validation docs/configuration.md#mcp
// describes: one problem per rule, each naming its key.
func TestMCPProblems(t *testing.T) {
	clearEnv(t)
	got := strings.Join(problemsOf(t, mockUpstream+`mcp:
  servers:
    - name: Git Hub
      url: "https://user:pw@example.com/mcp#x"
    - name: fs
      url: "ftp://user:pw@example.com/mcp"
      headers: {Mcp-Session-Id: forged}
      tool_prefix: "bad prefix"
    - name: fs
      url: "https://example.com/mcp"
  allow_methods: [notifications/initialized]
`), "\n")
	for _, want := range []string{
		"mcp.servers[0].name: must be 1 to 63 lowercase letters",
		"mcp.servers[0].url: must not carry credentials",
		"mcp.servers[1].url: must be an absolute http:// or https:// URL",
		"mcp.servers[1].headers.Mcp-Session-Id: is set by the gateway itself",
		"mcp.servers[1].tool_prefix: must be at most 64 letters",
		"mcp.servers[2].name: repeats mcp.servers[1]",
		"mcp.allow_methods[0]: names a notification",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no problem %q among:\n%s", want, got)
		}
	}
	if strings.Contains(got, "pw@") {
		t.Errorf("a problem echoes the URL's credentials:\n%s", got)
	}
}

// A model upstream's base_url is checked by the same rule: a problem
// never quotes a password either.
func TestUpstreamURLProblemKeepsPasswordOut(t *testing.T) {
	clearEnv(t)
	got := strings.Join(problemsOf(t, `upstreams:
  - {name: up, type: openai, base_url: "ftp://user:pw@example.com/v1", api_key_env: X}
`), "\n")
	if !strings.Contains(got, "upstreams[0].base_url: must be an absolute http:// or https:// URL") || strings.Contains(got, "pw@") {
		t.Errorf("problems:\n%s\nwant the scheme refused without the password", got)
	}
}
