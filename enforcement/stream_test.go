package enforcement

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// testJudge emits a mediator's post_model_calls through a real emitter.
type testJudge struct {
	t *testing.T
	e *Emitter
	b *Builder
}

func (j *testJudge) fields(response map[string]any) map[string]any {
	return map[string]any{"model": map[string]any{"id": "m"}, "response": response}
}

func (j *testJudge) Judge(ctx context.Context, response map[string]any, check TargetValidator) (*Outcome, error) {
	c, err := j.b.Build(ctx, PostModelCall, j.fields(response))
	if err != nil {
		j.t.Fatalf("Build: %v", err)
	}
	return j.e.EmitUnchecked(ctx, c, WithTargetValidator(check))
}

func (j *testJudge) Refuse(ctx context.Context, response map[string]any, reason, message string) (*Outcome, error) {
	c, err := j.b.Build(ctx, PostModelCall, j.fields(response))
	if err != nil {
		j.t.Fatalf("Build: %v", err)
	}
	return j.e.Refuse(ctx, c, reason, message), nil
}

// mediator returns a mediator whose post_model_calls run policy, and the
// emitter keeping their records.
func mediator(t *testing.T, mode Mode, maxSegments int, policy func(content string) Verdict) (*StreamMediator, *Emitter) {
	t.Helper()
	e := newTestEmitter(t, Options{
		Mode:         mode,
		RecordBuffer: 64,
		Interceptors: []Registration{reg("policy", func(_ context.Context, c Context) (Verdict, error) {
			r, _ := c["response"].(map[string]any)
			return policy(ResponseText(r["content"])), nil
		})},
	})
	return NewStreamMediator(&testJudge{t: t, e: e, b: newTestBuilder()}, maxSegments), e
}

func final(content string) map[string]any {
	return map[string]any{"content": content, "tool_calls": []any{}, "finish_reason": "stop"}
}

// denySecret denies any content containing SECRET.
func denySecret(s string) Verdict {
	if strings.Contains(s, "SECRET") {
		return Deny("test:secret", "")
	}
	return Allow()
}

// redactSecret rewrites SECRET to [x].
func redactSecret(s string) Verdict {
	if strings.Contains(s, "SECRET") {
		return TransformTo("$target", final(strings.ReplaceAll(s, "SECRET", "[x]")))
	}
	return Allow()
}

func segment(t *testing.T, m *StreamMediator, prefix string) string {
	t.Helper()
	out, err := m.Segment(context.Background(), prefix)
	if err != nil {
		t.Fatalf("Segment(%q): %v", prefix, err)
	}
	return out
}

func recordSummary(recs []*Record) []string {
	var out []string
	for _, r := range recs {
		s := string(r.Verdict.Decision)
		if r.Verdict.Reason != "" {
			s += " " + r.Verdict.Reason
		}
		out = append(out, s)
	}
	return out
}

func TestStreamMediatorReleasesEachPermittedPrefix(t *testing.T) {
	m, e := mediator(t, Enforce, 0, denySecret)
	var got strings.Builder
	for _, p := range []string{"the quick ", "the quick brown ", "the quick brown fox"} {
		got.WriteString(segment(t, m, p))
	}
	// "fox" may be the start of a longer token: held back until Final.
	if got.String() != "the quick brown " || m.Released() != "the quick brown " {
		t.Fatalf("released %q, Released() %q", got.String(), m.Released())
	}
	out, rest, err := m.Final(context.Background(), final("the quick brown fox!"))
	if err != nil || rest != "fox!" || out.Verdict.Decision != DecisionAllow {
		t.Fatalf("Final = %v, %q, %v; want allow, \"fox!\"", out, rest, err)
	}
	recs := e.TakeRecords()
	if len(recs) != 4 || m.Segments() != 3 {
		t.Fatalf("%d records, %d segments; want 4 and 3", len(recs), m.Segments())
	}
}

func TestStreamMediatorHoldsBackAnUnfinishedToken(t *testing.T) {
	m, e := mediator(t, Enforce, 0, func(s string) Verdict {
		if strings.Contains(s, "sk-abcdefgh") {
			return Deny("test:credential", "")
		}
		return Allow()
	})
	if got := segment(t, m, "your key: sk-abc"); got != "your key: " {
		t.Fatalf("released %q; a token still streaming must be held back whole", got)
	}
	if _, err := m.Segment(context.Background(), "your key: sk-abcdefgh and"); err == nil {
		t.Fatal("the completed credential was not denied")
	}
	if m.Released() != "your key: " {
		t.Fatalf("Released() = %q: part of the credential escaped", m.Released())
	}
	if n := len(e.TakeRecords()); n != 2 {
		t.Fatalf("%d records", n)
	}
	long := strings.Repeat("x", MaxHoldBack+10)
	m2, _ := mediator(t, Enforce, 0, denySecret)
	if got := segment(t, m2, long); len(got) != 10 {
		t.Fatalf("a run without boundaries released %d bytes, want all but %d", len(got), MaxHoldBack)
	}
	for _, tc := range []struct{ in, want string }{
		{"mail me: a.b@c.de", "mail me: "},
		{"done. next", "done. "},
		{"你好。世界", "你好。"},
		{"path /usr/lo", "path "},
		{"é", ""},
	} {
		if got := tc.in[:releasableEnd(tc.in)]; got != tc.want {
			t.Errorf("releasable part of %q = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestStreamMediatorDenyWithholdsTheRest(t *testing.T) {
	m, e := mediator(t, Enforce, 0, denySecret)
	if got := segment(t, m, "public, "); got != "public, " {
		t.Fatalf("first segment released %q", got)
	}
	_, err := m.Segment(context.Background(), "public, SECRET")
	var blocked *BlockedError
	if !errors.As(err, &blocked) || blocked.Outcome.Verdict.Reason != "test:secret" {
		t.Fatalf("deny segment: err = %v, want *BlockedError test:secret", err)
	}
	if _, err := m.Segment(context.Background(), "public, SECRET and more"); err == nil {
		t.Fatal("a segment after a deny was accepted")
	}
	if _, _, err := m.Final(context.Background(), final("public, SECRET and more")); err == nil {
		t.Fatal("Final after a deny was accepted")
	}
	if out, err := m.Cut(context.Background(), "public, SECRET and more", "cut"); out != nil || err != nil {
		t.Fatalf("Cut after a deny = %v, %v; want nothing recorded", out, err)
	}
	if m.Released() != "public, " {
		t.Fatalf("Released() = %q", m.Released())
	}
	if got := recordSummary(e.TakeRecords()); strings.Join(got, "|") != "allow|deny test:secret" {
		t.Fatalf("records %v", got)
	}
}

func TestStreamMediatorTransformBeforeReleaseBuffersTheRest(t *testing.T) {
	m, _ := mediator(t, Enforce, 0, redactSecret)
	if got := segment(t, m, "SECRET is "); got != "" || !m.Buffering() {
		t.Fatalf("transformed segment released %q, buffering %v", got, m.Buffering())
	}
	if got := segment(t, m, "SECRET is here"); got != "" {
		t.Fatalf("a buffered segment released %q", got)
	}
	out, rest, err := m.Final(context.Background(), final("SECRET is here"))
	if err != nil || rest != "[x] is here" || out.Verdict.Decision != DecisionTransform {
		t.Fatalf("Final = %v, %q, %v; want the whole transformed content", out, rest, err)
	}
}

func TestStreamMediatorTransformAfterRelease(t *testing.T) {
	t.Run("keeping released text releases the verdicted rest", func(t *testing.T) {
		m, _ := mediator(t, Enforce, 0, redactSecret)
		segment(t, m, "fine. ")
		if got := segment(t, m, "fine. SECRET"); got != "" || !m.Buffering() {
			t.Fatalf("released %q, buffering %v", got, m.Buffering())
		}
		_, rest, err := m.Final(context.Background(), final("fine. SECRET!"))
		if err != nil || rest != "[x]!" {
			t.Fatalf("Final rest %q, err %v", rest, err)
		}
	})
	t.Run("rewriting released text fails closed", func(t *testing.T) {
		m, e := mediator(t, Enforce, 0, func(s string) Verdict {
			if strings.HasSuffix(s, "!") {
				return TransformTo("$target", final("rewritten"))
			}
			return Allow()
		})
		segment(t, m, "fine. ")
		_, _, err := m.Final(context.Background(), final("fine. done!"))
		var blocked *BlockedError
		if !errors.As(err, &blocked) || blocked.Outcome.Verdict.Reason != ReasonStreamingUnsupported {
			t.Fatalf("err = %v, want a streaming_unsupported deny", err)
		}
		recs := e.TakeRecords()
		if got := recordSummary(recs); got[len(got)-1] != "deny "+ReasonStreamingUnsupported {
			t.Fatalf("records %v", got)
		}
		if m.Released() != "fine. " {
			t.Fatalf("Released() = %q", m.Released())
		}
	})
}

func TestStreamMediatorEvaluateOnlyNeverGates(t *testing.T) {
	m, e := mediator(t, EvaluateOnly, 0, denySecret)
	segment(t, m, "a ")
	if got := segment(t, m, "a SECRET "); got != "SECRET " {
		t.Fatalf("evaluate_only segment released %q, want \"SECRET \"", got)
	}
	_, rest, err := m.Final(context.Background(), final("a SECRET ."))
	if err != nil || rest != "." {
		t.Fatalf("Final rest %q, err %v", rest, err)
	}
	for _, r := range e.TakeRecords() {
		if r.Mode != EvaluateOnly {
			t.Fatalf("record mode %q, want evaluate_only", r.Mode)
		}
	}
}

func TestStreamMediatorCut(t *testing.T) {
	t.Run("residue is refused", func(t *testing.T) {
		m, e := mediator(t, Enforce, 0, denySecret)
		segment(t, m, "clean, ")
		out, err := m.Cut(context.Background(), "clean, partial", "the stream was cut")
		if err != nil || out == nil || out.Proceed || out.Verdict.Reason != ReasonStreamingUnsupported {
			t.Fatalf("Cut = %+v, %v; want a streaming_unsupported deny", out, err)
		}
		r, _ := out.Context["response"].(map[string]any)
		if r["content"] != "clean, partial" || r["finish_reason"] != FinishStreamIncomplete {
			t.Fatalf("refused response %v", r)
		}
		if len(e.TakeRecords()) != 2 || m.Released() != "clean, " {
			t.Fatal("want two records and only the judged prefix released")
		}
	})
	t.Run("nothing unjudged is an errored call", func(t *testing.T) {
		m, e := mediator(t, Enforce, 0, denySecret)
		segment(t, m, "clean, ")
		if out, err := m.Cut(context.Background(), "clean, ", "cut"); out != nil || err != nil {
			t.Fatalf("Cut = %v, %v; want nothing", out, err)
		}
		if len(e.TakeRecords()) != 1 {
			t.Fatal("Cut recorded without residue")
		}
	})
}

func TestStreamMediatorSegmentCapBuffers(t *testing.T) {
	m, e := mediator(t, Enforce, 2, denySecret)
	segment(t, m, "a ")
	segment(t, m, "a b ")
	if got := segment(t, m, "a b c "); got != "" || !m.Buffering() {
		t.Fatalf("past the cap: released %q, buffering %v", got, m.Buffering())
	}
	_, rest, err := m.Final(context.Background(), final("a b c d"))
	if err != nil || rest != "c d" {
		t.Fatalf("Final rest %q, err %v", rest, err)
	}
	if n := len(e.TakeRecords()); n != 3 {
		t.Fatalf("%d records, want 2 segments and the final", n)
	}
}

func TestStreamMediatorRefusesANonExtendingSegment(t *testing.T) {
	m, _ := mediator(t, Enforce, 0, denySecret)
	segment(t, m, "abc")
	if _, err := m.Segment(context.Background(), "abd"); err == nil {
		t.Fatal("a segment that rewrites judged text was accepted")
	}
}

// parts is a final response whose content is text parts.
func parts(texts ...string) map[string]any {
	list := make([]any, len(texts))
	for i, t := range texts {
		list[i] = map[string]any{"type": "text", "text": t}
	}
	return map[string]any{"content": list, "tool_calls": []any{}, "finish_reason": "stop"}
}

// An answer in several text parts is mediated as their join: Final takes
// a part array whose text extends the released text, a transform of the
// unreleased part included, and refuses one that contradicts it.
func TestStreamMediatorFinalOverTextParts(t *testing.T) {
	t.Run("the join extends the released text", func(t *testing.T) {
		m, _ := mediator(t, Enforce, 0, denySecret)
		segment(t, m, "Hello there. Sec")
		out, rest, err := m.Final(context.Background(), parts("Hello there. ", "Second."))
		if err != nil || rest != "Second." || out.Verdict.Decision != DecisionAllow || m.Released() != "Hello there. Second." {
			t.Fatalf("Final = %v, %q, %v; Released %q", out, rest, err, m.Released())
		}
	})
	t.Run("a redaction of the unreleased part", func(t *testing.T) {
		m, _ := mediator(t, Enforce, 0, func(s string) Verdict {
			if strings.Contains(s, "SECRET") {
				return TransformTo("$target", parts("Hello. ", "[x] here"))
			}
			return Allow()
		})
		segment(t, m, "Hello. ")
		out, rest, err := m.Final(context.Background(), parts("Hello. ", "SECRET here"))
		if err != nil || rest != "[x] here" || out.Verdict.Decision != DecisionTransform {
			t.Fatalf("Final = %v, %q, %v", out, rest, err)
		}
	})
	t.Run("a redaction of released text in another part fails closed", func(t *testing.T) {
		m, _ := mediator(t, Enforce, 0, func(s string) Verdict {
			if strings.Contains(s, "SECRET") {
				return TransformTo("$target", parts("[x]. ", "more"))
			}
			return Allow()
		})
		segment(t, m, "Hello. ")
		_, _, err := m.Final(context.Background(), parts("Hello. ", "SECRET"))
		var blocked *BlockedError
		if !errors.As(err, &blocked) || blocked.Outcome.Verdict.Reason != ReasonStreamingUnsupported {
			t.Fatalf("err = %v, want a streaming_unsupported deny", err)
		}
	})
	t.Run("a complete answer that contradicts the released text is refused", func(t *testing.T) {
		called := false
		m, e := mediator(t, Enforce, 0, func(s string) Verdict {
			called = strings.HasPrefix(s, "Goodbye")
			return Allow()
		})
		segment(t, m, "Hello. ")
		_, _, err := m.Final(context.Background(), parts("Goodbye. ", "Hello."))
		var blocked *BlockedError
		if !errors.As(err, &blocked) || blocked.Outcome.Verdict.Reason != ReasonStreamingUnsupported {
			t.Fatalf("err = %v, want a streaming_unsupported refusal", err)
		}
		if called {
			t.Fatal("the policy judged an answer that cannot be released")
		}
		if got := recordSummary(e.TakeRecords()); len(got) != 2 || got[1] != "deny "+ReasonStreamingUnsupported {
			t.Fatalf("records %v", got)
		}
	})
}

func TestResponseText(t *testing.T) {
	for _, c := range []struct {
		content any
		want    string
	}{
		{"plain", "plain"},
		{nil, ""},
		{[]any{}, ""},
		{parts("a", "b", "")["content"], "ab"},
		{[]any{map[string]any{"type": "reasoning", "text": "think"}, map[string]any{"type": "text", "text": "say"},
			map[string]any{"type": "refusal", "refusal": "no"}, "junk", map[string]any{"type": "text", "text": 3},
			map[string]any{"type": "text", "text": " more"}}, "say more"},
		{map[string]any{"type": "text", "text": "x"}, ""},
	} {
		if got := ResponseText(c.content); got != c.want {
			t.Errorf("ResponseText(%v) = %q, want %q", c.content, got, c.want)
		}
	}
}
