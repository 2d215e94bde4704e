package proxy_test

import (
	"net/http"
	"strings"
	"testing"
)

// docs/mcp.md: extensions.hooks_gateway names mcp_server, mcp_method and
// mcp_params (the request's other params, its _meta, as the server
// receives them), and a policy can read them: here a CEL rule denies on
// each, for a tools/call and for another bracketed method.
func TestMCPExtensionsReachPolicies(t *testing.T) {
	up := newHostileMCP(t)
	policy := `  - name: by-extensions
    type: cel
    points: [pre_tool_call]
    rules:
      - name: traced
        when: >-
          context.extensions.hooks_gateway.mcp_server == "fs" &&
          has(context.extensions.hooks_gateway.mcp_params) &&
          context.extensions.hooks_gateway.mcp_params._meta.trace == "deny-me"
        deny: {reason: "policy:traced", message: "traced call refused"}
      - name: no-resources
        when: context.extensions.hooks_gateway.mcp_method == "resources/read"
        deny: {reason: "policy:no_resources", message: "resources refused"}
`
	rig := startMCPRig(t, oneServer(up.url, ""), "", policy)
	for _, tc := range []struct {
		name, body, want string
	}{
		{"tools/call with _meta", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"trace":"deny-me"}}}`, "policy:traced"},
		{"tools/list with _meta", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"trace":"deny-me"}}}`, "policy:traced"},
		{"resources/read", `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///x"}}`, "policy:no_resources"},
		{"tools/call, other trace", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"trace":"t1"}}}`, ""},
	} {
		up.answer(func(w http.ResponseWriter, m rpcMsg) {
			writeJSONRPC(w, m.ID, `{"content":[{"type":"text","text":"ok"}]}`)
		})
		status, _, body := rig.post(t, "/mcp/fs", tc.body, nil)
		reached := len(up.received()) > 0
		switch {
		case status != http.StatusOK:
			t.Errorf("%s: %d %s", tc.name, status, body)
		case tc.want != "" && (reached || !strings.Contains(body, tc.want)):
			t.Errorf("%s: server reached %v, answer %s; want a deny %s", tc.name, reached, body, tc.want)
		case tc.want == "" && (!reached || strings.Contains(body, "policy:")):
			t.Errorf("%s: server reached %v, answer %s; want it allowed", tc.name, reached, body)
		}
	}
}
