package interceptors

import (
	"errors"
	"fmt"
	"strings"

	"cel.dev/cel-go/interpreter"
)

// Classes of rule failure. Each fails the interceptor closed; the class is
// all the error says about why.
var (
	// errCELCostLimit: evaluation went over cost_limit.
	errCELCostLimit = errors.New("evaluation exceeded the cost limit")
	// errCELMissing: the rule read a key or index the context lacks.
	errCELMissing = errors.New("a key or index the rule reads is absent (guard it with has() or the ? operator)")
	// errCELType: an operator or function met a value of a type it does
	// not take.
	errCELType = errors.New("an operator or function got a value of the wrong type")
	// errCELResult: when did not yield a bool, or a transform value has no
	// JSON form.
	errCELResult = errors.New("the expression's result has the wrong type")
	// errCELEval: any other evaluation error.
	errCELEval = errors.New("evaluation failed")
)

// celRuleError reports a rule that failed at run time. It names the
// interceptor, the rule and the failure class, never CEL's own error text,
// which can quote context values (a missing key read from the payload, a
// string that failed to convert). It matches its class with errors.Is but
// does not unwrap to it, so records show this type as the failure's cause.
type celRuleError struct {
	interceptor string
	rule        string
	// part is the failing expression: when or transform.value.
	part  string
	class error
}

// Error implements error.
func (e *celRuleError) Error() string {
	return fmt.Sprintf("cel interceptor %s: rule %s: %s: %v", e.interceptor, e.rule, e.part, e.class)
}

// Is reports whether target is the error's class.
func (e *celRuleError) Is(target error) bool { return target == e.class }

// classifyCELError maps a cel-go evaluation error to its class by the
// stable prefixes of its messages.
func classifyCELError(err error) error {
	var cancelled interpreter.EvalCancelledError
	if errors.As(err, &cancelled) && cancelled.Cause == interpreter.CostLimitExceeded {
		return errCELCostLimit
	}
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "no such key"), strings.HasPrefix(msg, "no such attribute"),
		strings.HasPrefix(msg, "no such field"), strings.HasPrefix(msg, "index out of range"),
		strings.HasPrefix(msg, "index out of bounds"):
		return errCELMissing
	case strings.Contains(msg, "no matching overload"), strings.HasPrefix(msg, "no such overload"):
		return errCELType
	}
	return errCELEval
}
