package interceptors

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// Counters are the atomic fixed-window counters budgets keep in the
// session store, shared by every replica using that store. A counter that
// does not exist reads as 0; one created by a write expires ttl later.
type Counters interface {
	// ReserveCounter adds n to the counter at key only if the result stays
	// at or below limit, and reports the value afterwards (unchanged when
	// refused) and whether n was added.
	ReserveCounter(ctx context.Context, key string, ttl time.Duration, n, limit int64) (int64, bool, error)
	// AddCounter adds n (negative to give back) and returns the new value.
	AddCounter(ctx context.Context, key string, ttl time.Duration, n int64) (int64, error)
	// ReadCounter returns the counter's value.
	ReadCounter(ctx context.Context, key string) (int64, error)
}

// Budget scopes: whose usage a limit counts, by the context member holding
// the id.
const (
	scopeSession = "session"
	scopeAgent   = "agent"
	scopeTenant  = "tenant"
)

// Reasons of the budget type's verdicts.
const (
	budgetExhausted = "policy:budget_exhausted"
	budgetWarning   = "policy:budget_warning"
)

// budgetOptions configures the "budget" type.
type budgetOptions struct {
	Limits []budgetLimitOptions `yaml:"limits"`
	// Reason is the deny reason when a budget is exhausted.
	Reason string `yaml:"reason"`
}

// budgetLimitOptions is one limit: per scope id, per fixed window.
type budgetLimitOptions struct {
	Scope  string        `yaml:"scope"`
	Window time.Duration `yaml:"window"`
	// Requests caps model calls; Tokens caps prompt+completion tokens;
	// ToolCalls caps tool calls (MCP tools/call through the gateway, and
	// the SDK's through the emit API).
	Requests  *int64 `yaml:"requests"`
	Tokens    *int64 `yaml:"tokens"`
	ToolCalls *int64 `yaml:"tool_calls"`
	// WarnAt is the fraction of a cap past which calls carry a warning.
	WarnAt *float64 `yaml:"warn_at"`
}

// budgetLimit is one validated limit; a zero cap means none.
type budgetLimit struct {
	scope    string
	window   time.Duration
	requests int64
	tokens   int64
	tools    int64
	warnAt   float64 // 0: no warning
}

// budgetInterceptor reserves a request at pre_model_call against every
// applicable limit (and checks the token counters), and adds the response's
// tokens at post_model_call. It does I/O, so it is not NonBlocking.
type budgetInterceptor struct {
	counters Counters
	limits   []budgetLimit
	reason   string
	now      func() time.Time
}

// newBudget builds the "budget" type.
func newBudget(spec config.Interceptor, env Env) (enforcement.Interceptor, error) {
	opts := budgetOptions{Reason: budgetExhausted}
	if err := spec.DecodeOptions(&opts); err != nil {
		return nil, err
	}
	var ps []config.Problem
	if env.Counters == nil {
		ps = append(ps, spec.Problemf("type", "budget needs a session store that keeps counters (sessions.store: memory or redis)"))
	}
	if len(opts.Limits) == 0 {
		ps = append(ps, spec.Problemf("limits", "at least one limit is required"))
	}
	b := &budgetInterceptor{counters: env.Counters, reason: opts.Reason, now: time.Now}
	for i, lo := range opts.Limits {
		l, lps := budgetLimitOf(spec, fmt.Sprintf("limits[%d]", i), lo)
		ps = append(ps, lps...)
		b.limits = append(b.limits, l)
	}
	ps = append(ps, checkReason(spec, opts.Reason)...)
	ps = append(ps, budgetPointProblems(spec, b.limits)...)
	if len(ps) > 0 {
		return nil, problemsError(ps...)
	}
	return b, nil
}

// budgetPointProblems checks that points, when restricted, keep the points
// the limits count at: requests at pre_model_call, tokens at both.
func budgetPointProblems(spec config.Interceptor, limits []budgetLimit) []config.Problem {
	if len(spec.Points) == 0 {
		return nil
	}
	has := func(p enforcement.Point) bool {
		for _, q := range spec.Points {
			if enforcement.Point(q) == p {
				return true
			}
		}
		return false
	}
	var needPre, needPost, needTool bool
	for _, l := range limits {
		needPre = needPre || l.requests > 0 || l.tokens > 0
		needPost = needPost || l.tokens > 0
		needTool = needTool || l.tools > 0
	}
	var ps []config.Problem
	if needTool && !has(enforcement.PreToolCall) {
		ps = append(ps, spec.Problemf("points", "must include pre_tool_call, where tool calls are counted"))
	}
	if needPre && !has(enforcement.PreModelCall) {
		ps = append(ps, spec.Problemf("points", "must include pre_model_call, where budgets are checked"))
	}
	if needPost && !has(enforcement.PostModelCall) {
		ps = append(ps, spec.Problemf("points", "must include post_model_call, where tokens are counted"))
	}
	return ps
}

// budgetLimitOf validates one limit.
func budgetLimitOf(spec config.Interceptor, field string, lo budgetLimitOptions) (budgetLimit, []config.Problem) {
	var ps []config.Problem
	l := budgetLimit{scope: lo.Scope, window: lo.Window}
	switch lo.Scope {
	case scopeSession, scopeAgent, scopeTenant:
	case "":
		ps = append(ps, spec.Problemf(field+".scope", "is required (session, agent or tenant)"))
	default:
		ps = append(ps, spec.Problemf(field+".scope", "must be session, agent or tenant (got %q)", lo.Scope))
	}
	switch {
	case lo.Window <= 0:
		ps = append(ps, spec.Problemf(field+".window", "is required and must be positive, such as 1h"))
	case lo.Window%time.Second != 0:
		// Window starts are whole Unix seconds in the counters' keys.
		ps = append(ps, spec.Problemf(field+".window", "must be a whole number of seconds (got %v)", lo.Window))
	}
	if lo.Requests == nil && lo.Tokens == nil && lo.ToolCalls == nil {
		ps = append(ps, spec.Problemf(field, "needs requests, tokens or tool_calls"))
	}
	if lo.ToolCalls != nil {
		if l.tools = *lo.ToolCalls; l.tools <= 0 {
			ps = append(ps, spec.Problemf(field+".tool_calls", "must be positive (got %d)", l.tools))
		}
	}
	if lo.Requests != nil {
		if l.requests = *lo.Requests; l.requests <= 0 {
			ps = append(ps, spec.Problemf(field+".requests", "must be positive (got %d)", l.requests))
		}
	}
	if lo.Tokens != nil {
		if l.tokens = *lo.Tokens; l.tokens <= 0 {
			ps = append(ps, spec.Problemf(field+".tokens", "must be positive (got %d)", l.tokens))
		}
	}
	if lo.WarnAt != nil {
		if l.warnAt = *lo.WarnAt; !(l.warnAt > 0 && l.warnAt < 1) {
			ps = append(ps, spec.Problemf(field+".warn_at", "must be a fraction between 0 and 1 exclusive (got %v)", l.warnAt))
		}
	}
	return l, ps
}

// Intercept implements enforcement.Interceptor.
func (b *budgetInterceptor) Intercept(ctx context.Context, c enforcement.Context) (enforcement.Verdict, error) {
	switch c.Point() {
	case enforcement.PreModelCall:
		return b.admit(ctx, c)
	case enforcement.PostModelCall:
		if err := b.charge(ctx, c); err != nil {
			return enforcement.Verdict{}, err
		}
	case enforcement.PreToolCall:
		if !isMCPMethod(c) { // a tool call, not an MCP protocol request
			return b.reserve(ctx, c, b.now(), "tool_calls", "tool call", func(l budgetLimit) int64 { return l.tools }, nil)
		}
	}
	return enforcement.Allow(), nil
}

// reservation is a request counted against one limit, given back if a
// later limit denies the call.
type reservation struct {
	key    string
	window time.Duration
}

// admit checks every applicable token budget, then reserves one request
// against every applicable request budget. A denied call consumes
// nothing: reservations already made are given back.
func (b *budgetInterceptor) admit(ctx context.Context, c enforcement.Context) (enforcement.Verdict, error) {
	now := b.now()
	var warnings []enforcement.Warning
	for _, l := range b.limits {
		id := scopeID(c, l.scope)
		if id == "" || l.tokens == 0 {
			continue
		}
		used, err := b.counters.ReadCounter(ctx, l.key("tokens", id, now))
		if err != nil {
			return enforcement.Verdict{}, fmt.Errorf("budget: read token counter: %w", err)
		}
		if used >= l.tokens {
			return enforcement.Deny(b.reason, l.describe("token")+" is exhausted"), nil
		}
		if w, ok := l.warning("token", used, l.tokens); ok {
			warnings = append(warnings, w)
		}
	}
	return b.reserve(ctx, c, now, "requests", "request", func(l budgetLimit) int64 { return l.requests }, warnings)
}

// reserve counts one call of kind (the counters' name; what in messages)
// against every applicable limit whose cap is positive, adding to
// warnings. A denied call consumes nothing: reservations already made
// are given back.
func (b *budgetInterceptor) reserve(ctx context.Context, c enforcement.Context, now time.Time, kind, what string, cap func(budgetLimit) int64, warnings []enforcement.Warning) (enforcement.Verdict, error) {
	var held []reservation
	for _, l := range b.limits {
		id, limit := scopeID(c, l.scope), cap(l)
		if id == "" || limit == 0 {
			continue
		}
		key := l.key(kind, id, now)
		used, ok, err := b.counters.ReserveCounter(ctx, key, l.window, 1, limit)
		if err != nil {
			return enforcement.Verdict{}, errors.Join(fmt.Errorf("budget: reserve %s: %w", what, err), b.release(ctx, held))
		}
		if !ok {
			if err := b.release(ctx, held); err != nil {
				return enforcement.Verdict{}, err
			}
			return enforcement.Deny(b.reason, l.describe(what)+" is exhausted"), nil
		}
		held = append(held, reservation{key, l.window})
		if w, ok := l.warning(what, used, limit); ok {
			warnings = append(warnings, w)
		}
	}
	if len(warnings) > 0 {
		return enforcement.Verdict{Decision: enforcement.DecisionAllow, Warnings: warnings}, nil
	}
	return enforcement.Allow(), nil
}

// release gives back the requests reserved for a call that was denied.
func (b *budgetInterceptor) release(ctx context.Context, held []reservation) error {
	var errs []error
	for _, r := range held {
		if _, err := b.counters.AddCounter(ctx, r.key, r.window, -1); err != nil {
			errs = append(errs, fmt.Errorf("budget: give back a request: %w", err))
		}
	}
	return errors.Join(errs...)
}

// charge adds the response's prompt and completion tokens to every
// applicable token budget. A response without usage adds nothing.
func (b *budgetInterceptor) charge(ctx context.Context, c enforcement.Context) error {
	n := usageTokens(c)
	if n == 0 {
		return nil
	}
	now := b.now()
	for _, l := range b.limits {
		id := scopeID(c, l.scope)
		if id == "" || l.tokens == 0 {
			continue
		}
		if _, err := b.counters.AddCounter(ctx, l.key("tokens", id, now), l.window, n); err != nil {
			return fmt.Errorf("budget: add tokens: %w", err)
		}
	}
	return nil
}

// usageTokens sums usage.prompt_tokens and usage.completion_tokens.
func usageTokens(c enforcement.Context) int64 {
	u, _ := c["usage"].(map[string]any)
	var total int64
	for _, k := range []string{"prompt_tokens", "completion_tokens"} {
		if n, ok := u[k].(json.Number); ok {
			if v, err := n.Int64(); err == nil && v > 0 {
				total += v
			}
		}
	}
	return total
}

// scopeID returns the id the scope counts by: session.id, agent.id or
// tenant.id; "" when the context has none (the limit does not apply).
func scopeID(c enforcement.Context, scope string) string {
	obj, _ := c[scope].(map[string]any)
	id, _ := obj["id"].(string)
	return id
}

// maxKeyID is the longest id put into a counter key verbatim; longer ids
// go in as hashedIDPrefix and their SHA-256.
const (
	maxKeyID       = 128
	hashedIDPrefix = "sha256="
)

// key names the counter of metric for id in the window holding now:
// "<scope>:<metric>:<window seconds>s:<id>:<window start>". Only id is free
// text, and it sits between a fixed-shape prefix and a numeric suffix, so
// distinct counters never share a key.
func (l budgetLimit) key(metric, id string, now time.Time) string {
	if len(id) > maxKeyID || strings.HasPrefix(id, hashedIDPrefix) {
		// Client-chosen ids (the agent header) must not make keys
		// unbounded; ids that look hashed are hashed too, so no verbatim
		// id can pose as another's hash.
		sum := sha256.Sum256([]byte(id))
		id = hashedIDPrefix + hex.EncodeToString(sum[:])
	}
	start := now.Truncate(l.window).Unix()
	return l.scope + ":" + metric + ":" + strconv.FormatInt(int64(l.window/time.Second), 10) + "s:" + id + ":" + strconv.FormatInt(start, 10)
}

// describe names a budget for messages: scope and window, never an id.
func (l budgetLimit) describe(what string) string {
	return fmt.Sprintf("the %s %s budget for the %s window", l.scope, what, ShortDuration(l.window))
}

// warning reports whether used crosses the limit's warning threshold.
func (l budgetLimit) warning(what string, used, limit int64) (enforcement.Warning, bool) {
	if l.warnAt == 0 || used < int64(math.Ceil(l.warnAt*float64(limit))) {
		return enforcement.Warning{}, false
	}
	pct := used * 100 / limit
	return enforcement.Warning{
		Reason:  budgetWarning,
		Message: fmt.Sprintf("%s is %d%% used", l.describe(what), pct),
	}, true
}

// ShortDuration renders d as it is usually written: 1h rather than
// 1h0m0s, 1m rather than 1m0s.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
