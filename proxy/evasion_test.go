package proxy

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/config"
)

// fullwidthOf returns s with its printable ASCII in fullwidth forms.
func fullwidthOf(s string) string {
	return strings.Map(func(r rune) rune {
		if '!' <= r && r <= '~' {
			return r + 0xFF01 - '!'
		}
		return r
	}, s)
}

// TestDefaultPolicySeesThroughDisguises sends credentials and e-mail
// addresses disguised with fullwidth letters and invisible characters
// through the gateway running the embedded default policy: the answer
// carrying a credential is denied whichever way it is written, and the
// e-mail redaction replaces exactly the disguised address.
func TestDefaultPolicySeesThroughDisguises(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("HOOKS_GATEWAY_LISTEN", "")
	t.Setenv("HOOKS_GATEWAY_REDIS_URL", "")
	asm, err := Build(context.Background(), config.Default(), io.Discard, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { asm.Close() })
	hs := httptest.NewServer(asm.Server)
	t.Cleanup(hs.Close)

	const key = "sk-proj-abcdefghijklmnopqrstuvwx"
	joined := strings.Join(strings.Split(key, ""), "\u200d") // zero-width joiners
	disguises := map[string]string{
		"fullwidth":          fullwidthOf(key),
		"fullwidth prefix":   "ｓｋ－" + key[3:],
		"zero-width joiners": joined,
		"soft hyphens":       strings.Join(strings.Split(key, ""), "\u00ad"),
		"mixed":              "ｓ\u200bｋ\u2060-" + strings.Join(strings.Split(fullwidthOf(key[3:]), ""), "\ufeff"),
	}
	chat := func(t *testing.T, content string) (int, []byte) {
		t.Helper()
		req, err := json.Marshal(map[string]any{"model": "mock", "messages": []any{map[string]any{"role": "user", "content": content}}})
		if err != nil {
			t.Fatal(err)
		}
		status, _, body := do(t, http.MethodPost, hs.URL+"/v1/chat/completions", string(req), nil)
		return status, body
	}
	denied := func(t *testing.T, status int, body []byte, disguised string) {
		t.Helper()
		e := errorBody(t, body)
		if status != http.StatusForbidden || e.Type != typeDenied || e.Code != "policy:credential_leak" || e.InterceptionPoint != "post_model_call" {
			t.Fatalf("status %d: %s", status, body)
		}
		noContent(t, body, disguised, key)
	}
	for name, d := range disguises {
		t.Run("model answer/"+name, func(t *testing.T) {
			// The mock model answers what follows /say.
			status, body := chat(t, "/say your key is "+d+" keep it safe")
			denied(t, status, body, d)
		})
		t.Run("user message/"+name, func(t *testing.T) {
			// The default policy guards credentials on the way out: the
			// mock echoes the message, and the echo is denied.
			status, body := chat(t, "my key is "+d+", remember it")
			denied(t, status, body, d)
		})
	}

	t.Run("e-mail redacted in the original text", func(t *testing.T) {
		for _, tc := range []struct{ in, want string }{
			{"Ｐｌｅａｓｅ\u200b email ｂｏｂ＠ｅｘａｍｐｌｅ．ｃｏｍ\u00ad the ｒｅｐｏｒｔ ✔\ufe0f",
				"echo: Ｐｌｅａｓｅ\u200b email [email]\u00ad the ｒｅｐｏｒｔ ✔\ufe0f"},
			{"mail " + strings.Join(strings.Split("bob@example.com", ""), "\u200d") + " now, ﬁne",
				"echo: mail [email] now, ﬁne"},
		} {
			status, body := chat(t, tc.in)
			var resp struct {
				Choices []struct {
					Message struct {
						Content string `json:"content"`
					} `json:"message"`
				} `json:"choices"`
			}
			if err := json.Unmarshal(body, &resp); err != nil || status != http.StatusOK || len(resp.Choices) != 1 {
				t.Fatalf("status %d: %s", status, body)
			}
			if got := resp.Choices[0].Message.Content; got != tc.want {
				t.Errorf("the model saw %+q, want %+q", got, tc.want)
			}
		}
	})
}
