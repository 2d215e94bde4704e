package interceptors

import (
	"fmt"
	"regexp"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/interpreter"

	"github.com/hooks-gateway/hooks-gateway/internal/targetpath"
)

// Helper function names, as policy authors write them.
const (
	fnURLHost    = "url_host"
	fnContainsCI = "contains_ci"
	fnReFind     = "re_find"
	fnJSONPath   = "json_path"
)

// newCELEnv declares what rules see: the variables context (the whole
// AgentContext), target (context.target) and point, CEL's standard library
// with optional syntax (x.?y.orValue(d)) and numbers comparable across int
// and double, the strings extension (lowerAscii, split, ...) and the
// helpers below.
//
// Context values reach CEL unconverted: cel-go adapts map[string]any and
// []any lazily and a json.Number to an int when it is an integer that fits
// in 64 bits, else to a double. So 7 is an int, 7.0, 1e3 and 2^64 are
// doubles, and a comparison such as args.limit > 100 holds either way.
func newCELEnv() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("context", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("target", cel.DynType),
		cel.Variable("point", cel.StringType),
		cel.OptionalTypes(),
		cel.CrossTypeNumericComparisons(true),
		cel.ASTValidators(cel.ValidateRegexLiterals(), cel.ValidateDurationLiterals(), cel.ValidateTimestampLiterals()),
		ext.Strings(),
		cel.Function(fnURLHost, cel.Overload("url_host_string",
			[]*cel.Type{cel.StringType}, cel.StringType, cel.UnaryBinding(urlHost))),
		cel.Function(fnContainsCI, cel.Overload("contains_ci_string_string",
			[]*cel.Type{cel.StringType, cel.StringType}, cel.BoolType, cel.BinaryBinding(containsCI))),
		cel.Function(fnReFind, cel.Overload("re_find_string_string",
			[]*cel.Type{cel.StringType, cel.StringType}, cel.StringType, cel.BinaryBinding(reFind))),
		cel.Function(fnJSONPath, cel.Overload("json_path_dyn_string",
			[]*cel.Type{cel.DynType, cel.StringType}, cel.DynType, cel.BinaryBinding(jsonPath))),
	)
}

// celProgramOptions plans an expression: bounded cost, and constant regex
// patterns and json_path paths compiled once, at load, where a bad one is a
// configuration problem.
func celProgramOptions(costLimit uint64) []cel.ProgramOption {
	return []cel.ProgramOption{
		cel.CostLimit(costLimit),
		cel.EvalOptions(cel.OptOptimize),
		cel.OptimizeRegex(reFindConstant(), jsonPathConstant()),
	}
}

// urlHost returns the host of the absolute URL s starts with, read as the
// egress type reads it (lower case, no port, brackets or trailing dot,
// userinfo skipped, numeric IPv4 forms canonical), and "" for anything
// that is not one (a bare domain, a path, a malformed host) or whose host
// parsers would read differently ("https://a.example\@b.example").
func urlHost(v ref.Val) ref.Val {
	s, ok := v.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	for u := range findURLs(strings.TrimSpace(s)) {
		if u.start != 0 {
			break
		}
		h := u.hosts[0]
		for _, other := range u.hosts[1:] {
			if other != h {
				return types.String("")
			}
		}
		if !h.valid {
			return types.String("")
		}
		return types.String(h.name)
	}
	return types.String("")
}

// containsCI reports whether s contains sub, ignoring case (Unicode simple
// folding via lower-casing both).
func containsCI(s, sub ref.Val) ref.Val {
	a, ok1 := s.Value().(string)
	b, ok2 := sub.Value().(string)
	if !ok1 || !ok2 {
		return types.NoSuchOverloadErr()
	}
	return types.Bool(strings.Contains(strings.ToLower(a), strings.ToLower(b)))
}

// reFind returns the leftmost match of an RE2 pattern in s, or "" when
// there is none. A pattern that is not a constant is compiled per call.
func reFind(s, pattern ref.Val) ref.Val {
	p, ok := pattern.Value().(string)
	if !ok {
		return types.NoSuchOverloadErr()
	}
	re, err := regexp.Compile(p)
	if err != nil {
		// The pattern may come from the context: name the failure only.
		return types.NewErr("%s: invalid RE2 pattern", fnReFind)
	}
	return findIn(re, s)
}

func findIn(re *regexp.Regexp, s ref.Val) ref.Val {
	in, ok := s.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(s)
	}
	return types.String(re.FindString(in))
}

// reFindConstant compiles a constant re_find pattern when the expression
// is planned.
func reFindConstant() *interpreter.RegexOptimization {
	return &interpreter.RegexOptimization{
		Function:   fnReFind,
		RegexIndex: 1,
		Factory: func(call interpreter.InterpretableCall, pattern string) (interpreter.InterpretableCall, error) {
			re, err := regexp.Compile(pattern)
			if err != nil {
				return nil, fmt.Errorf("%s: invalid RE2 pattern: %w", fnReFind, err)
			}
			return interpreter.NewCall(call.ID(), call.Function(), call.OverloadID(), call.Args(), func(args ...ref.Val) ref.Val {
				if len(args) != 2 {
					return types.NoSuchOverloadErr()
				}
				return findIn(re, args[0])
			}), nil
		}}
}

// jsonPath looks a path such as $.a.b[0] up in v and returns null when it
// does not resolve. The grammar is that of transform paths with $ as the
// root.
func jsonPath(v, path ref.Val) ref.Val {
	s, ok := path.Value().(string)
	if !ok {
		return types.NoSuchOverloadErr()
	}
	p, err := parseJSONPath(s)
	if err != nil {
		return types.NewErr("%s: invalid path", fnJSONPath)
	}
	return lookupIn(p, v)
}

func lookupIn(p targetpath.Path, v ref.Val) ref.Val {
	tree, err := celToJSON(v)
	if err != nil {
		return types.NewErr("%s: %v", fnJSONPath, err)
	}
	found, ok := p.Lookup(tree)
	if !ok {
		return types.NullValue
	}
	return types.DefaultTypeAdapter.NativeToValue(found)
}

// jsonPathConstant parses a constant json_path path when the expression is
// planned. (The regex hook serves any constant argument.)
func jsonPathConstant() *interpreter.RegexOptimization {
	return &interpreter.RegexOptimization{
		Function:   fnJSONPath,
		RegexIndex: 1,
		Factory: func(call interpreter.InterpretableCall, path string) (interpreter.InterpretableCall, error) {
			p, err := parseJSONPath(path)
			if err != nil {
				return nil, err
			}
			return interpreter.NewCall(call.ID(), call.Function(), call.OverloadID(), call.Args(), func(args ...ref.Val) ref.Val {
				if len(args) != 2 {
					return types.NoSuchOverloadErr()
				}
				return lookupIn(p, args[0])
			}), nil
		}}
}

// parseJSONPath parses $, $.name, $[0], $["name"] and their chains by the
// transform-path grammar, whose root is $target.
func parseJSONPath(s string) (targetpath.Path, error) {
	rest, ok := strings.CutPrefix(s, "$")
	if ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
		if p, err := targetpath.Parse("$target" + rest); err == nil {
			return p, nil
		}
	}
	return targetpath.Path{}, fmt.Errorf(`%s: %q is not a path such as $.a.b[0] (members of letters, digits, _ and -; ["member"]; [index])`, fnJSONPath, s)
}
