package sdk

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// chunks is a StreamFunc yielding parts, then answering their
// concatenation (or failing with cut after them).
func chunks(cut error, parts ...string) StreamFunc {
	return func(_ context.Context, _ any, yield func(string) error) (enforcement.ModelResponse, error) {
		for _, p := range parts {
			if err := yield(p); err != nil {
				return enforcement.ModelResponse{}, err
			}
		}
		if cut != nil {
			return enforcement.ModelResponse{}, cut
		}
		return enforcement.ModelResponse{Content: strings.Join(parts, ""), FinishReason: "stop"}, nil
	}
}

func responseText(c enforcement.Context) string {
	r, _ := c["response"].(map[string]any)
	s, _ := r["content"].(string)
	return s
}

func startedSession(t *testing.T, p policy) (*Session, *enforcement.Emitter) {
	t.Helper()
	s, em := newSession(t, p)
	if err := s.Start(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	em.TakeRecords()
	return s, em
}

func TestModelCallStreamReleasesAsVerdictsCover(t *testing.T) {
	var judged []string
	s, em := startedSession(t, func(c enforcement.Context) enforcement.Verdict {
		if c.Point() == enforcement.PostModelCall {
			judged = append(judged, responseText(c))
		}
		return enforcement.Allow()
	})
	var released []string
	resp, err := s.ModelCallStream(context.Background(), "m", []any{}, chunks(nil, "one ", "two ", "three"),
		func(text string) error {
			released = append(released, text)
			// A release happens only after a verdict covering it.
			if got := strings.Join(released, ""); !strings.HasPrefix(judged[len(judged)-1], got) {
				t.Errorf("released %q ahead of the last verdict over %q", got, judged[len(judged)-1])
			}
			return nil
		}, StreamOptions{})
	if err != nil || resp.Content != "one two three" {
		t.Fatalf("ModelCallStream = %v, %v", resp, err)
	}
	if strings.Join(released, "|") != "one |two |three" {
		t.Fatalf("released %q", released)
	}
	if strings.Join(judged, "|") != "one |one two |one two three" {
		t.Fatalf("judged %q", judged)
	}
	equalPoints(t, points(em), enforcement.PreModelCall, enforcement.PostModelCall, enforcement.PostModelCall, enforcement.PostModelCall)
}

func TestModelCallStreamDenyStopsTheStream(t *testing.T) {
	s, _ := startedSession(t, func(c enforcement.Context) enforcement.Verdict {
		if strings.Contains(responseText(c), "SECRET") {
			return enforcement.Deny("test:secret", "")
		}
		return enforcement.Allow()
	})
	var released strings.Builder
	yielded := 0
	_, err := s.ModelCallStream(context.Background(), "m", []any{},
		func(_ context.Context, _ any, yield func(string) error) (enforcement.ModelResponse, error) {
			for _, p := range []string{"ok ", "SECRET", " tail", " more"} {
				if err := yield(p); err != nil {
					return enforcement.ModelResponse{}, err
				}
				yielded++
			}
			return enforcement.ModelResponse{Content: "ok SECRET tail more"}, nil
		},
		func(text string) error { released.WriteString(text); return nil }, StreamOptions{})
	var blocked *BlockedError
	if !errors.As(err, &blocked) || blocked.Outcome.Verdict.Reason != "test:secret" {
		t.Fatalf("err = %v, want the deny", err)
	}
	if released.String() != "ok " || yielded != 2 {
		t.Fatalf("released %q after %d yields; want \"ok \" and the stream stopped at the deny", released.String(), yielded)
	}
}

func TestModelCallStreamCutRefusesResidue(t *testing.T) {
	s, em := startedSession(t, func(enforcement.Context) enforcement.Verdict { return enforcement.Allow() })
	var released strings.Builder
	_, err := s.ModelCallStream(context.Background(), "m", []any{}, chunks(errors.New("connection reset"), "clean, ", "partial"),
		func(text string) error { released.WriteString(text); return nil }, StreamOptions{})
	var blocked *BlockedError
	if !errors.As(err, &blocked) || blocked.Outcome.Verdict.Reason != enforcement.ReasonStreamingUnsupported {
		t.Fatalf("err = %v, want a streaming_unsupported deny", err)
	}
	if released.String() != "clean, " {
		t.Fatalf("released %q", released.String())
	}
	recs := em.TakeRecords()
	last := recs[len(recs)-1]
	if last.InterceptionPoint != enforcement.PostModelCall || last.Verdict.Reason != enforcement.ReasonStreamingUnsupported {
		t.Fatalf("last record %s %s", last.InterceptionPoint, last.Verdict.Reason)
	}
}

func TestModelCallStreamTransformKeepsReleasedText(t *testing.T) {
	s, _ := startedSession(t, func(c enforcement.Context) enforcement.Verdict {
		if text := responseText(c); c.Point() == enforcement.PostModelCall && strings.Contains(text, "SECRET") {
			r := c["response"].(map[string]any)
			return enforcement.TransformTo("$target", map[string]any{
				"content": strings.ReplaceAll(text, "SECRET", "[x]"), "tool_calls": r["tool_calls"], "finish_reason": r["finish_reason"]})
		}
		return enforcement.Allow()
	})
	var released strings.Builder
	resp, err := s.ModelCallStream(context.Background(), "m", []any{}, chunks(nil, "fine. ", "SECRET", " end"),
		func(text string) error { released.WriteString(text); return nil }, StreamOptions{})
	if err != nil || resp.Content != "fine. [x] end" || released.String() != "fine. [x] end" {
		t.Fatalf("resp %v, released %q, err %v", resp.Content, released.String(), err)
	}
}

func TestModelCallStreamNeedsALocalSession(t *testing.T) {
	s := &Session{em: &remoteEmitter{}, started: true}
	_, err := s.ModelCallStream(context.Background(), "m", nil, chunks(nil, "x"), func(string) error { return nil }, StreamOptions{})
	if !errors.Is(err, ErrIncrementalUnsupported) {
		t.Fatalf("err = %v, want ErrIncrementalUnsupported", err)
	}
}
