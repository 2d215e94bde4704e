package wire

import "strings"

// The shapes of answer metadata. Metadata is never model text, so every
// surface holds it to a token shape of bounded length: a value outside
// its shape could carry text no verdict saw. They are checked by hand, not
// by regular expressions: every answer checks several (meta_test.go holds
// the expressions they are tested against).

// IsID reports whether s is shaped like a provider-issued identifier:
// ^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$.
func IsID(s string) bool {
	return len(s) >= 1 && len(s) <= 128 && isAlnum(s[0]) && allIn(s[1:], "._:-")
}

// IsModelName reports whether s is shaped like a model name:
// ^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$.
func IsModelName(s string) bool {
	return len(s) >= 1 && len(s) <= 128 && isAlnum(s[0]) && allIn(s[1:], "._:/@+-")
}

// IsFingerprint reports whether s is shaped like a system fingerprint:
// ^[A-Za-z0-9._:-]{0,64}$.
func IsFingerprint(s string) bool { return len(s) <= 64 && allIn(s, "._:-") }

// IsServiceTier reports whether s is shaped like a service tier:
// ^[a-z0-9_-]{1,32}$.
func IsServiceTier(s string) bool {
	if len(s) < 1 || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// isAlnum reports whether c is an ASCII letter or digit.
func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// allIn reports whether every byte of s is an ASCII letter, a digit or
// one of extra.
func allIn(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && strings.IndexByte(extra, c) < 0 {
			return false
		}
	}
	return true
}

// IsEnum reports whether s is shaped like an enum value:
// ^[a-z0-9][a-z0-9_-]{0,31}$.
func IsEnum(s string) bool { return len(s) >= 1 && s[0] != '_' && s[0] != '-' && IsServiceTier(s) }

// IsOpaqueToken reports whether s is a base64 token, standard or URL
// alphabet, padding anywhere: ^[A-Za-z0-9+/=_-]*$.
func IsOpaqueToken(s string) bool { return allIn(s, "+/=_-") }
