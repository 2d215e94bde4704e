package enforcement

// Hand-written matchers for the envelope's patterns: every emission checks
// them, and the regexp engine cost more than the rest of the envelope
// check. envelope_match_test.go pins them to the patterns they replace.

// validSpec reports whether s matches ^agent-hooks/[0-9]+\.[0-9]+$.
func validSpec(s string) bool {
	const prefix = "agent-hooks/"
	if len(s) < len(prefix) || s[:len(prefix)] != prefix {
		return false
	}
	s = s[len(prefix):]
	major := digits(s)
	if major == 0 || major == len(s) || s[major] != '.' {
		return false
	}
	s = s[major+1:]
	minor := digits(s)
	return minor > 0 && minor == len(s)
}

// digits is the length of the leading run of ASCII digits of s.
func digits(s string) int {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

// validFramework reports whether s matches ^[a-z0-9_-]+$.
func validFramework(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
