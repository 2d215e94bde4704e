package e2e_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// incrementalConfig mediates streams incrementally with the default
// segments: the first text is judged on arrival, later segments close at
// 512 bytes, a sentence end or after 250ms.
const incrementalConfig = `
streaming:
  mode: incremental
`

// incrementalInterceptors add answer-side transforms to the policy:
// redact-codename rewrites "bluebird" in what the model answers, and
// redact-sentence rewrites a sentence from "one" to "kestrel", which
// reaches back into text released before "kestrel" came.
const incrementalInterceptors = `
  - name: redact-codename
    type: regex
    points: [post_model_call]
    action: redact
    patterns: ['bluebird', 'one [a-z ]*kestrel']
    replacement: "[codename]"
`

// Incremental scenarios. The mock's /drip streams one word per delta,
// dripInterval apart, as a model generating would.
const (
	dripInterval = 100 * time.Millisecond

	// A 10-word answer takes 9 intervals (900ms) upstream; the client's
	// first delta must come at least earlyMargin before its end, which a
	// gateway that buffered the answer cannot do.
	incStreamAnswer = "one two three four five six seven eight nine ten"
	incStreamPrompt = "/drip 100ms " + incStreamAnswer
	earlyMargin     = 400 * time.Millisecond

	// Harmless words, then the credential deny-credentials refuses, then
	// more: only (a prefix of) the harmless words may reach the client.
	incDenyReleasable = "alpha bravo charlie delta echo foxtrot "
	incDenyPrompt     = "/drip 100ms " + incDenyReleasable + credential + " golf hotel india"

	// The request's e-mail address is redacted before the model sees it;
	// the dripped answer carries the redaction.
	incRedactPrompt = "/drip 50ms mail the report to bob@example.com today"
	incRedactAnswer = "mail the report to [email] today"

	// redact-codename transforms the first segment, before anything was
	// released: the rest is buffered and the client gets the whole
	// transformed answer.
	incOutputRedactPrompt = "/drip 50ms bluebird flies at dawn over the hills"
	incOutputRedactAnswer = "[codename] flies at dawn over the hills"

	// redact-codename transforms a segment after the first release but
	// keeps the released text: the verdicted rest is released.
	incLateRedactPrompt = "/drip 100ms one two three four five bluebird six seven"
	incLateRedactAnswer = "one two three four five [codename] six seven"

	// redact-codename rewrites text already released ("one " is released
	// on arrival): released bytes cannot be retracted, so the stream
	// fails closed.
	incRewriteReleasable = "one two three four five "
	incRewritePrompt     = "/drip 100ms " + incRewriteReleasable + "kestrel six seven"
	streamingUnsupported = "host_error:streaming_unsupported"
)

// TestGoClientsIncremental runs the incremental scenarios with every
// official Go SDK through a gateway with streaming.mode: incremental.
func TestGoClientsIncremental(t *testing.T) {
	root := startGateway(t, incrementalConfig, incrementalInterceptors)
	for _, s := range goSurfaces {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			runIncrementalScenarios(t, s.new(root))
		})
	}
}

func runIncrementalScenarios(t *testing.T, c agentClient) {
	ctx := func(t *testing.T) context.Context {
		ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
		t.Cleanup(cancel)
		return ctx
	}

	t.Run("incremental_stream", func(t *testing.T) {
		s, err := c.stream(ctx(t), incStreamPrompt)
		if err != nil || s.Text != incStreamAnswer || strings.Join(s.Deltas, "") != incStreamAnswer {
			t.Fatalf("assembled %q from deltas %q, err %v", s.Text, s.Deltas, err)
		}
		wantEarly(t, s.FirstDelta, s.End)
		// Released before the verdict on the whole answer: no decision
		// header (docs/configuration.md, streaming).
		if s.Header == nil || s.Header.Get("Agent-Hooks-Session") == "" {
			t.Fatalf("no gateway headers: %v", s.Header)
		}
		if d := s.Header.Get("Agent-Hooks-Decision"); d != "" {
			t.Errorf("Agent-Hooks-Decision %q on a stream released early", d)
		}
	})

	t.Run("incremental_deny_midstream", func(t *testing.T) {
		s, err := c.stream(ctx(t), incDenyPrompt)
		if err == nil || errorStatus(err) == deniedStatus(c) || !strings.Contains(errorText(err), denyReason) {
			t.Fatalf("streamed %+v, err %v; want an in-stream error naming %s", s, err, denyReason)
		}
		wantReleasedPrefix(t, s.Deltas, incDenyReleasable)
		noLeak(t, strings.Join(s.Deltas, "")+s.Text+errorText(err))
	})

	t.Run("incremental_redaction", func(t *testing.T) {
		s, err := c.stream(ctx(t), incRedactPrompt)
		if err != nil || s.Text != incRedactAnswer || strings.Join(s.Deltas, "") != incRedactAnswer {
			t.Fatalf("assembled %q from deltas %q, err %v", s.Text, s.Deltas, err)
		}
	})

	t.Run("incremental_output_redaction", func(t *testing.T) {
		s, err := c.stream(ctx(t), incOutputRedactPrompt)
		if err != nil || s.Text != incOutputRedactAnswer || strings.Join(s.Deltas, "") != incOutputRedactAnswer {
			t.Fatalf("assembled %q from deltas %q, err %v", s.Text, s.Deltas, err)
		}
		// Nothing released before the verdict: the buffered path, whose
		// headers carry the decision.
		if s.Header.Get("Agent-Hooks-Decision") == "" {
			t.Errorf("no Agent-Hooks-Decision on a stream released whole: %v", s.Header)
		}
	})

	t.Run("incremental_redaction_after_release", func(t *testing.T) {
		s, err := c.stream(ctx(t), incLateRedactPrompt)
		if err != nil || s.Text != incLateRedactAnswer || strings.Join(s.Deltas, "") != incLateRedactAnswer {
			t.Fatalf("assembled %q from deltas %q, err %v", s.Text, s.Deltas, err)
		}
	})

	t.Run("incremental_rewrite_released", func(t *testing.T) {
		s, err := c.stream(ctx(t), incRewritePrompt)
		if err == nil || errorStatus(err) == deniedStatus(c) || !strings.Contains(errorText(err), streamingUnsupported) {
			t.Fatalf("streamed %+v, err %v; want an in-stream error naming %s", s, err, streamingUnsupported)
		}
		wantReleasedPrefix(t, s.Deltas, incRewriteReleasable)
	})

	t.Run("incremental_tool_arguments_rewritten", func(t *testing.T) {
		s, err := c.stream(ctx(t), searchPrompt)
		if err != nil || len(s.Calls) != 1 || s.Calls[0].Name != searchTool {
			t.Fatalf("calls %+v, err %v", s.Calls, err)
		}
		sameJSON(t, s.Calls[0].Args, searchRepaired)
	})
}

// wantEarly fails unless the first delta arrived at least earlyMargin
// before the stream's end.
func wantEarly(t *testing.T, first, end time.Time) {
	t.Helper()
	if first.IsZero() || end.IsZero() || end.Sub(first) < earlyMargin {
		t.Fatalf("first delta %v before the end, want at least %v: the answer was not released as it came",
			end.Sub(first), earlyMargin)
	}
}

// wantReleasedPrefix fails unless some text arrived and all of it is a
// prefix of releasable: nothing from the refused word on.
func wantReleasedPrefix(t *testing.T, deltas []string, releasable string) {
	t.Helper()
	got := strings.Join(deltas, "")
	if got == "" || !strings.HasPrefix(releasable, got) {
		t.Fatalf("released %q (deltas %q), want a non-empty prefix of %q", got, deltas, releasable)
	}
}

// TestIncrementalDenyRawStream reads a mid-stream deny off the wire on
// every surface: harmless text first, then the surface's error event
// naming the reason, and no finish, terminal event or byte of the
// credential.
func TestIncrementalDenyRawStream(t *testing.T) {
	root := startGateway(t, incrementalConfig, incrementalInterceptors)
	prompt, err := json.Marshal(incDenyPrompt)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		surface, path, body string
		terminal            []string
	}{
		{"chat", "/v1/chat/completions", `{"model":"mock","stream":true,"messages":[{"role":"user","content":` + string(prompt) + `}]}`,
			[]string{"[DONE]", `"finish_reason":"`}},
		{"responses", "/v1/responses", `{"model":"mock","stream":true,"store":false,"input":` + string(prompt) + `}`,
			[]string{"response.completed", "response.output_text.done"}},
		{"messages", "/v1/messages", `{"model":"mock","max_tokens":99,"stream":true,"messages":[{"role":"user","content":` + string(prompt) + `}]}`,
			[]string{"message_stop", "message_delta"}},
	}
	for _, tt := range tests {
		t.Run(tt.surface, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, root+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			body := string(raw)
			if resp.StatusCode != http.StatusOK || !strings.Contains(body, "alpha ") || !strings.Contains(body, denyReason) {
				t.Fatalf("status %d, want 200 with released text, then an error event naming %s:\n%s", resp.StatusCode, denyReason, body)
			}
			for _, f := range append(tt.terminal, credential, "AKIA", "golf") {
				if strings.Contains(body, f) {
					t.Errorf("the denied stream carries %q:\n%s", f, body)
				}
			}
			if !strings.HasSuffix(body, "\n\n") || strings.LastIndex(body, denyReason) < strings.LastIndex(body, "alpha") {
				t.Errorf("the stream does not end with its error event:\n%s", body)
			}
		})
	}
}
