package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// Client keys used by these tests; the configurations hold their hashes.
const (
	keyA     = "hgk_team-a-test-key"
	keyB     = "hgk_team-b-test-key"
	keyOld   = "hgk_old-test-key"
	keyNew   = "hgk_new-test-key"
	keyNewer = "hgk_newer-test-key"
)

func sha(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

// authGateway is a gateway built by Build from a configuration the real
// loader parsed, with its admin handler served apart.
type authGateway struct{ *policyGateway }

func startAuthGateway(t *testing.T, src string) *authGateway {
	t.Helper()
	return &authGateway{startConfiguredGateway(t, src)}
}

// call posts body to path with key as the bearer token ("" for none) and
// returns the status, the headers and the error code, if any.
func call(t *testing.T, base, path, key, body string, header map[string]string) (int, http.Header, string) {
	t.Helper()
	h := map[string]string{}
	if key != "" {
		h["Authorization"] = "Bearer " + key
	}
	for k, v := range header {
		h[k] = v
	}
	status, rh, b := do(t, http.MethodPost, base+path, body, h)
	var env struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	json.Unmarshal(b, &env)
	if status >= 400 && strings.Contains(string(b), "hgk_") {
		t.Errorf("an error body quotes a key: %s", b)
	}
	return status, rh, env.Error.Code
}

func chatCall(t *testing.T, base, key, model string) (int, http.Header, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": model, "messages": []any{map[string]any{"role": "user", "content": "hello"}}})
	return call(t, base, "/v1/chat/completions", key, string(body), nil)
}

const mockOnly = "upstreams: [{name: mock, type: mock}]\nrecords: {sinks: [{type: stdout}]}\ninterceptors: [{name: ok, type: allow}]\n"

func TestKeysAreIdentities(t *testing.T) {
	g := startAuthGateway(t, mockOnly+`auth:
  api_keys:
    - name: team-a
      sha256: `+sha(keyA)+`
      tenant: acme
    - name: team-b
      sha256: `+sha(keyB)+`
      tenant: globex
      agent_id: b-bot
    - name: gone
      sha256: `+sha(keyOld)+`
      revoked: true
`)
	p := g.asm.Server.Policy()
	a, b := p.Principals[sha256.Sum256([]byte(keyA))], p.Principals[sha256.Sum256([]byte(keyB))]
	if a.KeyID != "team-a" || a.AgentID != "team-a" || a.Tenant != "acme" || b.KeyID != "team-b" || b.AgentID != "b-bot" || b.Tenant != "globex" {
		t.Fatalf("principals = %+v, %+v", a, b)
	}
	for _, tc := range []struct {
		name   string
		header map[string]string
		status int
	}{
		{"bearer, hashed key", map[string]string{"Authorization": "Bearer " + keyA}, 200},
		{"x-api-key", map[string]string{"x-api-key": keyB}, 200},
		{"no key", nil, 401},
		{"unknown key", map[string]string{"Authorization": "Bearer hgk_unknown"}, 401},
		{"the hash is not the key", map[string]string{"Authorization": "Bearer " + sha(keyA)}, 401},
		{"revoked key", map[string]string{"Authorization": "Bearer " + keyOld}, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, code := call(t, g.main.URL, "/v1/chat/completions", "", chatBody("hi", false), tc.header)
			if status != tc.status || (status == 401 && code != "invalid_api_key") {
				t.Fatalf("status %d %q, want %d", status, code, tc.status)
			}
		})
	}
	// The end endpoint and the emit API authenticate the same way.
	if status, _, code := call(t, g.main.URL, "/v1/agent-hooks/sessions/s-1/end", keyOld, "", nil); status != 401 {
		t.Errorf("end with a revoked key: %d %s", status, code)
	}
	if status, _, code := call(t, g.main.URL, "/v1/agent-hooks/emit", "", `{}`, nil); status != 401 {
		t.Errorf("emit without a key: %d %s", status, code)
	}
}

func TestKeyAllowLists(t *testing.T) {
	g := startAuthGateway(t, mockOnly+`auth:
  api_keys:
    - name: narrow
      sha256: `+sha(keyA)+`
      models: ["gpt-4o*"]
      apis: [chat_completions, sessions]
    - name: wide
      sha256: `+sha(keyB)+`
`)
	if status, _, code := chatCall(t, g.main.URL, keyA, "gpt-4o-mini"); status != 200 {
		t.Fatalf("allowed model: %d %s", status, code)
	}
	if status, _, code := chatCall(t, g.main.URL, keyA, "o3"); status != 403 || code != "model_not_allowed" {
		t.Errorf("model outside the key's globs: %d %s", status, code)
	}
	if status, _, code := chatCall(t, g.main.URL, keyB, "o3"); status != 200 {
		t.Errorf("a key without models: %d %s", status, code)
	}
	responses := `{"model":"gpt-4o","input":"hi"}`
	if status, _, code := call(t, g.main.URL, "/v1/responses", keyA, responses, nil); status != 403 || code != "api_not_allowed" {
		t.Errorf("responses API not in apis: %d %s", status, code)
	}
	if status, _, code := call(t, g.main.URL, "/v1/responses", keyB, responses, nil); status != 200 {
		t.Errorf("responses API for a key without apis: %d %s", status, code)
	}
	emit := `{"interception_point":"agent_startup","agent":{"id":"x","framework":"f"},"session":{"id":"s-1"},"tools":[]}`
	if status, _, code := call(t, g.main.URL, "/v1/agent-hooks/emit", keyA, emit, nil); status != 403 || code != "api_not_allowed" {
		t.Errorf("emit not in apis: %d %s", status, code)
	}
	// sessions is in the list: the end endpoint gets past authorization.
	if status, _, code := call(t, g.main.URL, "/v1/agent-hooks/sessions/never-seen/end", keyA, "", nil); status != 404 {
		t.Errorf("end endpoint for a key allowed sessions: %d %s", status, code)
	}
}

func TestKeyFileRotatedByReload(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.yaml")
	writeAtomically(t, keys, "keys:\n  - {name: old, sha256: "+sha(keyOld)+"}\n")
	g := startAuthGateway(t, mockOnly+"auth:\n  keys_file: "+keys+"\n")
	if status, _, _ := chatCall(t, g.main.URL, keyOld, "mock"); status != 200 {
		t.Fatalf("old key before rotation: %d", status)
	}

	// Rotate: add the new key, revoke the old, reload (as SIGHUP does).
	writeAtomically(t, keys, "keys:\n  - {name: old, sha256: "+sha(keyOld)+", revoked: true}\n  - {name: new, sha256: "+sha(keyNew)+"}\n")
	res, err := g.asm.Reloader.Reload(context.Background())
	if err != nil || !res.Changed {
		t.Fatalf("reload: %+v %v", res, err)
	}
	if status, _, _ := chatCall(t, g.main.URL, keyOld, "mock"); status != 401 {
		t.Errorf("old key after rotation: %d, want 401", status)
	}
	if status, _, _ := chatCall(t, g.main.URL, keyNew, "mock"); status != 200 {
		t.Errorf("new key after rotation: %d, want 200", status)
	}

	// A broken key file keeps the keys in effect and reports file:line.
	writeAtomically(t, keys, "keys:\n  - {name: new, sha256: "+keyNewer+"}\n")
	status, out := adminCall(t, g.admin.URL, http.MethodPost, "/admin/reload", nil)
	if status != http.StatusUnprocessableEntity || !strings.Contains(fmt.Sprint(out["problems"]), keys+":2: keys[0].sha256: must be the SHA-256") {
		t.Errorf("reload of a broken key file: %d %v", status, out)
	}
	if strings.Contains(fmt.Sprint(out), keyNewer) {
		t.Errorf("the reload error quotes the key: %v", out)
	}
	if st := g.asm.Reloader.Status(); st.LastError == "" {
		t.Error("the broken key file is not in the status")
	}
	if status, _, _ := chatCall(t, g.main.URL, keyNew, "mock"); status != 200 {
		t.Errorf("new key after a broken reload: %d, want 200", status)
	}

	// The watcher: a change to the file alone takes effect, no restart.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := g.asm.Reloader.Watch(ctx, keys, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	writeAtomically(t, keys, "keys:\n  - {name: new, sha256: "+sha(keyNew)+", revoked: true}\n  - {name: newer, sha256: "+sha(keyNewer)+"}\n")
	eventually(t, "the watcher applies the rotated key file", func() bool {
		s1, _, _ := chatCall(t, g.main.URL, keyNewer, "mock")
		s2, _, _ := chatCall(t, g.main.URL, keyNew, "mock")
		return s1 == 200 && s2 == 401
	})
}

// adminCall calls an admin endpoint with JSON and the given headers.
func adminCall(t *testing.T, base, method, path string, header map[string]string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, nil)
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestKeyRateLimitSharedAcrossReplicas(t *testing.T) {
	rs := redistest.StartServer(t)
	src := mockOnly + "sessions: {store: redis, redis_url: " + rs.URL() + "}\n" + `auth:
  api_keys:
    - name: limited
      sha256: ` + sha(keyA) + `
      rate_limit: {requests: 3, window: 1h}
    - name: other
      sha256: ` + sha(keyB) + `
`
	one, two := startAuthGateway(t, src), startAuthGateway(t, src)
	for i, base := range []string{one.main.URL, two.main.URL, one.main.URL} {
		if status, _, code := chatCall(t, base, keyA, "mock"); status != 200 {
			t.Fatalf("request %d within the limit: %d %s", i+1, status, code)
		}
	}
	for _, base := range []string{two.main.URL, one.main.URL} {
		status, h, code := chatCall(t, base, keyA, "mock")
		if status != http.StatusTooManyRequests || code != "rate_limited" {
			t.Fatalf("over the limit: %d %s", status, code)
		}
		ra, err := strconv.Atoi(h.Get("Retry-After"))
		if err != nil || ra < 1 || ra > 3600 {
			t.Errorf("Retry-After = %q, want the seconds left of the 1h window", h.Get("Retry-After"))
		}
	}
	// The emit API counts against the same limit.
	emit := `{"interception_point":"agent_startup","agent":{"id":"x","framework":"f"},"session":{"id":"s-1"},"tools":[]}`
	if status, _, code := call(t, two.main.URL, "/v1/agent-hooks/emit", keyA, emit, nil); status != http.StatusTooManyRequests {
		t.Errorf("emit over the limit: %d %s", status, code)
	}
	if status, _, code := chatCall(t, two.main.URL, keyB, "mock"); status != 200 {
		t.Errorf("another key is not limited: %d %s", status, code)
	}
}

func TestPostsMustBeJSON(t *testing.T) {
	g := startAuthGateway(t, mockOnly+"sessions: {store: memory}\n")
	for _, path := range []string{"/v1/chat/completions", "/v1/responses", "/v1/messages", "/v1/agent-hooks/emit", "/v1/agent-hooks/sessions/s-1/end"} {
		for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded"} {
			status, _, code := call(t, g.main.URL, path, "", `{"model":"mock"}`, map[string]string{"Content-Type": ct})
			if status != http.StatusUnsupportedMediaType || code != "unsupported_media_type" {
				t.Errorf("%s with Content-Type %q: %d %s, want 415", path, ct, status, code)
			}
		}
	}
	if status, _, code := chatCall(t, g.main.URL, "", "mock"); status != 200 {
		t.Errorf("JSON chat: %d %s", status, code)
	}
}

func TestAdminGuard(t *testing.T) {
	g := startAuthGateway(t, mockOnly+"listeners: {http: \"127.0.0.1:8080\", admin: \"127.0.0.1:0\"}\n")
	u, _ := url.Parse(g.admin.URL)
	port := u.Port()
	for _, tc := range []struct {
		name   string
		method string
		path   string
		header map[string]string
		status int
	}{
		{"own address", "GET", "/admin/policy", nil, 200},
		{"localhost", "GET", "/admin/policy", map[string]string{"Host": "localhost:" + port}, 200},
		{"[::1]", "GET", "/admin/policy", map[string]string{"Host": "[::1]:" + port}, 200},
		{"rebound DNS name", "GET", "/admin/policy", map[string]string{"Host": "attacker.example:" + port}, 421},
		{"other port", "GET", "/admin/policy", map[string]string{"Host": "127.0.0.1:1"}, 421},
		{"approvals under the Host check", "GET", "/admin/approvals", map[string]string{"Host": "attacker.example:" + port}, 421},
		{"reload", "POST", "/admin/reload", nil, 200},
		{"reload, cross-site", "POST", "/admin/reload", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"reload, same-site", "POST", "/admin/reload", map[string]string{"Sec-Fetch-Site": "same-site"}, 403},
		{"reload, foreign Origin", "POST", "/admin/reload", map[string]string{"Origin": "http://attacker.example"}, 403},
		{"reload, own Origin", "POST", "/admin/reload", map[string]string{"Origin": g.admin.URL, "Sec-Fetch-Site": "same-origin"}, 200},
		{"reload as a form", "POST", "/admin/reload", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415},
		{"decision, cross-site", "POST", "/admin/approvals/a-1", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"page decision, foreign Origin", "POST", "/admin/approvals/a-1/decide", map[string]string{"Origin": "http://attacker.example"}, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out := adminCall(t, g.admin.URL, tc.method, tc.path, tc.header)
			if status != tc.status {
				t.Fatalf("status %d (%v), want %d", status, out, tc.status)
			}
		})
	}

	// With a token the Host is not the guard (the token is), but
	// cross-site changes are still refused.
	t.Setenv("ADMIN_TOKEN_T", "admin-secret")
	tg := startAuthGateway(t, mockOnly+"listeners: {admin: \"127.0.0.1:0\"}\nauth: {admin_token_env: ADMIN_TOKEN_T}\n")
	bearer := "Bearer admin-secret"
	if status, _ := adminCall(t, tg.admin.URL, "GET", "/admin/policy", map[string]string{"Host": "gw.internal:9090", "Authorization": bearer}); status != 200 {
		t.Errorf("token, any Host: %d", status)
	}
	if status, _ := adminCall(t, tg.admin.URL, "POST", "/admin/reload", map[string]string{"Authorization": bearer, "Sec-Fetch-Site": "cross-site"}); status != 403 {
		t.Errorf("token, cross-site reload: %d", status)
	}
}

func TestOrgProjectHeadersOnlyWithClientKey(t *testing.T) {
	var mu sync.Mutex
	var seen []http.Header
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	}))
	t.Cleanup(up.Close)
	last := func() http.Header {
		mu.Lock()
		defer mu.Unlock()
		return seen[len(seen)-1]
	}
	account := map[string]string{"OpenAI-Organization": "org-client", "OpenAI-Project": "proj-client"}
	os.Setenv("UPSTREAM_KEY_T", "sk-operator")
	t.Cleanup(func() { os.Unsetenv("UPSTREAM_KEY_T") })

	operator := startAuthGateway(t, "upstreams: [{name: oa, type: openai, base_url: "+up.URL+"/v1, api_key_env: UPSTREAM_KEY_T}]\n"+
		"interceptors: [{name: ok, type: allow}]\nauth:\n  api_keys: [{name: a, sha256: "+sha(keyA)+"}]\n")
	if status, _, code := call(t, operator.main.URL, "/v1/chat/completions", keyA, chatBody("hi", false), account); status != 200 {
		t.Fatalf("chat: %d %s", status, code)
	}
	if h := last(); h.Get("Authorization") != "Bearer sk-operator" || h.Get("OpenAI-Organization") != "" || h.Get("OpenAI-Project") != "" {
		t.Errorf("with the operator's key the upstream saw org %q project %q", h.Get("OpenAI-Organization"), h.Get("OpenAI-Project"))
	}

	own := startAuthGateway(t, "upstreams: [{name: oa, type: openai, base_url: "+up.URL+"/v1, pass_client_key: true}]\n"+
		"interceptors: [{name: ok, type: allow}]\nauth: {mode: none}\n")
	if status, _, code := call(t, own.main.URL, "/v1/chat/completions", "sk-client-own", chatBody("hi", false), account); status != 200 {
		t.Fatalf("chat: %d %s", status, code)
	}
	if h := last(); h.Get("Authorization") != "Bearer sk-client-own" || h.Get("OpenAI-Organization") != "org-client" || h.Get("OpenAI-Project") != "proj-client" {
		t.Errorf("with the client's own key the upstream saw %v", h)
	}
}

// GET /v1/models lists only what the key may call.
func TestModelListFollowsTheKey(t *testing.T) {
	g := startAuthGateway(t, `upstreams: [{name: mock, type: mock, models: [gpt-4o, gpt-4o-mini, o3]}]
interceptors: [{name: ok, type: allow}]
auth:
  api_keys:
    - {name: narrow, sha256: `+sha(keyA)+`, models: ["gpt-4o*"]}
    - {name: wide, sha256: `+sha(keyB)+`}
`)
	list := func(key string) []string {
		req, _ := http.NewRequest(http.MethodGet, g.main.URL+"/v1/models", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct{ Data []struct{ ID string } }
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("models: %d %v", resp.StatusCode, err)
		}
		var ids []string
		for _, m := range out.Data {
			ids = append(ids, m.ID)
		}
		return ids
	}
	if got := list(keyA); !slices.Equal(got, []string{"gpt-4o", "gpt-4o-mini"}) {
		t.Errorf("narrow key sees %v", got)
	}
	if got := list(keyB); !slices.Contains(got, "o3") || !slices.Contains(got, "gpt-4o") {
		t.Errorf("wide key sees %v", got)
	}
}
