package interceptors

import (
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
)

// literalFilter is a cheap pre-check in front of a regular expression: a
// string that contains none of the literals cannot match, so it is skipped
// without running the regexp engine, whose unanchored search with a
// class-led pattern (an e-mail address: [A-Za-z0-9._%+-]+@…) costs a
// backtracking attempt at every position of every string. The zero filter
// admits everything.
type literalFilter struct {
	// literals holds one required literal per alternative; nil means some
	// alternative has none, and every string must be tried.
	literals []string
}

// newLiteralFilter derives the filter of the alternation of patterns (each
// already known to compile). A pattern with no case-sensitive literal that
// every match contains disables the filter.
func newLiteralFilter(patterns []string) literalFilter {
	lits := make([]string, 0, len(patterns))
	for _, p := range patterns {
		re, err := syntax.Parse(p, syntax.Perl)
		if err != nil {
			return literalFilter{}
		}
		lit := requiredLiteral(re.Simplify())
		if lit == "" {
			return literalFilter{}
		}
		lits = append(lits, lit)
	}
	return literalFilter{literals: lits}
}

// admits reports whether s may match: it contains one of the literals.
func (f literalFilter) admits(s string) bool {
	if f.literals == nil {
		return true
	}
	for _, l := range f.literals {
		if strings.Contains(s, l) {
			return true
		}
	}
	return false
}

// requiredLiteral returns the longest literal every match of re contains,
// or "" when it finds none. It is conservative: only literals on the
// mandatory path of concatenations, captures and repeats of at least one
// count, never under an alternation or an optional part, and never a
// case-folded one.
func requiredLiteral(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		// U+FFFD in a pattern also matches an invalid byte, which
		// strings.Contains would not find.
		if re.Flags&syntax.FoldCase != 0 || slices.Contains(re.Rune, utf8.RuneError) {
			return ""
		}
		return string(re.Rune)
	case syntax.OpCapture:
		return requiredLiteral(re.Sub[0])
	case syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		best := ""
		for _, sub := range re.Sub {
			if l := requiredLiteral(sub); len(l) > len(best) {
				best = l
			}
		}
		return best
	}
	return ""
}
