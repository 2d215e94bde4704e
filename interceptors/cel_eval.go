package interceptors

import (
	"context"
	"fmt"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/interpreter"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// NonBlocking marks evaluation as pure CPU work bounded by the cost limit,
// so the emitter runs it without a timeout goroutine.
func (ic *celInterceptor) NonBlocking() {}

// ReadsOnly marks evaluation as reading only: CEL values are immutable, and
// a transform's result is converted into a fresh JSON value.
func (ic *celInterceptor) ReadsOnly() {}

// Intercept implements enforcement.Interceptor: the first rule whose when
// holds decides; when none does, the answer is allow.
func (ic *celInterceptor) Intercept(ctx context.Context, c enforcement.Context) (enforcement.Verdict, error) {
	point := c.Point()
	vars := &celVars{context: c, point: string(point)}
	for i := range ic.rules {
		r := &ic.rules[i]
		if r.points != nil && !r.points[point] {
			continue
		}
		if r.transform != nil && !point.Transformable() {
			continue
		}
		// The cost limit bounds each evaluation, so the caller's
		// cancellation is checked between rules rather than inside them
		// (which costs a context per evaluation).
		if err := ctx.Err(); err != nil {
			return enforcement.Verdict{}, fmt.Errorf("cel interceptor %s: %w", ic.name, err)
		}
		out, _, err := r.when.Eval(vars)
		if err != nil {
			return enforcement.Verdict{}, ic.failure(r, "when", err)
		}
		if out != types.True {
			if out != types.False {
				return enforcement.Verdict{}, &celRuleError{interceptor: ic.name, rule: r.label, part: "when", class: errCELResult}
			}
			continue
		}
		if r.transform != nil {
			return ic.transform(r, vars)
		}
		return r.outcome(r.reason, r.message), nil
	}
	return enforcement.Allow(), nil
}

// transform evaluates a transform rule's value into a JSON value.
func (ic *celInterceptor) transform(r *celRule, vars *celVars) (enforcement.Verdict, error) {
	out, _, err := r.transform.value.Eval(vars)
	if err != nil {
		return enforcement.Verdict{}, ic.failure(r, "transform.value", err)
	}
	native, err := celToJSON(out)
	if err == nil {
		// FromGo turns Go numbers into json.Number and copies, so the
		// verdict never aliases the context.
		native, err = jsonvalue.FromGo(native)
	}
	if err != nil {
		return enforcement.Verdict{}, &celRuleError{interceptor: ic.name, rule: r.label, part: "transform.value", class: errCELResult}
	}
	v := enforcement.TransformTo(r.transform.path, native)
	v.Reason, v.Message = r.transform.reason, r.transform.message
	return v, nil
}

// failure turns an evaluation error into a payload-free celRuleError.
func (ic *celInterceptor) failure(r *celRule, part string, err error) error {
	return &celRuleError{interceptor: ic.name, rule: r.label, part: part, class: classifyCELError(err)}
}

// celVars resolves the variables rules see. target is looked up on demand:
// the context is passed to CEL as is and adapted lazily, so a rule reading
// one field does not convert the whole conversation.
type celVars struct {
	context enforcement.Context
	point   string
}

// ResolveName implements interpreter.Activation.
func (a *celVars) ResolveName(name string) (any, bool) {
	switch name {
	case "context":
		// The plain map type: CEL adapts map[string]any natively, not a
		// named map type.
		return map[string]any(a.context), true
	case "target":
		return a.context["target"], true
	case "point":
		return a.point, true
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (a *celVars) Parent() interpreter.Activation { return nil }
