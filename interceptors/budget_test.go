package interceptors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// buildBudget builds the only interceptor in src with counters, on a clock
// the test sets.
func buildBudget(t *testing.T, src string, counters Counters, now *time.Time) *budgetInterceptor {
	t.Helper()
	reg, err := Build(specsOf(t, src)[0], Env{Counters: counters})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	b, ok := reg.Interceptor.(*budgetInterceptor)
	if !ok {
		t.Fatalf("built %T, want *budgetInterceptor", reg.Interceptor)
	}
	b.now = func() time.Time { return *now }
	return b
}

// modelCall is a pre_model_call context for the given ids ("" leaves the
// member out).
func modelCall(point enforcement.Point, session, agent, tenant string) enforcement.Context {
	c := enforcement.Context{"interception_point": string(point), "target": []any{}}
	if session != "" {
		c["session"] = map[string]any{"id": session}
	}
	if agent != "" {
		c["agent"] = map[string]any{"id": agent, "framework": "x"}
	}
	if tenant != "" {
		c["tenant"] = map[string]any{"id": tenant}
	}
	return c
}

// withUsage turns c into a post_model_call reporting usage.
func withUsage(c enforcement.Context, prompt, completion int) enforcement.Context {
	c["interception_point"] = string(enforcement.PostModelCall)
	c["target"] = map[string]any{"content": "x"}
	c["usage"] = map[string]any{
		"prompt_tokens":     json.Number(itoa(prompt)),
		"completion_tokens": json.Number(itoa(completion)),
	}
	return c
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestBudgetRequestsPerTenant(t *testing.T) {
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	b := buildBudget(t, `  - name: budgets
    type: budget
    limits:
      - {scope: tenant, window: 1h, requests: 3}
`, sessions.NewMemory(sessions.Options{}), &now)
	for i := range 3 {
		if v := intercept(t, b, modelCall(enforcement.PreModelCall, "s", "a", "acme")); v.Decision != enforcement.DecisionAllow {
			t.Fatalf("request %d: %+v", i+1, v)
		}
	}
	v := intercept(t, b, modelCall(enforcement.PreModelCall, "s2", "a2", "acme"))
	if v.Decision != enforcement.DecisionDeny || v.Reason != budgetExhausted {
		t.Fatalf("fourth request = %+v; want deny %s", v, budgetExhausted)
	}
	if !strings.Contains(v.Message, "tenant request budget for the 1h window") || strings.Contains(v.Message, "acme") {
		t.Errorf("message %q: want scope and window, no id", v.Message)
	}
	// Another tenant has its own budget; a context without a tenant is
	// outside this limit.
	if v := intercept(t, b, modelCall(enforcement.PreModelCall, "s", "a", "globex")); v.Decision != enforcement.DecisionAllow {
		t.Errorf("other tenant: %+v", v)
	}
	if v := intercept(t, b, modelCall(enforcement.PreModelCall, "s", "a", "")); v.Decision != enforcement.DecisionAllow {
		t.Errorf("no tenant: %+v", v)
	}
	// The next fixed window starts afresh.
	now = now.Add(time.Hour)
	if v := intercept(t, b, modelCall(enforcement.PreModelCall, "s", "a", "acme")); v.Decision != enforcement.DecisionAllow {
		t.Errorf("next window: %+v", v)
	}
}

// TestBudgetDeniedCallConsumesNothing: a call denied by a later limit gives
// back what it reserved against earlier ones.
func TestBudgetDeniedCallConsumesNothing(t *testing.T) {
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	m := sessions.NewMemory(sessions.Options{})
	b := buildBudget(t, `  - name: budgets
    type: budget
    limits:
      - {scope: tenant, window: 1h, requests: 10}
      - {scope: session, window: 1h, requests: 1}
`, m, &now)
	intercept(t, b, modelCall(enforcement.PreModelCall, "s1", "a", "acme"))
	for range 3 {
		if v := intercept(t, b, modelCall(enforcement.PreModelCall, "s1", "a", "acme")); v.Decision != enforcement.DecisionDeny {
			t.Fatalf("second call in the session: %+v", v)
		}
	}
	tenantKey := b.limits[0].key("requests", "acme", now)
	if n, err := m.ReadCounter(context.Background(), tenantKey); err != nil || n != 1 {
		t.Errorf("tenant counter = (%d, %v); want 1: denied calls must not consume", n, err)
	}
}

func TestBudgetTokens(t *testing.T) {
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	b := buildBudget(t, `  - name: budgets
    type: budget
    limits:
      - {scope: agent, window: 1m, tokens: 100, warn_at: 0.5}
`, sessions.NewMemory(sessions.Options{}), &now)
	ctx := func() enforcement.Context { return modelCall(enforcement.PreModelCall, "s", "bot", "") }
	if v := intercept(t, b, ctx()); v.Decision != enforcement.DecisionAllow || len(v.Warnings) != 0 {
		t.Fatalf("fresh budget: %+v", v)
	}
	intercept(t, b, withUsage(ctx(), 30, 25)) // 55 of 100: past warn_at
	v := intercept(t, b, ctx())
	if v.Decision != enforcement.DecisionAllow || len(v.Warnings) != 1 || v.Warnings[0].Reason != budgetWarning {
		t.Fatalf("at 55%%: %+v; want an allow with a %s warning", v, budgetWarning)
	}
	if !strings.Contains(v.Warnings[0].Message, "55%") || strings.Contains(v.Warnings[0].Message, "bot") {
		t.Errorf("warning message %q", v.Warnings[0].Message)
	}
	intercept(t, b, withUsage(ctx(), 40, 5)) // 100 of 100
	if v := intercept(t, b, ctx()); v.Decision != enforcement.DecisionDeny || !strings.Contains(v.Message, "agent token budget for the 1m window") {
		t.Fatalf("exhausted: %+v", v)
	}
	now = now.Add(time.Minute)
	if v := intercept(t, b, ctx()); v.Decision != enforcement.DecisionAllow || len(v.Warnings) != 0 {
		t.Errorf("next window: %+v", v)
	}
}

func TestBudgetRequestWarning(t *testing.T) {
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	b := buildBudget(t, `  - name: budgets
    type: budget
    limits:
      - {scope: session, window: 10s, requests: 4, warn_at: 0.75}
`, sessions.NewMemory(sessions.Options{}), &now)
	var warned []int
	for i := 1; i <= 4; i++ {
		v := intercept(t, b, modelCall(enforcement.PreModelCall, "s", "a", ""))
		if len(v.Warnings) > 0 {
			warned = append(warned, i)
		}
	}
	// 3 of 4 is the first call at 75%.
	if len(warned) != 2 || warned[0] != 3 || warned[1] != 4 {
		t.Errorf("warnings on calls %v; want [3 4]", warned)
	}
}

// failingCounters is a store that cannot be reached.
type failingCounters struct{}

var errStoreDown = errors.New("store down")

func (failingCounters) ReserveCounter(context.Context, string, time.Duration, int64, int64) (int64, bool, error) {
	return 0, false, errStoreDown
}

func (failingCounters) AddCounter(context.Context, string, time.Duration, int64) (int64, error) {
	return 0, errStoreDown
}

func (failingCounters) ReadCounter(context.Context, string) (int64, error) { return 0, errStoreDown }

func TestBudgetFailsClosed(t *testing.T) {
	now := time.Now()
	b := buildBudget(t, `  - name: budgets
    type: budget
    limits:
      - {scope: session, window: 1h, requests: 4, tokens: 10}
`, failingCounters{}, &now)
	for _, c := range []enforcement.Context{
		modelCall(enforcement.PreModelCall, "s", "a", ""),
		withUsage(modelCall(enforcement.PreModelCall, "s", "a", ""), 1, 1),
	} {
		if _, err := b.Intercept(context.Background(), c); !errors.Is(err, errStoreDown) {
			t.Errorf("%s: err = %v; want the store's error", c.Point(), err)
		}
	}
	if _, ok := any(b).(enforcement.NonBlocking); ok {
		t.Error("budget does I/O and must not be NonBlocking")
	}
}

func TestBudgetProblems(t *testing.T) {
	got, err := BuildAll(specsOf(t, `  - name: b
    type: budget
    limits:
      - {scope: team, window: 0s, warn_at: 1.5}
      - {scope: tenant, window: 1500ms, requests: 0, tokens: -1}
    reason: host_error:nope
  - name: c
    type: budget
    limits: [{scope: session, window: 1h, requests: 1}]
`), Env{})
	if got != nil {
		t.Fatal("built a bad policy")
	}
	want := []string{
		`limits[0].scope: must be session, agent or tenant (got "team")`,
		`limits[0].window: is required and must be positive`,
		`limits[0]: needs requests, tokens or tool_calls`,
		`limits[0].warn_at: must be a fraction`,
		`limits[1].window: must be a whole number of seconds`,
		`limits[1].requests: must be positive (got 0)`,
		`limits[1].tokens: must be positive (got -1)`,
		`reason: must not use the reserved host_error: prefix`,
		// Without counters even a valid budget refuses to build.
		`interceptors[1].type: budget needs a session store that keeps counters`,
	}
	msg := err.Error()
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("problems lack %q:\n%s", w, msg)
		}
	}
	if !strings.Contains(msg, "policy.yaml:") {
		t.Errorf("problems lack file:line:\n%s", msg)
	}
}

func TestBudgetLongIDs(t *testing.T) {
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	b := buildBudget(t, `  - name: budgets
    type: budget
    limits:
      - {scope: agent, window: 1h, requests: 1}
`, sessions.NewMemory(sessions.Options{}), &now)
	long := strings.Repeat("a", 5000)
	if v := intercept(t, b, modelCall(enforcement.PreModelCall, "s", long, "")); v.Decision != enforcement.DecisionAllow {
		t.Fatalf("long agent id: %+v", v)
	}
	if v := intercept(t, b, modelCall(enforcement.PreModelCall, "s", long, "")); v.Decision != enforcement.DecisionDeny {
		t.Errorf("a long id's budget is not kept: %+v", v)
	}
	if k := b.limits[0].key("requests", long, now); len(k) > 200 || strings.Contains(k, long[:200]) {
		t.Errorf("key of %d bytes", len(k))
	}
	// An id shaped like a hashed one cannot take over the long id's count.
	posing := b.limits[0].key("requests", long, now)
	posing = posing[strings.Index(posing, hashedIDPrefix):strings.LastIndex(posing, ":")]
	if v := intercept(t, b, modelCall(enforcement.PreModelCall, "s", posing, "")); v.Decision != enforcement.DecisionAllow {
		t.Errorf("an id posing as a hash shares its budget: %+v", v)
	}
}

func TestBudgetPointsProblems(t *testing.T) {
	_, err := BuildAll(specsOf(t, `  - name: b
    type: budget
    points: [pre_model_call]
    limits: [{scope: session, window: 1h, tokens: 10}]
  - name: c
    type: budget
    points: [post_model_call]
    limits: [{scope: session, window: 1h, requests: 10}]
`), Env{Counters: sessions.NewMemory(sessions.Options{})})
	msg := fmt.Sprint(err)
	for _, w := range []string{
		"interceptors[0].points: must include post_model_call",
		"interceptors[1].points: must include pre_model_call",
	} {
		if !strings.Contains(msg, w) {
			t.Errorf("problems lack %q:\n%s", w, msg)
		}
	}
}

func TestBudgetToolCallsPerSession(t *testing.T) {
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	b := buildBudget(t, `  - name: budgets
    type: budget
    limits:
      - {scope: session, window: 1h, tool_calls: 2}
`, sessions.NewMemory(sessions.Options{}), &now)
	toolCall := func(session, method string) enforcement.Context {
		c := modelCall(enforcement.PreToolCall, session, "a", "")
		if method != "" {
			c["extensions"] = map[string]any{"hooks_gateway": map[string]any{"mcp_method": method}}
		}
		return c
	}
	// Model calls and MCP protocol requests are not tool calls.
	for _, c := range []enforcement.Context{modelCall(enforcement.PreModelCall, "s", "a", ""), toolCall("s", "tools/list"), toolCall("s", "initialize")} {
		if v := intercept(t, b, c); v.Decision != enforcement.DecisionAllow {
			t.Fatalf("%v: %+v", c["interception_point"], v)
		}
	}
	for i, c := range []enforcement.Context{toolCall("s", ""), toolCall("s", "tools/call")} {
		if v := intercept(t, b, c); v.Decision != enforcement.DecisionAllow {
			t.Fatalf("tool call %d: %+v", i+1, v)
		}
	}
	v := intercept(t, b, toolCall("s", "tools/call"))
	if v.Decision != enforcement.DecisionDeny || v.Reason != budgetExhausted || !strings.Contains(v.Message, "session tool call budget for the 1h window") {
		t.Fatalf("third tool call = %+v; want the session's tool call budget exhausted", v)
	}
	if v := intercept(t, b, toolCall("s2", "")); v.Decision != enforcement.DecisionAllow {
		t.Errorf("another session's first tool call = %+v", v)
	}
}
