package interceptors

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

// Validators of the token and address detectors.

// standalone reports whether s[start:end] is not glued to a longer token:
// neither neighbour is one of chars.
func standalone(s string, start, end int, chars string) bool {
	if start > 0 && strings.IndexByte(chars, s[start-1]) >= 0 {
		return false
	}
	return end >= len(s) || strings.IndexByte(chars, s[end]) < 0
}

// acceptToken accepts standalone tokens whose text passes check (nil: any).
func acceptToken(chars string, check func(string) bool) func(string, int, int) int {
	return func(s string, start, end int) int {
		if !standalone(s, start, end, chars) || (check != nil && !check(s[start:end])) {
			return 0
		}
		return end - start
	}
}

// mixedRandom reports whether a token has both letters and digits, as
// generated secrets do and words joined by dashes do not.
func mixedRandom(tok string) bool {
	return strings.ContainsAny(tok, "0123456789") &&
		strings.ContainsAny(tok, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
}

// acceptOpenAI leaves sk-ant- keys to anthropic_key and asks more of the
// random part than mixedRandom: generated keys mix upper and lower case
// and digits, while slugs such as sk-learn-… names are lower case.
func acceptOpenAI(s string, start, end int) int {
	tok := s[start:end]
	if strings.HasPrefix(tok, "sk-ant-") || !standalone(s, start, end, tokenChars) {
		return 0
	}
	if !strings.ContainsAny(tok, "0123456789") || !strings.ContainsAny(tok, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") ||
		!strings.ContainsAny(tok[3:], "abcdefghijklmnopqrstuvwxyz") {
		return 0
	}
	return end - start
}

// acceptSlack wants a token of some length whose segments carry digits
// (team and user ids), unlike a kebab-case word after "xoxb-".
func acceptSlack(s string, start, end int) int {
	tok := s[start:end]
	if len(tok) < 20 || !strings.ContainsAny(tok, "0123456789") || !standalone(s, start, end, tokenChars) {
		return 0
	}
	return end - start
}

// acceptJWT decodes the header: it must be a JSON object naming an "alg".
// The payload must be base64url too.
func acceptJWT(s string, start, end int) int {
	if !standalone(s, start, end, tokenChars+".") {
		return 0
	}
	header, payload, _ := strings.Cut(s[start:end], ".")
	payload, _, _ = strings.Cut(payload, ".")
	h, err := base64.RawURLEncoding.DecodeString(header)
	if err != nil {
		return 0
	}
	var fields struct {
		Alg *string `json:"alg"`
	}
	if json.Unmarshal(h, &fields) != nil || fields.Alg == nil {
		return 0
	}
	if _, err := base64.RawURLEncoding.DecodeString(payload); err != nil {
		return 0
	}
	return end - start
}

// acceptPrivateKey extends a PEM header to the END line that matches it.
// A block cut short (a truncated answer, a pasted fragment) runs over its
// base64 body instead, up to a blank line or other text: half a key is
// still a secret.
func acceptPrivateKey(s string, start, end int) int {
	footer := "-----END " + s[start+len("-----BEGIN "):end]
	// A PEM body holds no dashes, so the footer can only be the next run
	// of five; searching no further keeps many headers linear.
	if k := strings.Index(s[end:], "-----"); k >= 0 && strings.HasPrefix(s[end+k:], footer) {
		return end + k + len(footer) - start
	}
	e := end
	for e < len(s) && (isBase64Byte(s[e]) || s[e] == ' ' || s[e] == '\t' || s[e] == '\r' ||
		(s[e] == '\n' && !strings.HasPrefix(strings.TrimLeft(s[e+1:], " \t\r"), "\n"))) {
		e++
	}
	return len(strings.TrimRight(s[start:e], " \t\r\n"))
}

func isBase64Byte(c byte) bool {
	return isDigit(c) || isUpper(c) || (c >= 'a' && c <= 'z') || c == '+' || c == '/' || c == '='
}

// acceptEmail rejects what only looks like an address: image names such as
// logo@2x.png, the user@host of a URL (https://token@host) or of an scp
// path (git@github.com:org/repo), and labels starting or ending with a dash.
func acceptEmail(s string, start, end int) int {
	if (start > 0 && isLocalByte(s[start-1])) || strings.HasSuffix(s[:start], "//") || (end+1 < len(s) && s[end] == ':' && s[end+1] != ' ') {
		return 0
	}
	addr := s[start:end]
	local, domain, _ := strings.Cut(addr, "@")
	if strings.HasPrefix(local, ".") || strings.HasSuffix(local, ".") || strings.Contains(local, "..") {
		return 0
	}
	for label := range strings.SplitSeq(domain, ".") {
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' || len(label) > 63 {
			return 0
		}
	}
	tld := strings.ToLower(domain[strings.LastIndexByte(domain, '.')+1:])
	switch tld {
	case "png", "jpg", "jpeg", "gif", "svg", "webp", "bmp", "ico", "pdf", "js", "css", "map":
		return 0
	}
	if end < len(s) && strings.IndexByte(tokenChars, s[end]) >= 0 {
		return 0
	}
	return end - start
}

// nextStripe finds the next "_live_" preceded by sk or rk.
func nextStripe(s string, from int) int {
	for from < len(s) {
		k := strings.Index(s[from:], "_live_")
		if k < 0 {
			return -1
		}
		k += from
		if k-2 >= from && (s[k-2] == 's' || s[k-2] == 'r') && s[k-1] == 'k' {
			return k - 2
		}
		from = k + 1
	}
	return -1
}

// emailLocalMax bounds the local part scanned back from an "@" (RFC 5321
// allows 64 octets); emailWindow bounds a whole address.
const (
	emailLocalMax = 64
	emailWindow   = emailLocalMax + 1 + 255
)

// nextEmail finds the next "@" and returns the start of the run of
// local-part characters before it.
func nextEmail(s string, from int) int {
	for from < len(s) {
		at := strings.IndexByte(s[from:], '@')
		if at < 0 {
			return -1
		}
		at += from
		start := at
		for start > 0 && at-start < emailLocalMax && isLocalByte(s[start-1]) {
			start--
		}
		// A run that began before from was tried already.
		if start < at && start >= from {
			return start
		}
		from = at + 1
	}
	return -1
}

func isLocalByte(c byte) bool {
	return isWordByte(c) || c == '.' || c == '%' || c == '+' || c == '-'
}
