package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/hooks-gateway/hooks-gateway/config"
)

// lockedBuffer is the stdout the records go to; the test reads it while
// handlers may still be writing the last records.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestQuickstart runs the README's quickstart against the embedded default
// configuration, as `go run ./cmd/hooks-gateway` would serve it.
func TestQuickstart(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("HOOKS_GATEWAY_LISTEN", "")
	t.Setenv("HOOKS_GATEWAY_REDIS_URL", "")
	const (
		email = "bob@example.com"
		key   = "sk-proj-abcdefghijklmnopqrstuvwx"
	)
	var stdout lockedBuffer
	asm, err := Build(context.Background(), config.Default(), &stdout, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { asm.Close() })
	hs := httptest.NewServer(asm.Server)
	t.Cleanup(hs.Close)
	perRequest := 0 // requests that are sessions of their own (each ends with agent_shutdown)

	t.Run("e-mail redacted before the model sees it", func(t *testing.T) {
		perRequest++
		status, h, body := do(t, http.MethodPost, hs.URL+"/v1/chat/completions",
			`{"model":"mock","messages":[{"role":"user","content":"Please email bob@example.com the report"}]}`, nil)
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, body)
		}
		var resp struct {
			ID      string `json:"id"`
			Object  string `json:"object"`
			Choices []struct {
				Message struct {
					Role    string `json:"role"`
					Content string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(body, &resp); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		if resp.Object != "chat.completion" || !strings.HasPrefix(resp.ID, "chatcmpl-") ||
			resp.Choices[0].Message.Content != "echo: Please email [email] the report" {
			t.Fatalf("response = %s", body)
		}
		if h.Get(HeaderDecision) != "transform" || h.Get(HeaderMode) != "enforce" || !strings.HasPrefix(h.Get(HeaderSession), "req-") {
			t.Fatalf("headers = %v", h)
		}
	})

	// Claude Code's own Bash tool description names a commit author's
	// address: an agent's declarations do not get every call denied, and
	// the conversation's addresses are still redacted.
	t.Run("an agent's tool declaring an address", func(t *testing.T) {
		perRequest++
		status, _, body := do(t, http.MethodPost, hs.URL+"/v1/messages",
			`{"model":"mock","max_tokens":64,"tools":[{"name":"Bash","description":"Commit with Co-Authored-By: Claude <noreply@anthropic.com>","input_schema":{"type":"object"}}],`+
				`"messages":[{"role":"user","content":"Please email bob@example.com the report"}]}`, map[string]string{"anthropic-version": "2023-06-01"})
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, body)
		}
		if !strings.Contains(string(body), "[email]") || strings.Contains(string(body), email) {
			t.Fatalf("the conversation's address was not redacted: %s", body)
		}
	})

	t.Run("credential in the answer denied", func(t *testing.T) {
		perRequest++
		status, _, body := do(t, http.MethodPost, hs.URL+"/v1/chat/completions",
			`{"model":"mock","messages":[{"role":"user","content":"/say my key is `+key+`"}]}`, nil)
		e := errorBody(t, body)
		if status != http.StatusForbidden || e.Type != typeDenied || e.Code != "policy:credential_leak" ||
			e.Message != "the response contained what looks like a credential" || e.InterceptionPoint != "post_model_call" ||
			!strings.HasPrefix(e.SessionID, "req-") || e.Sequence == nil || *e.Sequence != 3 || e.Param != nil {
			t.Fatalf("status %d: %s", status, body)
		}
		noContent(t, body, key, "my key")
	})

	t.Run("openai-go client in a session", func(t *testing.T) {
		client := openai.NewClient(
			option.WithBaseURL(hs.URL+"/v1"),
			option.WithAPIKey("unused-with-the-mock"),
			option.WithHeader("Agent-Hooks-Session", "support-chat-42"),
			option.WithMaxRetries(0),
		)
		ctx := context.Background()
		resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model:    "mock",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello")},
		})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Choices[0].Message.Content != "echo: hello" {
			t.Fatalf("content = %q", resp.Choices[0].Message.Content)
		}
		_, err = client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model:    "mock",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("/say here it is: " + key)},
		})
		var denied *openai.Error
		if !errors.As(err, &denied) || denied.StatusCode != 403 || denied.Code != "policy:credential_leak" {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("streaming", func(t *testing.T) {
		perRequest++
		client := openai.NewClient(option.WithBaseURL(hs.URL+"/v1"), option.WithAPIKey("unused-with-the-mock"), option.WithMaxRetries(0))
		stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
			Model:    "mock",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("stream this to bob@example.com please")},
		})
		acc := openai.ChatCompletionAccumulator{}
		chunks := 0
		for stream.Next() {
			acc.AddChunk(stream.Current())
			chunks++
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if got := acc.Choices[0].Message.Content; got != "echo: stream this to [email] please" || chunks < 3 {
			t.Fatalf("accumulated %q from %d chunks", got, chunks)
		}
		if acc.Choices[0].FinishReason != "stop" {
			t.Errorf("finish_reason = %q", acc.Choices[0].FinishReason)
		}
	})

	t.Run("models", func(t *testing.T) {
		status, _, body := do(t, http.MethodGet, hs.URL+"/v1/models", "", nil)
		var list struct {
			Object string `json:"object"`
			Data   []struct {
				ID     string `json:"id"`
				Object string `json:"object"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &list); err != nil || status != http.StatusOK || list.Object != "list" {
			t.Fatalf("status %d: %s", status, body)
		}
		found := false
		for _, m := range list.Data {
			found = found || (m.ID == "mock" && m.Object == "model")
		}
		if !found {
			t.Fatalf("mock not listed: %s", body)
		}
		// The official client reads the same list.
		client := openai.NewClient(option.WithBaseURL(hs.URL+"/v1"), option.WithAPIKey("x"), option.WithMaxRetries(0))
		page, err := client.Models.List(context.Background())
		if err != nil || len(page.Data) == 0 || page.Data[0].ID != "mock" {
			t.Fatalf("models = %+v, %v", page, err)
		}
	})

	t.Run("health", func(t *testing.T) {
		for _, path := range []string{"/healthz", "/readyz"} {
			if status, _, body := do(t, http.MethodGet, hs.URL+path, "", nil); status != http.StatusOK {
				t.Fatalf("%s: %d %s", path, status, body)
			}
		}
	})

	t.Run("records on stdout", func(t *testing.T) {
		type rec struct {
			Point     string `json:"interception_point"`
			Mode      string `json:"mode"`
			SessionID string `json:"session_id"`
			Sequence  int64  `json:"sequence"`
			Verdict   struct {
				Decision string `json:"decision"`
				Reason   string `json:"reason"`
			} `json:"verdict"`
			InputIdentity *string `json:"input_identity"`
		}
		var recs []rec
		parse := func() bool {
			recs = recs[:0]
			shutdowns := 0
			for i, line := range strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") {
				if i == 0 && strings.HasPrefix(line, `{"hooks_gateway_policy":`) {
					continue // the policy marker (docs/configuration.md#records)
				}
				var r rec
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatalf("not a JSON line: %q", line)
				}
				recs = append(recs, r)
				if r.Point == "agent_shutdown" {
					shutdowns++
				}
			}
			return shutdowns == perRequest
		}
		waitFor(t, 5*time.Second, "every per-request session's agent_shutdown record", parse)
		out := stdout.String()
		noContent(t, []byte(out), email, key, "Please email", "my key is", "hello")
		var transformed, denied, session int
		managed := oneTrail{name: "support-chat-42"} // its trail id: the name and an incarnation
		for _, r := range recs {
			if r.Mode != "enforce" || r.SessionID == "" {
				t.Errorf("record %+v", r)
			}
			if r.Point == "pre_model_call" && r.Verdict.Decision == "transform" {
				transformed++
			}
			if r.Point == "post_model_call" && r.Verdict.Decision == "deny" && r.Verdict.Reason == "policy:credential_leak" {
				denied++
			}
			if managed.is(t, r.SessionID) {
				if r.Sequence != int64(session) {
					t.Errorf("session record %d has sequence %d", session, r.Sequence)
				}
				session++
			}
		}
		// Transforms: the e-mail requests (chat, Messages with a tool
		// declaring an address) and the streamed one; denies: the /say
		// request and the session's second call.
		if transformed != 3 || denied != 2 {
			t.Errorf("%d pre_model_call transforms, %d credential denies; want 3 and 2:\n%s", transformed, denied, out)
		}
		// startup, then input/pre/post/output and input/pre/post(deny).
		if session != 8 {
			t.Errorf("%d records of the managed session, want 8", session)
		}
	})
}
