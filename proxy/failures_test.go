package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/specschema"
)

// partial marks upstream content that must never reach the client.
const partial = "PARTIAL-UPSTREAM-TEXT"

// An upstream that fails is an errored model call: the client gets an
// upstream error (never the upstream's own body), there is no
// post_model_call, and the per-request session ends with reason error.
func TestUpstreamFailures(t *testing.T) {
	sseHead := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: "+chunk(`{"role":"assistant","content":"`+partial+`"}`, "")+"\n\n")
		w.(http.Flusher).Flush()
	}
	cases := []struct {
		name    string
		stream  bool
		timeout time.Duration
		respond func(w http.ResponseWriter, r *http.Request)
		status  int
		code    string
		maxTime time.Duration
	}{
		{
			name: "status 500",
			respond: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				io.WriteString(w, `{"error":{"message":"`+partial+`","type":"server_error"}}`)
			},
			status: http.StatusBadGateway, code: "upstream_status_500",
		},
		{
			name: "status 429",
			respond: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				io.WriteString(w, `{"error":{"message":"`+partial+`","type":"rate_limit"}}`)
			},
			status: http.StatusTooManyRequests, code: "upstream_status_429",
		},
		{
			name:    "hangs past the provider timeout",
			timeout: 300 * time.Millisecond,
			respond: func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
			status:  http.StatusGatewayTimeout, code: "upstream_timeout",
			maxTime: 5 * time.Second,
		},
		{
			name:    "body stalls past the provider timeout",
			timeout: 300 * time.Millisecond,
			respond: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"id":"chatcmpl-1","choices":[{"index":0,"message":{"role":"assistant","content":"`+partial)
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			},
			status: http.StatusGatewayTimeout, code: "upstream_timeout",
			maxTime: 5 * time.Second,
		},
		{
			name:    "stream stalls past the provider timeout",
			stream:  true,
			timeout: 300 * time.Millisecond,
			respond: func(w http.ResponseWriter, r *http.Request) { sseHead(w); <-r.Context().Done() },
			status:  http.StatusGatewayTimeout, code: "upstream_timeout",
			maxTime: 5 * time.Second,
		},
		{
			name: "non-JSON body",
			respond: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, "<html>"+partial+"</html>")
			},
			status: http.StatusBadGateway, code: "upstream_response_invalid",
		},
		{
			name: "stream to a JSON request",
			respond: func(w http.ResponseWriter, r *http.Request) {
				sseHead(w)
				io.WriteString(w, "data: [DONE]\n\n")
			},
			status: http.StatusBadGateway, code: "upstream_unexpected_stream",
		},
		{
			name: "JSON to a stream request", stream: true,
			respond: func(w http.ResponseWriter, r *http.Request) {
				jsonReply(completionJSON)(w, r, nil)
			},
			status: http.StatusBadGateway, code: "upstream_not_streaming",
		},
		{
			name: "stream ends without [DONE]", stream: true,
			respond: func(w http.ResponseWriter, r *http.Request) {
				sseHead(w)
				io.WriteString(w, "data: "+chunk(`{}`, "stop")+"\n\n")
			},
			status: http.StatusBadGateway, code: "upstream_stream_incomplete",
		},
		{
			name: "connection cut mid-stream", stream: true,
			respond: func(w http.ResponseWriter, r *http.Request) {
				sseHead(w)
				panic(http.ErrAbortHandler) // closes the connection without ending the body
			},
			status: http.StatusBadGateway, code: "upstream_stream_incomplete",
		},
		{
			name: "SSE error event", stream: true,
			respond: func(w http.ResponseWriter, r *http.Request) {
				sseHead(w)
				io.WriteString(w, "event: error\ndata: {\"error\":{\"message\":\"overloaded\"}}\n\ndata: [DONE]\n\n")
			},
			status: http.StatusBadGateway, code: "upstream_stream_error",
		},
		{
			name: "error object in a chunk", stream: true,
			respond: func(w http.ResponseWriter, r *http.Request) {
				sseHead(w)
				io.WriteString(w, "data: {\"error\":{\"message\":\"overloaded\"}}\n\ndata: [DONE]\n\n")
			},
			status: http.StatusBadGateway, code: "upstream_stream_error",
		},
		{
			name: "chunk that is not JSON", stream: true,
			respond: func(w http.ResponseWriter, r *http.Request) {
				sseHead(w)
				io.WriteString(w, "data: {not json\n\ndata: [DONE]\n\n")
			},
			status: http.StatusBadGateway,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ []byte) { tc.respond(w, r) })
			var log ctxLog
			gw := newGateway(t, gatewayConfig{upstream: up.URL, timeout: tc.timeout, policy: log.wrap(nil)})
			start := time.Now()
			status, h, body := gw.post(t, chatBody("hi", tc.stream), nil)
			elapsed := time.Since(start)
			e := errorBody(t, body)
			if status != tc.status || e.Type != typeUpstream || (tc.code != "" && e.Code != tc.code) {
				t.Fatalf("status %d type %q code %q, want %d %q %q: %s", status, e.Type, e.Code, tc.status, typeUpstream, tc.code, body)
			}
			if h.Get("Content-Type") != "application/json" {
				t.Errorf("Content-Type = %q", h.Get("Content-Type"))
			}
			noContent(t, body, partial, "overloaded", "Hello")
			if tc.maxTime > 0 && (elapsed < tc.timeout || elapsed > tc.maxTime) {
				t.Errorf("answered after %v; want between the %v timeout and %v", elapsed, tc.timeout, tc.maxTime)
			}
			equalPoints(t, gw.records.points(""), enforcement.AgentStartup, enforcement.Input, enforcement.PreModelCall, enforcement.AgentShutdown)
			checkGapless(t, gw.records.all())
			if got := log.shutdownReasons(""); len(got) != 1 || got[0] != enforcement.ShutdownError {
				t.Errorf("shutdown reasons = %v, want [error]", got)
			}
		})
	}
}

// A managed session survives an upstream failure: no shutdown, and the next
// request continues the sequence.
func TestUpstreamFailureKeepsManagedSession(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if fail.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		jsonReply(completionJSON)(w, r, body)
	})
	gw := newGateway(t, gatewayConfig{upstream: up.URL})
	hdr := map[string]string{HeaderSession: "m-fail"}
	if status, _, body := gw.post(t, chatBody("hi", false), hdr); status != http.StatusBadGateway {
		t.Fatalf("status %d: %s", status, body)
	}
	fail.Store(false)
	if status, _, body := gw.post(t, chatBody("hi", false), hdr); status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	// The retry's "hi" was judged as an input by the failed call: the
	// session does not judge it again.
	equalPoints(t, gw.records.points("m-fail"), enforcement.AgentStartup, enforcement.Input, enforcement.PreModelCall,
		enforcement.PreModelCall, enforcement.PostModelCall, enforcement.Output)
	checkGapless(t, gw.records.all())
}

// A client that goes away cancels the upstream call promptly, and the
// per-request session still closes with agent_shutdown (cancelled).
func TestClientDisconnectCancelsUpstream(t *testing.T) {
	cases := []struct {
		name   string
		stream bool
		// headFirst sends the SSE headers and one chunk before blocking, so
		// the gateway is buffering the stream when the client leaves.
		headFirst bool
	}{
		{"waiting for the response", false, false},
		{"waiting for the stream", true, false},
		{"buffering the stream", true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			arrived := make(chan struct{})
			cancelled := make(chan time.Time, 1)
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
				if tc.headFirst {
					w.Header().Set("Content-Type", "text/event-stream")
					io.WriteString(w, "data: "+chunk(`{"role":"assistant","content":"`+partial+`"}`, "")+"\n\n")
					w.(http.Flusher).Flush()
				}
				close(arrived)
				select {
				case <-r.Context().Done():
					cancelled <- time.Now()
				case <-time.After(10 * time.Second):
				}
			})
			var log ctxLog
			gw := newGateway(t, gatewayConfig{upstream: up.URL, policy: log.wrap(nil)})

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errc := make(chan error, 1)
			go func() {
				_, _, _, err := send(ctx, http.MethodPost, gw.URL+"/v1/chat/completions", chatBody("hi", tc.stream), nil)
				errc <- err
			}()
			select {
			case <-arrived:
			case <-time.After(5 * time.Second):
				t.Fatal("the request never reached the upstream")
			}
			cancelledAt := time.Now()
			cancel()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Fatalf("client error = %v", err)
			}
			select {
			case at := <-cancelled:
				if d := at.Sub(cancelledAt); d > 2*time.Second {
					t.Fatalf("the upstream saw the cancellation after %v", d)
				}
			case <-time.After(2 * time.Second):
				t.Fatal("the upstream call was not cancelled within 2s")
			}
			waitFor(t, 5*time.Second, "agent_shutdown", func() bool {
				return countPoint(gw.records.all(), enforcement.AgentShutdown) == 1
			})
			equalPoints(t, gw.records.points(""), enforcement.AgentStartup, enforcement.Input, enforcement.PreModelCall, enforcement.PostModelCall, enforcement.AgentShutdown)
			checkGapless(t, gw.records.all())
			checkCutPost(t, gw.records.all()[3])
			if len(log.at(enforcement.PostModelCall)) != 0 {
				t.Fatal("an interceptor was given a post_model_call context for a call that has no response")
			}
			if got := log.shutdownReasons(""); len(got) != 1 || got[0] != enforcement.ShutdownCancelled {
				t.Fatalf("shutdown reasons = %v, want [cancelled]", got)
			}
		})
	}
}

// checkCutPost checks the post_model_call record of a call cut before its
// response: a schema-valid host failure (deny host_error:context_invalid,
// null identities, no interceptor decided) that quotes nothing.
func checkCutPost(t *testing.T, rec *enforcement.Record) {
	t.Helper()
	if rec.InterceptionPoint != enforcement.PostModelCall || rec.Verdict.Decision != enforcement.DecisionDeny || rec.Verdict.Reason != enforcement.ReasonContextInvalid {
		t.Fatalf("cut call's record: %s %s %s, want post_model_call deny %s", rec.InterceptionPoint, rec.Verdict.Decision, rec.Verdict.Reason, enforcement.ReasonContextInvalid)
	}
	if rec.InputIdentity != nil || rec.EnforcedIdentity != nil || rec.DecidedBy != nil || rec.Timestamp == nil || rec.Sequence < 0 {
		t.Fatalf("cut call's record: identities %v/%v, decided_by %v, timestamp %v, sequence %d", rec.InputIdentity, rec.EnforcedIdentity, rec.DecidedBy, rec.Timestamp, rec.Sequence)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := specschema.Load()
	if err != nil {
		t.Fatal(err)
	}
	if err := schemas.ValidateJSON("", b); err != nil {
		t.Fatalf("cut call's record violates the record schema: %v\n%s", err, b)
	}
}
