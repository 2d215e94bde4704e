package interceptors

import (
	"regexp/syntax"
	"strings"
)

// matchWindows narrows the search of a regular expression to the windows
// of a string that can hold a match, for patterns whose every match
// contains one of a few literals (see literalFilter) and is made of
// characters of a known alphabet. An unanchored search with a class-led
// pattern (an e-mail address: [A-Za-z0-9._%+-]+@…) backtracks at every
// position of a string that holds the literal; the windows confine that
// to the run of alphabet characters around each literal.
//
// Why the windows find exactly what the whole string gives: a match
// contains only alphabet characters, so it never spans an ASCII byte
// outside the alphabet (a cut byte; ASCII bytes always decode as
// themselves). With no empty-width assertion in the pattern (which would
// look past a window's edge), a match starting at a position depends only
// on the text up to the next cut byte, so the leftmost-first matches of the
// whole string are those of the pieces between cut bytes; and a piece
// without a literal holds none. Non-ASCII characters are never cuts: a
// window may be wider than the run, never narrower.
type matchWindows struct {
	// cut has bit c set for each ASCII byte c no match contains.
	cut [2]uint64
	// literals: every match contains one. nil disables the windows: the
	// whole string is searched.
	literals []string
}

// maxWindowLiterals bounds the literals a window search tracks; more
// patterns than that search whole strings.
const maxWindowLiterals = 8

// newMatchWindows derives the windows of pattern (compiled as regexp
// compiles it, already known to compile) whose matches each contain one
// of literals. It disables them (the zero value) when there are no
// literals or too many, or when the pattern has an empty-width assertion.
func newMatchWindows(pattern string, literals []string) matchWindows {
	if len(literals) == 0 || len(literals) > maxWindowLiterals {
		return matchWindows{}
	}
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return matchWindows{}
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return matchWindows{}
	}
	var runes []*syntax.Inst
	for i := range prog.Inst {
		switch in := &prog.Inst[i]; in.Op {
		case syntax.InstEmptyWidth:
			return matchWindows{}
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			runes = append(runes, in)
		}
	}
	w := matchWindows{literals: literals}
	for c := range rune(0x80) {
		in := false
		for _, i := range runes {
			if i.MatchRune(c) {
				in = true
				break
			}
		}
		if !in {
			w.cut[c>>6] |= 1 << (c & 63)
		}
	}
	return w
}

// enabled reports whether searches go through windows.
func (w *matchWindows) enabled() bool { return w.literals != nil }

// isCut reports whether byte c is an ASCII byte no match contains.
func (w *matchWindows) isCut(c byte) bool {
	return c < 0x80 && w.cut[c>>6]&(1<<(c&63)) != 0
}

// each calls f, in order, with every window of s that holds a literal and
// its offset in s, until f returns true; it reports whether one did.
// Windows do not overlap, and s outside them holds no match.
func (w *matchWindows) each(s string, f func(window string, off int) bool) bool {
	var next [maxWindowLiterals]int // next occurrence of each literal, -1: none
	for i := range w.literals {
		next[i] = -2 // not searched yet
	}
	for pos := 0; pos < len(s); {
		p := w.nextLiteral(s, pos, next[:len(w.literals)])
		if p < 0 {
			return false
		}
		start, end := p, p
		for start > pos && !w.isCut(s[start-1]) {
			start--
		}
		for end < len(s) && !w.isCut(s[end]) {
			end++
		}
		if f(s[start:end], start) {
			return true
		}
		// end > p: the literal's first byte is in the alphabet or is not
		// ASCII, so it is no cut.
		pos = end
	}
	return false
}

// nextLiteral returns the first position at or after pos where one of the
// literals occurs, or -1. next caches each literal's next occurrence
// (-2: not searched; -1: none left), so each literal's occurrences are
// searched for once over the whole string.
func (w *matchWindows) nextLiteral(s string, pos int, next []int) int {
	best := -1
	for i, l := range w.literals {
		if next[i] == -2 || next[i] >= 0 && next[i] < pos {
			next[i] = -1
			if j := strings.Index(s[pos:], l); j >= 0 {
				next[i] = pos + j
			}
		}
		if n := next[i]; n >= 0 && (best < 0 || n < best) {
			best = n
		}
	}
	return best
}
