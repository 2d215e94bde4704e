package e2e_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// goSurfaces are the official Go SDKs, one per API surface.
var goSurfaces = []struct {
	name string
	new  func(root string) agentClient
}{
	{"openai-go/chat", newChatClient},
	{"openai-go/responses", newResponsesClient},
	{"anthropic-sdk-go/messages", newMessagesClient},
}

// TestGoClients runs every scenario with every official Go SDK through one
// gateway.
func TestGoClients(t *testing.T) {
	root := startGateway(t, "", "")
	committed := startGateway(t, keepAliveConfig, "")
	for _, s := range goSurfaces {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			runScenarios(t, s.new(root), s.new(committed))
		})
	}
}

// runScenarios checks what one client sees of each policy outcome; c and
// committed talk to the same policy, committed with stream keep-alives on.
func runScenarios(t *testing.T, c, committed agentClient) {
	ctx := func(t *testing.T) context.Context {
		ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
		t.Cleanup(cancel)
		return ctx
	}

	t.Run("plain", func(t *testing.T) {
		text, calls, err := c.complete(ctx(t), plainPrompt)
		if err != nil || text != plainAnswer || len(calls) != 0 {
			t.Fatalf("text %q, calls %v, err %v", text, calls, err)
		}
	})

	t.Run("stream", func(t *testing.T) {
		s, err := c.stream(ctx(t), streamPrompt)
		// The deltas need not be the upstream's: a stream the gateway
		// synthesizes (not replays) carries each text part in one delta.
		if err != nil || s.Text != streamAnswer || strings.Join(s.Deltas, "") != streamAnswer || len(s.Deltas) == 0 {
			t.Fatalf("assembled %q from deltas %q, err %v", s.Text, s.Deltas, err)
		}
	})

	for _, stream := range []bool{false, true} {
		name := map[bool]string{false: "tool round", true: "tool round streamed"}[stream]
		t.Run(name, func(t *testing.T) {
			var calls []toolCall
			var err error
			if stream {
				var s streamed
				s, err = c.stream(ctx(t), weatherPrompt)
				calls = s.Calls
			} else {
				_, calls, err = c.complete(ctx(t), weatherPrompt)
			}
			if err != nil || len(calls) != 1 || calls[0].Name != weatherTool || calls[0].ID == "" {
				t.Fatalf("calls %+v, err %v", calls, err)
			}
			sameJSON(t, calls[0].Args, weatherArgs)
			result := runWeather(t, calls[0].Args)
			final, err := c.answerTool(ctx(t), weatherPrompt, calls[0], result, stream)
			if err != nil || !strings.Contains(final, result) {
				t.Fatalf("final answer %q (want it to carry the tool result %q), err %v", final, result, err)
			}
		})
	}

	t.Run("deny", func(t *testing.T) {
		text, _, err := c.complete(ctx(t), denyPrompt)
		if err == nil || errorStatus(err) != deniedStatus(c) || !strings.Contains(errorText(err), denyReason) {
			t.Fatalf("text %q, err %v", text, err)
		}
		noLeak(t, text+errorText(err))
	})

	t.Run("deny streamed", func(t *testing.T) {
		s, err := c.stream(ctx(t), denyPrompt)
		if err == nil || errorStatus(err) != deniedStatus(c) || !strings.Contains(errorText(err), denyReason) {
			t.Fatalf("streamed %+v, err %v", s, err)
		}
		noLeak(t, strings.Join(s.Deltas, "")+s.Text+errorText(err))
	})

	t.Run("deny streamed after the 200", func(t *testing.T) {
		s, err := committed.stream(ctx(t), slowDenyPrompt)
		if err == nil || !strings.Contains(errorText(err), denyReason) {
			t.Fatalf("streamed %+v, err %v", s, err)
		}
		noLeak(t, strings.Join(s.Deltas, "")+s.Text+errorText(err))
	})

	t.Run("redaction", func(t *testing.T) {
		text, _, err := c.complete(ctx(t), redactPrompt)
		if err != nil || text != redactAnswer {
			t.Fatalf("text %q, err %v", text, err)
		}
		s, err := c.stream(ctx(t), redactPrompt)
		if err != nil || s.Text != redactAnswer {
			t.Fatalf("streamed %q, err %v", s.Text, err)
		}
	})

	t.Run("tool arguments rewritten", func(t *testing.T) {
		_, calls, err := c.complete(ctx(t), searchPrompt)
		if err != nil || len(calls) != 1 || calls[0].Name != searchTool {
			t.Fatalf("calls %+v, err %v", calls, err)
		}
		sameJSON(t, calls[0].Args, searchRepaired)
	})

	t.Run("tool arguments rewritten streamed", func(t *testing.T) {
		s, err := c.stream(ctx(t), searchPrompt)
		if err != nil || len(s.Calls) != 1 || s.Calls[0].Name != searchTool {
			t.Fatalf("calls %+v, err %v", s.Calls, err)
		}
		sameJSON(t, s.Calls[0].Args, searchRepaired)
	})

	t.Run("tool denied", func(t *testing.T) {
		_, calls, err := c.complete(ctx(t), `/tool shell {"command":"rm -rf /"}`)
		if err == nil || errorStatus(err) != deniedStatus(c) || !strings.Contains(errorText(err), "policy:tool_not_allowed") {
			t.Fatalf("calls %+v, err %v", calls, err)
		}
	})
}

// runWeather is the test's get_weather tool: it checks its arguments
// and answers weatherResult.
func runWeather(t *testing.T, args string) string {
	t.Helper()
	var in struct {
		City string `json:"city"`
		Days int    `json:"days"`
	}
	if err := json.Unmarshal([]byte(args), &in); err != nil || in.City != "Paris" || in.Days != 3 {
		t.Fatalf("get_weather arguments %q: %v", args, err)
	}
	return weatherResult
}

// sameJSON fails unless got and want are equal JSON values.
func sameJSON(t *testing.T, got, want string) {
	t.Helper()
	g, err := jsonvalue.Decode([]byte(got))
	if err != nil {
		t.Fatalf("arguments %q: %v", got, err)
	}
	w, err := jsonvalue.Decode([]byte(want))
	if err != nil {
		t.Fatal(err)
	}
	if !jsonvalue.Equal(g, w) {
		t.Fatalf("arguments %s, want %s", got, want)
	}
}
