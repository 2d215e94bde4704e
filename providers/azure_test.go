package providers

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

func TestAzureForwardsRequest(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		wantPath string
	}{
		{"mapped deployment", `{"model":"gpt-4o","messages":[]}`, "/openai/deployments/prod-4o/chat/completions"},
		{"deployment named like the model", `{"model":"gpt-4o-mini","messages":[]}`, "/openai/deployments/gpt-4o-mini/chat/completions"},
		{"escaped model", `{"model":"a b/c","messages":[]}`, "/openai/deployments/a%20b%2Fc/chat/completions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const respBody = `{"error":{"code":"DeploymentNotFound"}}`
			srv, seen := recordingServer(t, http.StatusNotFound, respBody)
			up, err := NewAzure(AzureConfig{
				Endpoint:    srv.URL + "/",
				APIKey:      "azure-secret",
				APIVersion:  "2024-10-21",
				Deployments: map[string]string{"gpt-4o": "prod-4o"},
			})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := up.Send(t.Context(), wire.OpChatCompletions, []byte(tt.body), clientHeaders())
			if err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, resp); resp.StatusCode != http.StatusNotFound || got != respBody {
				t.Errorf("response = %d %q, want the upstream's untouched", resp.StatusCode, got)
			}

			req := <-seen
			if req.method != http.MethodPost || req.path != tt.wantPath || req.rawQuery != "api-version=2024-10-21" {
				t.Errorf("request line = %s %s?%s, want POST %s?api-version=2024-10-21", req.method, req.path, req.rawQuery, tt.wantPath)
			}
			if !bytes.Equal(req.body, []byte(tt.body)) {
				t.Errorf("body = %s, want byte-identical", req.body)
			}
			if k := req.header.Get("Api-Key"); k != "azure-secret" {
				t.Errorf("api-key = %q", k)
			}
			if req.header.Get("Traceparent") == "" || req.header.Get("User-Agent") != "hooks-gateway" ||
				req.header.Get("Content-Type") != "application/json" {
				t.Errorf("missing gateway or trace headers: %v", req.header)
			}
			for _, k := range []string{"Authorization", "Cookie", "Agent-Hooks-Session", "Openai-Organization", "Openai-Project"} {
				if v := req.header.Values(k); len(v) > 0 {
					t.Errorf("client header %s leaked upstream: %q", k, v)
				}
			}
		})
	}
}

func TestAzureRejectsBodyWithoutDeployment(t *testing.T) {
	srv, seen := recordingServer(t, http.StatusOK, `{}`)
	up, err := NewAzure(AzureConfig{Endpoint: srv.URL, APIKey: "k", APIVersion: "v"})
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{`{"messages":[]}`, `{"model":".."}`, `{"model":42}`, `not json secret-text`} {
		_, err := up.Send(t.Context(), wire.OpChatCompletions, []byte(body), nil)
		if !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("%s: err = %v, want ErrInvalidRequest", body, err)
		}
		if err != nil && (strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "azure")) {
			t.Errorf("%s: error %q should name the upstream and not quote the body", body, err)
		}
	}
	select {
	case req := <-seen:
		t.Errorf("a request reached the upstream: %s", req.path)
	default:
	}
}

func TestNewAzureErrors(t *testing.T) {
	ok := AzureConfig{Endpoint: "https://res.openai.azure.com", APIKey: "azure-secret", APIVersion: "2024-10-21"}
	tests := []struct {
		name   string
		modify func(*AzureConfig)
		want   string
	}{
		{"no endpoint", func(c *AzureConfig) { c.Endpoint = "" }, "endpoint is required"},
		{"relative endpoint", func(c *AzureConfig) { c.Endpoint = "res.openai.azure.com" }, "absolute"},
		{"endpoint with query", func(c *AzureConfig) { c.Endpoint += "?x=1" }, "query"},
		{"no api version", func(c *AzureConfig) { c.APIVersion = "" }, "api version"},
		{"no key", func(c *AzureConfig) { c.APIKey = "" }, "api key is required"},
		{"key with newline", func(c *AzureConfig) { c.APIKey += "\r\n" }, "control characters"},
		{"empty deployment", func(c *AzureConfig) { c.Deployments = map[string]string{"gpt-4o": ""} }, "invalid"},
		{"bad pattern", func(c *AzureConfig) { c.Models = []string{"["} }, "syntax error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.modify(&cfg)
			_, err := NewAzure(cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "azure-secret") {
				t.Errorf("error leaks the key: %v", err)
			}
		})
	}
}

func TestAzureModels(t *testing.T) {
	models := []string{"gpt-4o", "gpt-*"}
	up, err := NewAzure(AzureConfig{
		Endpoint: "https://res.openai.azure.com", APIKey: "k", APIVersion: "v",
		Deployments: map[string]string{"o3": "prod-o3", "gpt-4o": "prod-4o"},
		Models:      models,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(up.Models(), ","); got != "gpt-4o,o3" {
		t.Errorf("Models = %s", got)
	}
	if up.Name() != "azure" {
		t.Errorf("Name = %q", up.Name())
	}
	if models[1] != "gpt-*" {
		t.Error("NewAzure modified the caller's Models")
	}
}

func TestAzureResponses(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		wantBody string
	}{
		{"mapped model rewritten to its deployment", `{"input":"hi","model" : "gpt-4o","stream":true}`, `{"input":"hi","model" : "prod-4o","stream":true}`},
		{"unmapped model is the deployment", `{"model":"gpt-4o-mini","input":"hi <b>"}`, `{"model":"gpt-4o-mini","input":"hi <b>"}`},
		{"identity mapping keeps the bytes", `{"model":"same","input":"\u00e9"}`, `{"model":"same","input":"\u00e9"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, seen := recordingServer(t, http.StatusOK, `{}`)
			up, err := NewAzure(AzureConfig{
				Endpoint: srv.URL, APIKey: "azure-secret", APIVersion: "2024-10-21",
				Deployments: map[string]string{"gpt-4o": "prod-4o", "same": "same"},
			})
			if err != nil {
				t.Fatal(err)
			}
			if !up.Serves(wire.OpResponses) || up.Serves(wire.OpMessages) {
				t.Fatal("Azure must serve responses and not messages")
			}
			resp, err := up.Send(t.Context(), wire.OpResponses, []byte(tt.body), clientHeaders())
			if err != nil {
				t.Fatal(err)
			}
			readAll(t, resp)
			req := <-seen
			if req.path != "/openai/v1/responses" || req.rawQuery != "" {
				t.Errorf("request = %s?%s, want /openai/v1/responses without a query", req.path, req.rawQuery)
			}
			if string(req.body) != tt.wantBody {
				t.Errorf("body = %s, want %s", req.body, tt.wantBody)
			}
			if req.header.Get("Api-Key") != "azure-secret" || req.header.Get("Authorization") != "" {
				t.Errorf("auth headers = %v", req.header)
			}
		})
	}
}

func TestAzureResponsesInvalidBodies(t *testing.T) {
	up, err := NewAzure(AzureConfig{Endpoint: "http://127.0.0.1:1", APIKey: "k", APIVersion: "v",
		Deployments: map[string]string{"gpt-4o": "prod-4o"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{`{"input":"x"}`, `{"model":"gpt-4o","model":"gpt-4o"}`, `[1]`, `{"model":".."}`} {
		_, err := up.Send(t.Context(), wire.OpResponses, []byte(body), nil)
		if !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("%s: err = %v, want ErrInvalidRequest", body, err)
		}
	}
	if _, err := up.Send(t.Context(), wire.OpCountTokens, []byte(`{"model":"m"}`), nil); !errors.Is(err, ErrUnsupported) {
		t.Errorf("count_tokens: err = %v, want ErrUnsupported", err)
	}
}
