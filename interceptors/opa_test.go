package interceptors

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// fakeOPA serves OPA's data API at /v1/data/agenthooks/decision: it
// checks the query is {"input": <context>} and answers the document
// decide builds from the input (nil: {} — the rule is undefined).
func fakeOPA(t *testing.T, decide func(input map[string]any) any) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/data/agenthooks/decision" {
			http.NotFound(w, r)
			return
		}
		var q struct {
			Input map[string]any `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&q); err != nil || q.Input == nil {
			http.Error(w, `{"code":"invalid_parameter"}`, http.StatusBadRequest)
			return
		}
		doc := map[string]any{}
		if res := decide(q.Input); res != nil {
			doc["result"] = res
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(doc)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func buildOPA(t *testing.T, url, extra string) enforcement.Interceptor {
	t.Helper()
	reg, err := Build(specsOf(t, "  - name: opa\n    type: opa\n    url: "+url+"\n    path: agenthooks/decision\n"+extra)[0], Env{InterceptorTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return reg.Interceptor
}

func TestOPAResults(t *testing.T) {
	// The fake policy: searches are allowed, deletes denied, and shell
	// calls get a full verdict (a transform of the arguments).
	srv := fakeOPA(t, func(in map[string]any) any {
		target, _ := in["target"].(map[string]any)
		switch target["name"] {
		case "search":
			return true
		case "delete":
			return false
		case "shell":
			return map[string]any{"decision": "transform", "reason": "policy:sandboxed",
				"transform": map[string]any{"path": "$target.args.q", "value": "echo sandboxed"}}
		case "number":
			return 42
		case "broken":
			return map[string]any{"allow": true}
		}
		return nil
	})
	call := func(name string) enforcement.Context {
		c := toolContext("q")
		c["target"].(map[string]any)["name"] = name
		return c
	}
	o := buildOPA(t, srv.URL, "")
	if v := intercept(t, o, call("search")); !samePlain(v, enforcement.Allow()) {
		t.Errorf("true → %+v; want allow", v)
	}
	if v := intercept(t, o, call("delete")); v.Decision != enforcement.DecisionDeny || v.Reason != opaDenied ||
		!strings.Contains(v.Message, "agenthooks/decision") {
		t.Errorf("false → %+v; want deny %s", v, opaDenied)
	}
	v := intercept(t, o, call("shell"))
	if v.Decision != enforcement.DecisionTransform || v.Reason != "policy:sandboxed" || v.Transform.Value != "echo sandboxed" {
		t.Errorf("object → %+v; want its verdict", v)
	}
	// Undefined is not an allow: an error, so the engine fails closed.
	if _, err := o.Intercept(context.Background(), call("unknown")); err == nil || !strings.Contains(err.Error(), "undefined") {
		t.Errorf("undefined → err %v", err)
	}
	if _, err := o.Intercept(context.Background(), call("number")); err == nil || !strings.Contains(err.Error(), "a number") {
		t.Errorf("number → err %v", err)
	}
	if _, err := o.Intercept(context.Background(), call("broken")); !errors.Is(err, enforcement.ErrVerdictInvalid) {
		t.Errorf("object without decision → err %v; want a verdict_invalid error", err)
	}
}

func TestOPAReason(t *testing.T) {
	srv := fakeOPA(t, func(map[string]any) any { return false })
	v := intercept(t, buildOPA(t, srv.URL, "    reason: policy:tools_forbidden\n"), toolContext("q"))
	if v.Reason != "policy:tools_forbidden" {
		t.Errorf("reason %q", v.Reason)
	}
}

// TestOPAPathJoin: a base URL with a path prefix (OPA behind a proxy) keeps
// it.
func TestOPAPathJoin(t *testing.T) {
	var path atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path.Store(r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"result":true}`)
	}))
	t.Cleanup(srv.Close)
	intercept(t, buildOPA(t, srv.URL+"/opa/", ""), toolContext("q"))
	if got := path.Load(); got != "/opa/v1/data/agenthooks/decision" {
		t.Errorf("path %q", got)
	}
}
