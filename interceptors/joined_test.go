package interceptors

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// splitKey is a project key as a model writes it; no prefix of it up to
// the cuts the tests make is a key on its own (fewer than 20 characters
// after "sk-"), and no later piece starts with "sk-".
const splitKey = "sk-proj-Q2xR7vT9mK4pL8nZ3wY6bH1cF5dJ0sA2eG7uN4iO9qX"

// textPart, reasoningPart and refusalPart are parts of the normalized
// projection.
func textPart(s string) any      { return map[string]any{"type": "text", "text": s} }
func reasoningPart(s string) any { return map[string]any{"type": "reasoning", "text": s} }
func refusalPart(s string) any   { return map[string]any{"type": "refusal", "refusal": s} }
func imagePart() any {
	return map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,AAAA"}}
}

// userParts is a pre_model_call target of one user message with parts.
func userParts(parts ...any) []any {
	return []any{map[string]any{"role": "user", "content": parts}}
}

// answerParts is a post_model_call target whose content is parts.
func answerParts(parts ...any) map[string]any {
	return map[string]any{"content": parts, "tool_calls": []any{}, "finish_reason": "stop"}
}

// joinCase is one target and the decision a scan reaches on it.
type joinCase struct {
	name  string
	point enforcement.Point
	// target is a func so that every run gets a fresh tree.
	target func() any
	want   enforcement.Decision
}

// credentialJoinCases split a key over the places readers join, and over
// places no reader joins; the scan must deny the first and cannot see the
// second (documented limits).
func credentialJoinCases(key string) []joinCase {
	head, mid, tail := key[:12], key[12:30], key[30:]
	pre, post := enforcement.PreModelCall, enforcement.PostModelCall
	deny, allow := enforcement.DecisionDeny, enforcement.DecisionAllow
	return []joinCase{
		{"whole key in one part", post, func() any { return answerParts(textPart("key " + key)) }, deny},
		{"one harmless part", post, func() any { return answerParts(textPart("key " + head)) }, allow},
		{"answer split over two text parts", post, func() any { return answerParts(textPart("key "+head), textPart(mid+tail+" end")) }, deny},
		{"answer split over three text parts", post, func() any { return answerParts(textPart("key "+head), textPart(mid), textPart(tail)) }, deny},
		{"request split over two text parts", pre, func() any { return userParts(textPart("use "+head), textPart(mid+tail)) }, deny},
		{"request split over three text parts", pre, func() any { return userParts(textPart(head), textPart(mid), textPart(tail)) }, deny},
		// openai's output_text skips a reasoning item between two message
		// items; applications skip thinking blocks and images alike.
		{"text parts around a reasoning part", post, func() any {
			return answerParts(textPart(head), reasoningPart("thinking"), textPart(mid+tail))
		}, deny},
		{"text parts around an image", pre, func() any { return userParts(textPart(head), imagePart(), textPart(mid+tail)) }, deny},
		{"empty text parts between", post, func() any { return answerParts(textPart(head), textPart(""), textPart(mid+tail)) }, deny},
		{"split over reasoning parts", post, func() any { return answerParts(reasoningPart(head), reasoningPart(mid+tail), textPart("fine")) }, deny},
		{"split over refusal parts", post, func() any { return answerParts(refusalPart(head), refusalPart(mid+tail)) }, deny},
		{"disguised and split", post, func() any { return answerParts(textPart(fullwidth(head)), textPart(interleave(mid, "\u200b")+tail)) }, deny},
		// Not joined: no client shows these as one text.
		{"split between text and reasoning", post, func() any { return answerParts(textPart(head), reasoningPart(mid+tail)) }, allow},
		{"split between text and refusal", post, func() any { return answerParts(textPart(head), refusalPart(mid+tail)) }, allow},
		{"split between two messages", pre, func() any {
			return []any{
				map[string]any{"role": "user", "content": []any{textPart(head)}},
				map[string]any{"role": "user", "content": []any{textPart(mid + tail)}},
			}
		}, allow},
		{"split between two string contents", pre, func() any {
			return []any{map[string]any{"role": "user", "content": head}, map[string]any{"role": "user", "content": mid + tail}}
		}, allow},
		{"split between text and a tool argument", post, func() any {
			a := answerParts(textPart(head))
			a["tool_calls"] = []any{map[string]any{"id": "c1", "name": "send", "args": map[string]any{"k": mid + tail}}}
			return a
		}, allow},
		{"split between parts of another shape", post, func() any {
			return answerParts(map[string]any{"type": "note", "text": head}, map[string]any{"type": "note", "text": mid + tail})
		}, allow},
	}
}

// TestRegexDenyJoinsText: the default policy's credential patterns over a
// key split the ways readers join, and the ways they do not.
func TestRegexDenyJoinsText(t *testing.T) {
	ic := build(t, "  - name: creds\n    type: regex\n    action: deny\n    patterns: ['sk-[A-Za-z0-9_-]{20,}', 'AKIA[0-9A-Z]{16}']\n")
	for _, tc := range credentialJoinCases(splitKey) {
		if v := intercept(t, ic, at(tc.point, tc.target())); v.Decision != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, v.Decision, tc.want)
		}
	}
	// Each string is still matched alone: an anchored pattern holds for
	// a part even though the join runs past it.
	anchored := build(t, "  - name: a\n    type: regex\n    action: deny\n    patterns: ['^secret$']\n")
	if v := intercept(t, anchored, at(enforcement.PostModelCall, answerParts(textPart("secret"), textPart("more")))); v.Decision != enforcement.DecisionDeny {
		t.Errorf("anchored pattern in one part: %s, want deny", v.Decision)
	}
}

// TestRedactJoinsText: redact finds the same keys, and rewrites each
// part's share of a key split over parts.
func TestRedactJoinsText(t *testing.T) {
	ic := build(t, "  - name: scrub\n    type: redact\n")
	for _, tc := range credentialJoinCases(splitKey) {
		want := tc.want
		if want == enforcement.DecisionDeny {
			want = enforcement.DecisionTransform
		}
		if v := intercept(t, ic, at(tc.point, tc.target())); v.Decision != want {
			t.Errorf("%s: %s, want %s", tc.name, v.Decision, want)
		}
	}
}

// redactedParts runs ic over an answer made of parts and returns the
// parts' texts as the transform left them, checking that the context was
// not modified and that the verdict owns its value.
func redactedParts(t *testing.T, ic enforcement.Interceptor, parts ...any) ([]string, enforcement.Verdict) {
	t.Helper()
	target := answerParts(parts...)
	before := jsonOf(t, target)
	v := intercept(t, ic, at(enforcement.PostModelCall, target))
	if after := jsonOf(t, target); after != before {
		t.Fatalf("the context was modified: %s", after)
	}
	if v.Decision != enforcement.DecisionTransform {
		return nil, v
	}
	var out []string
	for _, p := range v.Transform.Value.(map[string]any)["content"].([]any) {
		m := p.(map[string]any)
		switch m["type"] {
		case "text", "reasoning":
			out = append(out, m["text"].(string))
		case "refusal":
			out = append(out, m["refusal"].(string))
		default:
			out = append(out, "<"+m["type"].(string)+">")
		}
	}
	scribble(v.Transform.Value)
	if after := jsonOf(t, target); after != before {
		t.Fatalf("the transform shares a container with the context: %s", after)
	}
	return out, v
}

// TestRedactSpansParts: the replacement goes into the part where the
// match starts and the rest of the match leaves the parts it ran on into;
// offsets hold around multi-byte characters and disguises, and a part the
// match does not reach is left as it is.
func TestRedactSpansParts(t *testing.T) {
	ic := build(t, `  - name: scrub
    type: redact
    custom:
      - {name: employee_id, pattern: 'EMP-[0-9]{6}'}
`)
	k := splitKey
	for _, tc := range []struct {
		name    string
		parts   []any
		want    []string
		message string
	}{
		{"two parts", []any{textPart("key: " + k[:12]), textPart(k[12:] + " ok")},
			[]string{"key: [openai_key]", " ok"}, "redacted 1 match (openai_key: 1) under policy scrub"},
		{"three parts, the middle one consumed", []any{textPart("key: " + k[:12]), textPart(k[12:30]), textPart(k[30:] + ".")},
			[]string{"key: [openai_key]", "", "."}, "redacted 1 match (openai_key: 1) under policy scrub"},
		{"starts at a part's start", []any{textPart("key: "), textPart(k[:12]), textPart(k[12:])},
			[]string{"key: ", "[openai_key]", ""}, "redacted 1 match (openai_key: 1) under policy scrub"},
		{"multi-byte text around the cut", []any{textPart("Grüße 🙂 EMP-12"), textPart("3456 ✓ für Ñandú")},
			[]string{"Grüße 🙂 [employee_id]", " ✓ für Ñandú"}, "redacted 1 match (employee_id: 1) under policy scrub"},
		{"multi-byte parts beside the match", []any{textPart("日本語 "), textPart("EMP-1"), textPart("23456"), textPart(" é")},
			[]string{"日本語 ", "[employee_id]", "", " é"}, "redacted 1 match (employee_id: 1) under policy scrub"},
		{"fullwidth prefix in one part", []any{textPart("key ｓｋ－proj-Q2x"), textPart(k[11:])},
			[]string{"key [openai_key]", ""}, "redacted 1 match (openai_key: 1) under policy scrub"},
		{"invisible characters at the cut", []any{textPart("id EMP-12\u200b"), textPart("\u2060" + "3456 here")},
			[]string{"id [employee_id]", " here"}, "redacted 1 match (employee_id: 1) under policy scrub"},
		{"a reasoning part between is kept", []any{textPart("key " + k[:12]), reasoningPart("considering"), textPart(k[12:])},
			[]string{"key [openai_key]", "considering", ""}, "redacted 1 match (openai_key: 1) under policy scrub"},
		{"matches inside parts and across", []any{textPart("a@example.com EMP-1"), textPart("23456 b@example.org")},
			[]string{"[email] [employee_id]", " [email]"}, "redacted 3 matches (email: 2, employee_id: 1) under policy scrub"},
		{"a whole match in one part of several", []any{textPart("mail ann@example.com"), textPart(" then stop")},
			[]string{"mail [email]", " then stop"}, "redacted 1 match (email: 1) under policy scrub"},
		{"one part", []any{textPart("key " + k + " end")},
			[]string{"key [openai_key] end"}, "redacted 1 match (openai_key: 1) under policy scrub"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, v := redactedParts(t, ic, tc.parts...)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("parts %q, want %q", got, tc.want)
			}
			if v.Message != tc.message {
				t.Errorf("message %q, want %q", v.Message, tc.message)
			}
		})
	}
	// Nothing split, nothing to redact: the same tree comes back.
	if v := intercept(t, ic, at(enforcement.PostModelCall, answerParts(textPart("all "), textPart("fine")))); !samePlain(v, enforcement.Allow()) {
		t.Errorf("nothing to redact: %+v", v)
	}
}

// TestRedactJoinModes: mask and hash quote the whole match as the join has
// it, so a split key hashes like the whole one.
func TestRedactJoinModes(t *testing.T) {
	k := splitKey
	hash := build(t, "  - {name: h, type: redact, detectors: [openai_key], replace: hash}\n")
	whole, _ := redactedParts(t, hash, textPart(k))
	split, _ := redactedParts(t, hash, textPart(k[:12]), textPart(k[12:]))
	if len(whole) != 1 || !reflect.DeepEqual(split, []string{whole[0], ""}) {
		t.Errorf("hash: split %q, whole %q", split, whole)
	}
	mask := build(t, "  - {name: m, type: redact, detectors: [openai_key], replace: mask}\n")
	if got, _ := redactedParts(t, mask, textPart(k[:12]), textPart(k[12:])); !reflect.DeepEqual(got, []string{"****" + k[len(k)-4:], ""}) {
		t.Errorf("mask: %q", got)
	}
}

// TestRegexRedactSpansParts: a regex redact rewrites split matches like
// redact, and still rewrites what only a part alone matches.
func TestRegexRedactSpansParts(t *testing.T) {
	ic := build(t, "  - name: r\n    type: regex\n    action: redact\n    patterns: ['sk-[A-Za-z0-9_-]{20,}', '^secret$']\n")
	for _, tc := range []struct {
		parts []any
		want  []string
	}{
		{[]any{textPart("é " + splitKey[:12]), textPart(splitKey[12:40]), textPart(splitKey[40:] + " ü")}, []string{"é [redacted]", "", " ü"}},
		{[]any{textPart("secret"), textPart("more")}, []string{"[redacted]", "more"}},
		{[]any{refusalPart(splitKey[:12]), refusalPart(splitKey[12:])}, []string{"[redacted]", ""}},
	} {
		got, v := redactedParts(t, ic, tc.parts...)
		if v.Decision != enforcement.DecisionTransform || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %s %q, want %q", tc.parts, v.Decision, got, tc.want)
		}
	}
}

// TestRedactScopeJoins: at pre_model_call a split match beside the target
// (here in model.params), where no transform reaches, denies.
func TestRedactScopeJoins(t *testing.T) {
	ic := build(t, "  - name: scrub\n    type: redact\n")
	c := at(enforcement.PreModelCall, userParts(textPart("hi")))
	c["model"] = map[string]any{"id": "m", "params": map[string]any{"prompt": map[string]any{
		"variables": []any{textPart(splitKey[:12]), textPart(splitKey[12:])},
	}}}
	v := intercept(t, ic, c)
	if v.Decision != enforcement.DecisionDeny || !strings.Contains(v.Message, "lies in model.params") {
		t.Errorf("%+v", v)
	}
	narrow := build(t, "  - name: scrub\n    type: redact\n    scope: target\n")
	if v := intercept(t, narrow, c); !samePlain(v, enforcement.Allow()) {
		t.Errorf("scope target: %+v", v)
	}
}

// TestEgressJoinsText: a URL split over parts is judged as the reader
// assembles it, for deny and rewrite.
func TestEgressJoinsText(t *testing.T) {
	deny := build(t, "  - {name: e, type: egress, deny_hosts: [evil.test, '*.evil.test']}\n")
	rewrite := build(t, "  - {name: e, type: egress, deny_hosts: [evil.test, '*.evil.test'], action: rewrite}\n")
	for _, tc := range []struct {
		name  string
		parts []any
		// want is the parts after a rewrite; nil when the URL is allowed.
		want []string
	}{
		{"host split", []any{textPart("see https://ev"), textPart("il.test/x now")}, []string{"see https://blocked.invalid/", " now"}},
		{"allowed host extended", []any{textPart("see https://ok.example"), textPart(".evil.test/")}, []string{"see https://blocked.invalid/", ""}},
		{"scheme split over three parts", []any{textPart("go htt"), textPart("ps:/"), textPart("/evil.test/ ✓")}, []string{"go https://blocked.invalid/", "", " ✓"}},
		{"split around a reasoning part", []any{textPart("https://ev"), reasoningPart("x"), textPart("il.test")}, []string{"https://blocked.invalid/", "x", ""}},
		{"allowed URL split", []any{textPart("see https://ok.example/do"), textPart("cs/page")}, nil},
		{"one part", []any{textPart("see https://evil.test/")}, []string{"see https://blocked.invalid/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := enforcement.DecisionDeny
			if tc.want == nil {
				want = enforcement.DecisionAllow
			}
			if v := intercept(t, deny, at(enforcement.PostModelCall, answerParts(tc.parts...))); v.Decision != want {
				t.Errorf("deny: %s, want %s", v.Decision, want)
			}
			got, v := redactedParts(t, rewrite, tc.parts...)
			if tc.want == nil {
				if !samePlain(v, enforcement.Allow()) {
					t.Errorf("rewrite: %+v, want allow", v)
				}
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("rewrite: %q, want %q", got, tc.want)
			}
		})
	}
	// Parts in two messages are not joined.
	two := []any{
		map[string]any{"role": "user", "content": []any{textPart("see https://ev")}},
		map[string]any{"role": "user", "content": []any{textPart("il.test/")}},
	}
	if v := intercept(t, deny, at(enforcement.PreModelCall, two)); v.Decision != enforcement.DecisionAllow {
		t.Errorf("two messages: %s, want allow", v.Decision)
	}
}

// TestJoinAllocations: an array with one text part (and parts of other
// kinds) costs no allocation to judge; several text parts cost the join.
func TestJoinAllocations(t *testing.T) {
	match := func(s string) bool { return strings.Contains(s, "never") }
	var one any = []any{textPart("some text"), reasoningPart("thought"), imagePart(), refusalPart("no")}
	if n := testing.AllocsPerRun(100, func() { anyText(one, match) }); n != 0 {
		t.Errorf("one text part: %v allocations, want 0", n)
	}
	var two any = []any{textPart("some "), textPart("text")}
	if n := testing.AllocsPerRun(100, func() { anyText(two, match) }); n != 1 {
		t.Errorf("two text parts: %v allocations, want 1 (the join)", n)
	}
	w := textRewriter{find: func(dst []edit, s string) []edit { return dst }}
	if n := testing.AllocsPerRun(100, func() { w.tree(one) }); n != 0 {
		t.Errorf("rewriting one text part: %v allocations, want 0", n)
	}
	// String contents, the common request: the walk looks for parts and
	// finds none.
	var msgs any = []any{map[string]any{"role": "system", "content": "be brief"}, map[string]any{"role": "user", "content": "some text"}}
	if n := testing.AllocsPerRun(100, func() { anyText(msgs, match) }); n != 0 {
		t.Errorf("string contents: %v allocations, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { w.tree(msgs) }); n != 0 {
		t.Errorf("rewriting string contents: %v allocations, want 0", n)
	}
}

// TestTextJoinIsResponseText: the text parts' join these types judge is
// the text a StreamMediator releases (enforcement.ResponseText): two
// definitions of one rule, which must not drift apart.
func TestTextJoinIsResponseText(t *testing.T) {
	for _, x := range [][]any{
		{},
		{textPart("a")},
		{textPart("a"), textPart(""), textPart("b")},
		{reasoningPart("r"), textPart("say"), imagePart(), refusalPart("no"), "junk", nil,
			map[string]any{"type": "text", "text": 3}, map[string]any{"type": "text"}, textPart(" more")},
	} {
		c, _ := countJoins(x)
		if got, want := joined(x, joinText, c.bytes[joinText]), enforcement.ResponseText(x); got != want {
			t.Errorf("join of %v = %q, ResponseText %q", x, got, want)
		}
	}
}

// TestSettle: edits from several searches are ordered and merged so that
// every byte any of them covers is replaced once, by the replacement of
// the one starting first (the longer where two start together).
func TestSettle(t *testing.T) {
	e := func(s, e int, r string) edit { return edit{start: s, end: e, repl: r} }
	for _, tc := range []struct{ in, want []edit }{
		{nil, []edit{}},
		{[]edit{e(0, 2, "a"), e(4, 6, "b")}, []edit{e(0, 2, "a"), e(4, 6, "b")}},
		{[]edit{e(4, 6, "b"), e(0, 2, "a")}, []edit{e(0, 2, "a"), e(4, 6, "b")}},
		{[]edit{e(2, 5, "part"), e(0, 9, "join")}, []edit{e(0, 9, "join")}},
		{[]edit{e(0, 3, "short"), e(0, 8, "long")}, []edit{e(0, 8, "long")}},
		{[]edit{e(0, 4, "a"), e(2, 7, "b"), e(7, 9, "c")}, []edit{e(0, 7, "a"), e(7, 9, "c")}},
		{[]edit{e(3, 3, "empty"), e(3, 5, "b")}, []edit{e(3, 5, "b")}},
	} {
		if got := settle(append([]edit(nil), tc.in...)); !reflect.DeepEqual(append([]edit{}, got...), tc.want) {
			t.Errorf("settle(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// A redactor's deny of what it cannot redact says so (policy:unredactable),
// not policy:redacted, the reason of the transform it could not make;
// a configured reason is kept.
func TestUnredactableReason(t *testing.T) {
	c := at(enforcement.PreModelCall, userParts(textPart("hi")))
	c["tools"] = []any{map[string]any{"name": "Bash", "description": "mail bob@example.com"}}
	for _, tc := range []struct{ spec, want string }{
		{"  - name: r\n    type: regex\n    action: redact\n    patterns: ['[a-z]+@example\\.com']\n", "policy:unredactable"},
		{"  - name: r\n    type: regex\n    action: redact\n    reason: policy:pii\n    patterns: ['[a-z]+@example\\.com']\n", "policy:pii"},
		{"  - name: r\n    type: redact\n    detectors: [email]\n", "policy:unredactable"},
	} {
		v := intercept(t, build(t, tc.spec), c)
		if v.Decision != enforcement.DecisionDeny || v.Reason != tc.want || !strings.Contains(v.Message, "lies in tools") {
			t.Errorf("%s: %+v, want a deny with reason %s", tc.spec, v, tc.want)
		}
	}
}
