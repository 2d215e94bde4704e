package interceptors

import (
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// fullwidth returns s with its printable ASCII in fullwidth forms.
func fullwidth(s string) string {
	return strings.Map(func(r rune) rune {
		if '!' <= r && r <= '~' {
			return r + 0xFF01 - '!'
		}
		return r
	}, s)
}

// interleave puts sep between the runes of s.
func interleave(s, sep string) string {
	return strings.Join(strings.Split(s, ""), sep)
}

const testKey = "sk-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"

// TestRegexDenySeesThroughDisguises runs the default policy's credential
// patterns over keys disguised the ways a reader does not notice.
func TestRegexDenySeesThroughDisguises(t *testing.T) {
	ic := build(t, "  - name: creds\n    type: regex\n    action: deny\n    patterns: ['sk-[A-Za-z0-9_-]{20,}', 'AKIA[0-9A-Z]{16}']\n")
	for name, s := range map[string]string{
		"plain":            "key " + testKey,
		"fullwidth":        "key " + fullwidth(testKey),
		"fullwidth prefix": "key ｓｋ－" + testKey[3:],
		"zero-width joins": "key " + interleave(testKey, "\u200d"),
		"soft hyphens":     "key " + interleave(testKey, "\u00ad"),
		"mixed":            "key ｓ\u200bk\u2060－" + interleave(testKey[3:], "\ufeff"),
		"tag characters":   "key " + interleave(testKey, "\U000E0041"),
		"aws fullwidth":    "id " + fullwidth("AKIAIOSFODNN7EXAMPLE"),
	} {
		if v := intercept(t, ic, at(enforcement.Output, s)); v.Decision != enforcement.DecisionDeny {
			t.Errorf("%s: %+q got %s, want deny", name, s, v.Decision)
		}
	}
	// What a reader sees as something else is not a key: a combining mark
	// changes the letter, a Cyrillic look-alike is another letter (NFKC
	// does not fold confusables).
	for _, s := range []string{"s\u0301k-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "ѕk-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"} {
		if v := intercept(t, ic, at(enforcement.Output, s)); v.Decision != enforcement.DecisionAllow {
			t.Errorf("%+q got %s, want allow", s, v.Decision)
		}
	}
}

// TestRegexRedactWritesBackToOriginal redacts disguised matches and checks
// that exactly the disguised bytes are replaced.
func TestRegexRedactWritesBackToOriginal(t *testing.T) {
	ic := build(t, "  - name: mail\n    type: regex\n    action: redact\n    patterns: ['[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}']\n    replacement: '[email]'\n")
	for _, tc := range []struct{ in, want string }{
		{"mail ann@example.com now", "mail [email] now"},
		{"ｍａｉｌ " + fullwidth("ann@example.com") + " ｎｏｗ", "ｍａｉｌ [email] ｎｏｗ"},
		{"日本語\u200b " + interleave("ann@example.com", "\u200d") + "\u200b 終わり", "日本語\u200b [email]\u200b 終わり"},
		{"a\u00adb " + interleave("ann@example.com", "\u00ad") + " c\u00add", "a\u00adb [email] c\u00add"},
	} {
		v := intercept(t, ic, at(enforcement.PreModelCall, []any{map[string]any{"role": "user", "content": tc.in}}))
		if v.Decision != enforcement.DecisionTransform {
			t.Fatalf("%+q: %s, want transform", tc.in, v.Decision)
		}
		got := v.Transform.Value.([]any)[0].(map[string]any)["content"]
		if got != tc.want {
			t.Errorf("%+q redacted to %+q, want %+q", tc.in, got, tc.want)
		}
	}
}

// TestRegexRedactMergesMatchesInOneSegment: two matches inside one
// ligature map to the same original bytes, which are replaced once.
func TestRegexRedactMergesMatchesInOneSegment(t *testing.T) {
	ic := build(t, "  - name: r\n    type: regex\n    action: redact\n    patterns: ['f', 'i']\n    replacement: '#'\n")
	if got := redacted(t, ic, "aﬁb"); got != "a#b" {
		t.Errorf("got %+q, want %+q", got, "a#b")
	}
}

// TestRedactSeesThroughDisguises runs the redact type's detectors on
// disguised secrets: replaced in place, and hashed as the plain secret.
func TestRedactSeesThroughDisguises(t *testing.T) {
	ic := redactOnly(t, "openai_key", "email", "aws_access_key_id")
	for _, tc := range []struct{ in, want string }{
		{"k=" + fullwidth(testKey) + " end", "k=[openai_key] end"},
		{"k=" + interleave(testKey, "\u200c") + "\u200c end", "k=[openai_key]\u200c end"},
		{"to " + fullwidth("bob@example.org"), "to [email]"},
		{"id ＡＫＩＡ" + interleave("IOSFODNN7EXAMPLE", "\u2060") + ".", "id [aws_access_key_id]."},
	} {
		if got := redacted(t, ic, tc.in); got != tc.want {
			t.Errorf("%+q redacted to %+q, want %+q", tc.in, got, tc.want)
		}
	}
	h := build(t, "  - name: r\n    type: redact\n    detectors: [openai_key]\n    replace: hash\n")
	if plain, disguised := redacted(t, h, testKey), redacted(t, h, interleave(fullwidth(testKey), "\u200d")); plain != disguised || plain == testKey {
		t.Errorf("hash of the plain key %+q differs from the disguised key's %+q", plain, disguised)
	}
}

// TestRedactOutsideTargetSeesThroughDisguises: a disguised secret in the
// tool declarations, beside the target, is denied as a plain one is.
func TestRedactOutsideTargetSeesThroughDisguises(t *testing.T) {
	ic := redactOnly(t, "openai_key")
	c := at(enforcement.PreModelCall, []any{})
	c["tools"] = []any{map[string]any{"name": "t", "description": "use " + interleave(fullwidth(testKey), "\u00ad")}}
	if v := intercept(t, ic, c); v.Decision != enforcement.DecisionDeny {
		t.Errorf("got %s, want deny", v.Decision)
	}
}
