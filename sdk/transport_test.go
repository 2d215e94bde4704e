package sdk

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// captureRT records the requests it is asked to send and answers 200.
type captureRT struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (c *captureRT) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.reqs = append(c.reqs, r)
	c.mu.Unlock()
	if r.Body != nil {
		r.Body.Close()
	}
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}")), Request: r}, nil
}

func (c *captureRT) sent() []*http.Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*http.Request(nil), c.reqs...)
}

// closeTracker reports whether the transport closed the request body.
type closeTracker struct {
	io.Reader
	closed bool
}

func (c *closeTracker) Close() error { c.closed = true; return nil }

func TestTransportBeforeStartSendsNothing(t *testing.T) {
	gw := newTestGateway(t, gatewayOptions{})
	s := newRemote(t, RemoteConfig{BaseURL: gw.URL})
	client := openaiClient(gw, s)
	_, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "mock", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	if !errors.Is(err, ErrNotStarted) {
		t.Fatalf("model call before Start = %v, want ErrNotStarted", err)
	}
	if n := gw.requests.Load(); n != 0 {
		t.Fatalf("%d requests reached the gateway before Start", n)
	}
	if recs := gw.records.of(""); len(recs) != 0 {
		t.Fatalf("the gateway recorded %d emissions", len(recs))
	}
}

func TestTransportHeaders(t *testing.T) {
	ctx := context.Background()
	gw := newTestGateway(t, gatewayOptions{})
	s := newRemote(t, RemoteConfig{BaseURL: gw.URL, APIKey: "gw-key"})
	if err := s.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	base := &captureRT{}
	rt := s.Transport(base)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, gw.URL+"/v1/chat/completions", strings.NewReader("{}"))
	req.Header.Set(HeaderTurnPoints, "gateway")
	if _, err := rt.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	sent := base.sent()[0]
	for h, want := range map[string]string{
		HeaderSession:    s.ID(),
		HeaderTurnPoints: "client",
		HeaderAgent:      "agent-1",
		"Authorization":  "Bearer gw-key",
	} {
		if got := sent.Header.Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	if req.Header.Get(HeaderSession) != "" || req.Header.Get(HeaderTurnPoints) != "gateway" {
		t.Error("the caller's request was modified")
	}
	// A request's own Authorization is kept.
	req2, _ := http.NewRequestWithContext(ctx, http.MethodPost, gw.URL+"/v1/chat/completions", nil)
	req2.Header.Set("Authorization", "Bearer own")
	if _, err := rt.RoundTrip(req2); err != nil {
		t.Fatal(err)
	}
	if got := base.sent()[1].Header.Get("Authorization"); got != "Bearer own" {
		t.Errorf("Authorization = %q, want the request's own", got)
	}
}

func TestTransportRefusals(t *testing.T) {
	ctx := context.Background()
	gw := newTestGateway(t, gatewayOptions{})
	started := newRemote(t, RemoteConfig{BaseURL: gw.URL + "/"})
	if err := started.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	ended := newRemote(t, RemoteConfig{BaseURL: gw.URL})
	if err := ended.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ended.End(ctx, enforcement.ShutdownCompleted); err != nil {
		t.Fatal(err)
	}
	local, _ := newSession(t, allowAll)
	if err := local.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		s    *Session
		url  string
		want error
	}{
		{"not started", newRemote(t, RemoteConfig{BaseURL: gw.URL}), gw.URL + "/v1/chat/completions", ErrNotStarted},
		{"ended", ended, gw.URL + "/v1/chat/completions", ErrSessionEnded},
		{"local session", local, gw.URL + "/v1/chat/completions", ErrLocalSession},
		{"other host", started, "https://api.openai.com/v1/chat/completions", nil},
		{"other scheme", started, strings.Replace(gw.URL, "http://", "https://", 1) + "/v1/chat/completions", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := &captureRT{}
			body := &closeTracker{Reader: strings.NewReader("{}")}
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, tc.url, body)
			resp, err := tc.s.Transport(base).RoundTrip(req)
			if err == nil || resp != nil {
				t.Fatalf("RoundTrip = %v, %v; want a refusal", resp, err)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if len(base.sent()) != 0 {
				t.Fatal("a refused request was sent")
			}
			if !body.closed {
				t.Error("the request body was not closed")
			}
		})
	}
}

func TestTransportPathPrefix(t *testing.T) {
	ctx := context.Background()
	gw := newTestGateway(t, gatewayOptions{})
	// The gateway mounted under /gw behind a path-stripping front.
	front := httptest.NewServer(http.StripPrefix("/gw", gw.Config.Handler))
	defer front.Close()
	s := newRemote(t, RemoteConfig{BaseURL: front.URL + "/gw/"})
	if err := s.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	client := openai.NewClient(option.WithBaseURL(front.URL+"/gw/v1"), option.WithAPIKey("unused"), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: s.Transport(nil)}))
	if _, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: "mock", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	}); err != nil {
		t.Fatal(err)
	}
	equalPoints(t, recordPoints(gw.records.of(s.ID())), enforcement.AgentStartup, enforcement.PreModelCall, enforcement.PostModelCall)
	base := &captureRT{}
	rt := s.Transport(base)
	for url, ok := range map[string]bool{
		front.URL + "/gw/v1/chat/completions":  true,
		front.URL + "/gwx/v1/chat/completions": false,
		front.URL + "/v1/chat/completions":     false,
	} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
		if _, err := rt.RoundTrip(req); (err == nil) != ok {
			t.Errorf("%s: err = %v", url, err)
		}
	}
}
