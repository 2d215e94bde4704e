package interceptors

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// redactOnly builds a redact interceptor running the given detectors.
func redactOnly(t *testing.T, detectors ...string) enforcement.Interceptor {
	t.Helper()
	return build(t, "  - name: r\n    type: redact\n    detectors: ["+strings.Join(detectors, ", ")+"]\n")
}

// redacted runs ic over s at output and returns the rewritten string, or
// s itself when ic allowed it.
func redacted(t *testing.T, ic enforcement.Interceptor, s string) string {
	t.Helper()
	v := intercept(t, ic, at(enforcement.Output, s))
	switch v.Decision {
	case enforcement.DecisionAllow:
		return s
	case enforcement.DecisionTransform:
		return v.Transform.Value.(string)
	}
	t.Fatalf("verdict %+v", v)
	return ""
}

// TestRedactDetectorEdges checks each detector alone on the shapes around
// its edges: what it must take whole, and look-alikes it must leave.
func TestRedactDetectorEdges(t *testing.T) {
	for _, tc := range []struct {
		detector string
		in, want string
	}{
		{"openai_key", "k=sk-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "k=[openai_key]"},
		{"openai_key", "glued xsk-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "glued xsk-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"},
		{"openai_key", "sk-ant-api03-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "sk-ant-api03-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"},
		{"anthropic_key", "sk-ant-api03-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z-_x", "[anthropic_key]"},
		{"aws_access_key_id", "AKIAIOSFODNN7EXAMPLE.", "[aws_access_key_id]."},
		{"aws_access_key_id", "AKIAIOSFODNN7EXAMPLEX is 17 long", "AKIAIOSFODNN7EXAMPLEX is 17 long"},
		{"github_token", "ghs_" + strings.Repeat("a1B2", 9), "[github_token]"},
		{"github_token", "ghx_" + strings.Repeat("a1B2", 9), "ghx_" + strings.Repeat("a1B2", 9)},
		{"slack_token", "xoxb-123456789012-abcdefghijk", "[slack_token]"},
		{"slack_token", "xoxb-some-kebab-case-words-here", "xoxb-some-kebab-case-words-here"},
		{"stripe_key", "sk_live_" + strings.Repeat("x", 24), "[stripe_key]"},
		{"stripe_key", "sk_test_" + strings.Repeat("x", 24), "sk_test_" + strings.Repeat("x", 24)},
		{"google_api_key", "AIza" + strings.Repeat("B", 35) + ";", "[google_api_key];"},
		{"google_api_key", "AIza" + strings.Repeat("B", 36), "AIza" + strings.Repeat("B", 36)},
		{"private_key", "a\n-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\nb", "a\n[private_key]\nb"},
		{"private_key", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----"},
		{"private_key", "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17\n\nMIIE\n-----END RSA PRIVATE KEY-----!", "[private_key]!"},
		{"private_key", "cut: -----BEGIN RSA PRIVATE KEY----- MIIE/a+b=\nQUJD\n\nThat was the key.", "cut: [private_key]\n\nThat was the key."},
		{"private_key", "-----BEGIN PRIVATE KEY-----...", "[private_key]..."},
		{"jwt", jwtOf(`{"alg":"none"}`, `{"sub":"1"}`) + ".", "[jwt]"},
		{"jwt", jwtOf(`{"typ":"JWT"}`, `{"sub":"1"}`) + ".c2ln", jwtOf(`{"typ":"JWT"}`, `{"sub":"1"}`) + ".c2ln"},
		{"jwt", jwtOf(`{"alg":"HS256"`, `{"sub":"1"}`) + ".c2ln", jwtOf(`{"alg":"HS256"`, `{"sub":"1"}`) + ".c2ln"},
		{"email", "(a_b@c-d.io)", "([email])"},
		{"email", "a@-bad.com a@b..com a@b.c", "a@-bad.com a@b..com a@b.c"},
		{"email", "https://user@example.com/ and logo@2x.png", "https://user@example.com/ and logo@2x.png"},
		{"email", "x" + strings.Repeat("a", 70) + "@example.com", "x" + strings.Repeat("a", 70) + "@example.com"},
		{"phone", "+1 415 555 0132, +44 (0) 20 7946 0958", "[phone], [phone]"},
		{"phone", "12345678901 and 4155550132", "12345678901 and 4155550132"},
		{"phone", "123-456-7890 (area code 1xx is invalid)", "123-456-7890 (area code 1xx is invalid)"},
		{"phone", "415-555-0132-7781", "415-555-0132-7781"},
		{"iban", "DE89370400440532013000 and GB29 NWBK 6016 1331 9268 19", "[iban] and [iban]"},
		{"iban", "DE89 3704 0044 0532 0130 00 GB29NWBK60161331926819", "[iban] [iban]"},
		{"iban", "DE88370400440532013000 (check digits off by one)", "DE88370400440532013000 (check digits off by one)"},
		{"iban", "DE8937040044053201300 (one digit short)", "DE8937040044053201300 (one digit short)"},
		{"iban", "DE89370400440532013000X", "DE89370400440532013000X"},
		{"credit_card", "4111-1111-1111-1111", "[credit_card]"},
		{"credit_card", "4111 1111 1111 1111 2029", "[credit_card] 2029"},
		{"credit_card", "4111 1111 1111 1112", "4111 1111 1111 1112"},
		{"credit_card", "4111111111111111111111", "4111111111111111111111"},
		{"credit_card", "9111111111111113 passes Luhn, no issuer", "9111111111111113 passes Luhn, no issuer"},
		{"credit_card", "378282246310005 is Amex, 15 digits; 4222222222222 is Visa 13", "[credit_card] is Amex, 15 digits; [credit_card] is Visa 13"},
	} {
		if got := redacted(t, redactOnly(t, tc.detector), tc.in); got != tc.want {
			t.Errorf("%s on %q:\n got %q\nwant %q", tc.detector, tc.in, got, tc.want)
		}
	}
}

// jwtOf encodes a header and payload as the first two JWT segments.
func jwtOf(header, payload string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(header)) + "." + enc([]byte(payload))
}

func TestChecksums(t *testing.T) {
	for d, want := range map[string]bool{
		"4111111111111111": true, "4111111111111112": false,
		"79927398713": true, "79927398710": false, "0": true,
	} {
		if luhn(d) != want {
			t.Errorf("luhn(%s) = %v", d, !want)
		}
	}
	for iban, want := range map[string]bool{
		"GB82WEST12345698765432": true, "GB82WEST12345698765431": false,
		"GB28WEST12345698765432": false, "NO9386011117947": true,
		"LC55HEMM000100010012001200023015": true, "DE89370400440532013000": true,
		"DE89370400440532013001": false, "DE8937040044053201300!": false,
	} {
		if mod97([]byte(iban)) != want {
			t.Errorf("mod97(%s) = %v", iban, !want)
		}
	}
	if ibanLength("DE") != 22 || ibanLength("NO") != 15 || ibanLength("XX") != 0 || ibanLength("4 ") != 0 {
		t.Errorf("ibanLength: DE %d NO %d XX %d", ibanLength("DE"), ibanLength("NO"), ibanLength("XX"))
	}
}

// TestRedactTarget redacts a messages array: every string value and object
// key, nothing else, in a copy.
func TestRedactTarget(t *testing.T) {
	ic := build(t, "  - name: scrub\n    type: redact\n")
	messages := []any{
		map[string]any{"role": "system", "content": "Be brief."},
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "Mail ann@example.com, card 4111 1111 1111 1111."},
			map[string]any{"type": "meta", "n": json.Number("4111111111111111"), "ok": true, "none": nil},
		}},
		map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
			"id": "c1", "name": "lookup",
			"args": map[string]any{"bob@example.org": "bob@example.org", "list": []any{"x", "+44 20 7946 0958"}},
		}}},
	}
	before, _ := json.Marshal(messages)
	v := intercept(t, ic, at(enforcement.PreModelCall, messages))
	if v.Decision != enforcement.DecisionTransform || v.Transform.Path != "$target" || v.Reason != "policy:redacted" {
		t.Fatalf("verdict = %+v", v)
	}
	got, _ := json.Marshal(v.Transform.Value)
	want := strings.NewReplacer("ann@example.com", "[email]", "4111 1111 1111 1111", "[credit_card]",
		`"bob@example.org":"bob@example.org"`, `"[email]":"[email]"`, "+44 20 7946 0958", "[phone]").Replace(string(before))
	if string(got) != want {
		t.Errorf("transform value =\n%s\nwant\n%s", got, want)
	}
	if after, _ := json.Marshal(messages); string(after) != string(before) {
		t.Errorf("the context was modified in place: %s", after)
	}
	if n := v.Transform.Value.([]any)[1].(map[string]any)["content"].([]any)[1].(map[string]any)["n"]; n != json.Number("4111111111111111") {
		t.Errorf("number = %#v, want the json.Number untouched", n)
	}
	// The unchanged system message is a copy too: the verdict owns its value.
	v.Transform.Value.([]any)[0].(map[string]any)["content"] = "changed"
	if messages[0].(map[string]any)["content"] != "Be brief." {
		t.Errorf("the transform value shares an unchanged message with the context")
	}
	// Counts per detector, never the text.
	if want := "redacted 5 matches (email: 3, phone: 1, credit_card: 1) under policy scrub"; v.Message != want {
		t.Errorf("message %q, want %q", v.Message, want)
	}

	if v := intercept(t, ic, at(enforcement.PreModelCall, messages[:1])); !samePlain(v, enforcement.Allow()) {
		t.Errorf("nothing to redact: %+v", v)
	}
	for _, p := range []enforcement.Point{enforcement.AgentStartup, enforcement.AgentShutdown} {
		if v := intercept(t, ic, at(p, "ann@example.com")); !samePlain(v, enforcement.Allow()) {
			t.Errorf("%s: %+v, want allow (transforms are forbidden there)", p, v)
		}
	}
	reg, err := Build(specsOf(t, "  - name: r\n    type: redact\n    points: [output]\n")[0], Env{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Interceptor.(enforcement.NonBlocking); !ok {
		t.Errorf("redact behind a points filter is not NonBlocking")
	}
}

// TestRedactOverlaps checks the resolution order: leftmost, then longest,
// then the detector that runs first (built-ins before custom ones).
func TestRedactOverlaps(t *testing.T) {
	ic := build(t, `  - name: r
    type: redact
    custom:
      - {name: same_as_email, pattern: '[a-z]+@example\.com'}
      - {name: labelled, pattern: 'to: [a-z]+@example\.com'}
      - {name: digits, pattern: '[0-9]{4}'}
`)
	for in, want := range map[string]string{
		// The e-mail starts before the phone number inside it.
		"write jane+14155550132@example.com": "write [email]",
		// Same span: the built-in e-mail detector runs first.
		"mail bob@example.com": "mail [email]",
		// Starts earlier: the custom detector wins.
		"mail to: bob@example.com": "mail [labelled]",
		// Same start, longer: the card wins over the custom digits.
		"4111 1111 1111 1111 and 2029": "[credit_card] and [digits]",
	} {
		if got := redacted(t, ic, in); got != want {
			t.Errorf("%q:\n got %q\nwant %q", in, got, want)
		}
	}
}

func TestRedactReplaceModes(t *testing.T) {
	const text = "card 4111 1111 1111 1111, mail ann@example.com, id EMP-123456, ok"
	custom := "    custom:\n      - {name: employee_id, pattern: 'EMP-[0-9]{6}'}\n"
	cases := map[string]string{
		"": "card [credit_card], mail [email], id [employee_id], ok",
		"    placeholder: '<{detector} removed>'\n": "card <credit_card removed>, mail <email removed>, id <employee_id removed>, ok",
		"    placeholder: ''\n":                     "card , mail , id , ok",
		"    replace: mask\n":                       "card ****1111, mail ****.com, id ****3456, ok",
	}
	for opts, want := range cases {
		ic := build(t, "  - name: r\n    type: redact\n"+opts+custom)
		if got := redacted(t, ic, text); got != want {
			t.Errorf("%q:\n got %q\nwant %q", opts, got, want)
		}
	}
	// Mask hides short matches whole: keeping 4 would reveal too much.
	ic := build(t, "  - name: r\n    type: redact\n    replace: mask\n    custom:\n      - {name: pin, pattern: 'PIN[0-9]{4}'}\n")
	if got := redacted(t, ic, "PIN1234"); got != "****" {
		t.Errorf("mask of a short match = %q", got)
	}

	// Hash: [detector:first 12 hex of SHA-256], equal inputs equal outputs.
	ic = build(t, "  - name: r\n    type: redact\n    replace: hash\n")
	sum := sha256.Sum256([]byte("ann@example.com"))
	want := "to [email:" + hex.EncodeToString(sum[:])[:12] + "] and [email:" + hex.EncodeToString(sum[:])[:12] + "]"
	if got := redacted(t, ic, "to ann@example.com and ann@example.com"); got != want {
		t.Errorf("hash:\n got %q\nwant %q", got, want)
	}
	again := build(t, "  - name: r\n    type: redact\n    replace: hash\n")
	if a, b := redacted(t, ic, "bob@example.org"), redacted(t, again, "bob@example.org"); a != b || a == want {
		t.Errorf("hash is not a deterministic function of the match: %q, %q", a, b)
	}

	t.Setenv("REDACT_TEST_KEY", "k3y")
	ic = build(t, "  - name: r\n    type: redact\n    replace: hash\n    hash_key_env: REDACT_TEST_KEY\n")
	m := hmac.New(sha256.New, []byte("k3y"))
	m.Write([]byte("ann@example.com"))
	if got, want := redacted(t, ic, "ann@example.com"), "[email:"+hex.EncodeToString(m.Sum(nil))[:12]+"]"; got != want {
		t.Errorf("keyed hash = %q, want %q", got, want)
	}
}

func TestRedactProblems(t *testing.T) {
	t.Setenv("REDACT_EMPTY_KEY", "")
	got := buildProblems(t, `  - name: a
    type: redact
    detectors: [email, e_mail, jwt, email]
    replace: scramble
  - name: b
    type: redact
    detectors: []
  - name: c
    type: redact
    points: [output, agent_startup]
    placeholder: '[{name}]'
    reason: host_error:x
    custom:
      - {name: Employee, pattern: 'EMP-[0-9]+'}
      - {name: email, pattern: 'x('}
      - {name: blank, pattern: 'x*'}
      - {pattern: 'y'}
      - {name: two, pattern: 'a'}
      - {name: two, pattern: ''}
  - name: d
    type: redact
    replace: mask
    placeholder: x
    hash_key_env: REDACT_EMPTY_KEY
  - name: e
    type: redact
    replace: hash
    hash_key_env: REDACT_EMPTY_KEY
    replacement: x
`)
	names := "openai_key, anthropic_key, aws_access_key_id, github_token, slack_token, stripe_key, google_api_key, private_key, jwt, email, phone, iban, credit_card"
	want := []string{
		`policy.yaml:6: interceptors[0].detectors[1]: unknown detector "e_mail" (one of ` + names + `)`,
		`policy.yaml:6: interceptors[0].detectors[3]: detector "email" is listed twice`,
		`policy.yaml:7: interceptors[0].replace: must be placeholder, mask or hash (got "scramble")`,
		`policy.yaml:10: interceptors[1].detectors: is empty and there are no custom detectors: nothing to redact`,
		`policy.yaml:13: interceptors[2].points[1]: redact cannot run at agent_startup: the spec forbids transforms there`,
		`policy.yaml:14: interceptors[2].placeholder: may only use the field {detector} (got "[{name}]")`,
		`policy.yaml:15: interceptors[2].reason: must not use the reserved host_error: prefix (got "host_error:x")`,
		`policy.yaml:17: interceptors[2].custom[0].name: must be lower case letters, digits and _, starting with a letter (got "Employee")`,
		`policy.yaml:18: interceptors[2].custom[1].name: "email" is a built-in detector`,
		"policy.yaml:18: interceptors[2].custom[1].pattern: invalid RE2 pattern: error parsing regexp: missing closing ): `x(`",
		`policy.yaml:19: interceptors[2].custom[2].pattern: matches the empty string, so it would match every value`,
		`policy.yaml:20: interceptors[2].custom[3].name: is required`,
		`policy.yaml:22: interceptors[2].custom[5].name: detector "two" is defined twice`,
		`policy.yaml:22: interceptors[2].custom[5].pattern: is required`,
		`policy.yaml:26: interceptors[3].placeholder: is only used with replace: placeholder`,
		`policy.yaml:27: interceptors[3].hash_key_env: is only used with replace: hash`,
		`policy.yaml:32: interceptors[4].replacement: unknown key (expected one of custom, detectors, hash_key_env, placeholder, reason, replace, scope)`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	// An unknown key stops the type's own checks; alone, the empty key
	// variable is reported without its value.
	got = buildProblems(t, "  - name: e\n    type: redact\n    replace: hash\n    hash_key_env: REDACT_EMPTY_KEY\n")
	want = []string{"policy.yaml:7: interceptors[0].hash_key_env: environment variable REDACT_EMPTY_KEY is not set or empty"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems = %q, want %q", got, want)
	}
}

// TestRedactMessageIsPayloadFree checks that no verdict text quotes a match.
func TestRedactMessageIsPayloadFree(t *testing.T) {
	ic := build(t, "  - name: r\n    type: redact\n    custom:\n      - {name: code, pattern: 'X-[0-9]{3}'}\n")
	secrets := []string{"ann@example.com", "4111 1111 1111 1111", "AKIAIOSFODNN7EXAMPLE", "X-123"}
	v := intercept(t, ic, at(enforcement.Output, strings.Join(secrets, " | ")))
	if v.Decision != enforcement.DecisionTransform {
		t.Fatalf("verdict %+v", v)
	}
	out := v.Transform.Value.(string)
	for _, s := range secrets {
		if strings.Contains(v.Message, s) || strings.Contains(v.Reason, s) || strings.Contains(out, s) {
			t.Errorf("%q leaked: message %q, value %q", s, v.Message, out)
		}
	}
	if !regexp.MustCompile(`^redacted 4 matches \(.*\) under policy r$`).MatchString(v.Message) {
		t.Errorf("message %q", v.Message)
	}
}

// TestRedactAdversarialInputs feeds inputs built to make a careless
// scanner quadratic (every position a candidate that runs to the end).
// There is no timing assertion: a quadratic scan of these 256 KiB strings
// takes minutes and runs into the test binary's timeout.
func TestRedactAdversarialInputs(t *testing.T) {
	ic := build(t, "  - name: r\n    type: redact\n")
	const size = 256 << 10
	for name, in := range map[string]string{
		"parentheses":    strings.Repeat("(", size),
		"plus and space": strings.Repeat("+ ", size/2),
		"pem headers":    strings.Repeat("-----BEGIN RSA PRIVATE KEY-----x ", size/33),
		"at signs":       strings.Repeat("a@", size/2),
		"local part":     strings.Repeat("a.", size/2) + "@example.com",
		"digit groups":   strings.Repeat("4111 ", size/5),
		"key prefixes":   strings.Repeat("sk-", size/3),
		"jwt prefixes":   strings.Repeat("eyJhbGci.", size/9),
		"iban prefixes":  strings.Repeat("DE89 ", size/5),
	} {
		v := intercept(t, ic, at(enforcement.Output, in))
		if name == "pem headers" && v.Decision != enforcement.DecisionTransform {
			t.Errorf("%s: %+v, want every header redacted", name, v.Decision)
		}
	}
}

// TestRedactCustomOnly: detectors: [] turns the built-in ones off, so only
// the custom detectors run.
func TestRedactCustomOnly(t *testing.T) {
	ic := build(t, `  - name: r
    type: redact
    detectors: []
    custom:
      - {name: employee_id, pattern: '\bEMP-[0-9]{6}\b'}
`)
	in := "EMP-123456 mailed ann@example.com; XEMP-1234567 is not an id"
	if got, want := redacted(t, ic, in), "[employee_id] mailed ann@example.com; XEMP-1234567 is not an id"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
