package interceptors

import (
	"regexp"
	"strings"
)

// detector finds one kind of secret or personal data in a string.
type detector struct {
	name string
	// hints are literals of which every match contains at least one; a
	// string holding none of them is skipped without running re.
	hints []string
	// minDigits skips strings with fewer ASCII digits in total.
	minDigits int
	re        *regexp.Regexp
	// accept checks the candidate s[start:end] in its surroundings and
	// returns the length of the match it accepts from start: end-start,
	// less when only a prefix is valid, 0 to reject it. The expressions of
	// detectors with accept never use ^ or \b before the match: candidates
	// are searched from an offset, which hides the left context.
	accept func(s string, start, end int) int
	// next, when set, returns the first position at or after from where a
	// match may begin (-1 when none); re is then anchored and runs only
	// there, on at most window bytes. Expressions without a literal prefix
	// would otherwise run their automaton over every byte of ordinary text.
	next   func(s string, from int) int
	window int
}

// anchored compiles expr to match only at the start of its input.
func anchored(expr string) *regexp.Regexp { return regexp.MustCompile(`^(?:` + expr + `)`) }

// builtinDetectors returns the built-in detectors in the fixed order they
// run in; on an exact tie (same start and length) the earlier one names the
// match. A new table on every call: compiled once per interceptor build.
func builtinDetectors() []detector {
	return []detector{
		{
			// Legacy sk-<48>, and sk-proj-, sk-svcacct-, sk-admin- keys.
			name:   "openai_key",
			hints:  []string{"sk-"},
			re:     regexp.MustCompile(`sk-(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_-]{20,}`),
			accept: acceptOpenAI,
		},
		{
			name:   "anthropic_key",
			hints:  []string{"sk-ant-"},
			re:     regexp.MustCompile(`sk-ant-[a-z]{2,8}[0-9]{0,3}-[A-Za-z0-9_-]{20,}`),
			accept: acceptToken(tokenChars, mixedRandom),
		},
		{
			name:   "aws_access_key_id",
			hints:  []string{"AKIA", "ASIA"},
			re:     regexp.MustCompile(`(?:AKIA|ASIA)[A-Z0-9]{16}`),
			accept: acceptToken(alnumChars, nil),
		},
		{
			name:   "github_token",
			hints:  []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
			re:     regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255}`),
			accept: acceptToken(tokenChars, nil),
		},
		{
			name:   "slack_token",
			hints:  []string{"xox"},
			re:     regexp.MustCompile(`xox[abprs]-[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+`),
			accept: acceptSlack,
		},
		{
			name:   "stripe_key",
			hints:  []string{"_live_"},
			re:     anchored(`(?:sk|rk)_live_[A-Za-z0-9]{20,247}`),
			accept: acceptToken(tokenChars, nil),
			next:   nextStripe,
			window: 255,
		},
		{
			name:   "google_api_key",
			hints:  []string{"AIza"},
			re:     regexp.MustCompile(`AIza[0-9A-Za-z_-]{35}`),
			accept: acceptToken(tokenChars, nil),
		},
		{
			// The whole block, up to the END line matching its BEGIN line.
			name:   "private_key",
			hints:  []string{"PRIVATE KEY"},
			re:     anchored(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`),
			next:   nextIndex("-----BEGIN "),
			window: 64,
			accept: acceptPrivateKey,
		},
		{
			name:   "jwt",
			hints:  []string{"eyJ"},
			re:     regexp.MustCompile(`eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*`),
			accept: acceptJWT,
		},
		{
			name:   "email",
			hints:  []string{"@"},
			re:     anchored(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,63}`),
			accept: acceptEmail,
			next:   nextEmail,
			window: emailWindow,
		},
		{
			// International (+CC and groups), North American (NANP) and
			// trunk-prefixed national numbers, always with separators or a
			// leading +: bare digit runs are ids far more often than phones.
			name:      "phone",
			minDigits: 8,
			next:      where(phoneStart),
			window:    phoneWindow,
			re: anchored(
				`\+[1-9][0-9]{0,2}(?:[ .-]?(?:\([0-9]{1,4}\)|[0-9]{1,5})){1,6}` +
					`|(?:1[ .-])?(?:\([2-9][0-9]{2}\) ?|[2-9][0-9]{2}[ .-])[2-9][0-9]{2}[ .-][0-9]{4}` +
					`|0[1-9][0-9]{0,3}[ .-][0-9]{2,8}(?:[ .-][0-9]{2,4}){0,3}`),
			accept: acceptPhone,
		},
		{
			name:      "iban",
			minDigits: 4,
			re:        anchored(`[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){11,30}`),
			next:      where(ibanStart),
			window:    ibanWindow,
			accept:    acceptIBAN,
		},
		{
			// Contiguous, or in the groups cards are printed in (4-4-4-4,
			// 4-4-4-4-3, 4-6-5 and 4-6-4).
			name:      "credit_card",
			minDigits: 13,
			next:      where(cardStart),
			window:    cardWindow,
			re: anchored(`[0-9]{13,19}` +
				`|[0-9]{4}(?:[ -][0-9]{4}){2}[ -][0-9]{1,4}(?:[ -][0-9]{1,3})?` +
				`|[0-9]{4}[ -][0-9]{6}[ -][0-9]{4,5}`),
			accept: acceptCard,
		},
	}
}

// Character classes of the tokens around which a match must end.
const (
	alnumChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	tokenChars = alnumChars + "_-"
)

// nextIndex returns a next function finding the literal lit.
func nextIndex(lit string) func(string, int) int {
	return func(s string, from int) int {
		if k := strings.Index(s[from:], lit); k >= 0 {
			return from + k
		}
		return -1
	}
}

// where turns a predicate on positions into a next function.
func where(startsAt func(s string, i int) bool) func(string, int) int {
	return func(s string, from int) int {
		for i := from; i < len(s); i++ {
			if startsAt(s, i) {
				return i
			}
		}
		return -1
	}
}

func isWordByte(c byte) bool { return isDigit(c) || isUpper(c) || (c >= 'a' && c <= 'z') || c == '_' }

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
