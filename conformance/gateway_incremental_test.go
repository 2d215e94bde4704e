package conformance

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// TestGatewayIncrementalConformance runs every vendored vector through
// the incremental gateway harness on each surface: 51 passed, 0 skipped,
// 0 failed.
func TestGatewayIncrementalConformance(t *testing.T) {
	for _, api := range GatewayIncrementalAPIs() {
		t.Run(string(api), func(t *testing.T) {
			f, err := GatewayIncrementalHarness(api)
			if err != nil {
				t.Fatal(err)
			}
			requireAllPass(t, f)
		})
	}
}

// streamScript is a tool-calling turn whose arguments hold an integer
// beyond float64, then a text answer in three chunks.
func streamScript() []ModelTurn {
	script := bigArgsScript()
	script[1].Respond.Content = "Hello, streamed world!"
	script[1].Respond.Stream = []string{"Hello, ", "streamed ", "world!"}
	return script
}

// incrementalSeam returns api's incremental harness surface (its
// streaming renderer and seam).
func incrementalSeam(t *testing.T, api wire.API) gatewaySurface {
	t.Helper()
	f, err := GatewayIncrementalHarness(api)
	if err != nil {
		t.Fatal(err)
	}
	return f().(*gatewayHarness).surface
}

// serveScripted serves s's scripted upstream to the surface's client,
// which puts prefix before the upstream's path.
func serveScripted(t *testing.T, s gatewaySurface, script []ModelTurn, prefix string) (*httptest.Server, *bodyRecorder) {
	t.Helper()
	rec := &bodyRecorder{next: newScriptedUpstream(s, script)}
	var h http.Handler = rec
	if prefix != "" {
		h = http.StripPrefix(prefix, rec)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, rec
}

// surfacePrefixes is the path each surface's client puts before the
// upstream's path.
var surfacePrefixes = map[wire.API]string{wire.ChatCompletions: "/v1", wire.Responses: "/v1", wire.Messages: ""}

// TestStreamingSeamRoundTrip drives each surface's streaming seam (its
// official streaming client) straight against the scripted upstream's
// native stream, without a gateway: the client must assemble the tool
// call (id and number-exact arguments intact) and the chunked text, every
// request must ask for a stream, and the released text must be exactly
// the text deltas.
func TestStreamingSeamRoundTrip(t *testing.T) {
	for _, api := range GatewayIncrementalAPIs() {
		t.Run(string(api), func(t *testing.T) {
			s := incrementalSeam(t, api)
			srv, rec := serveScripted(t, s, streamScript(), surfacePrefixes[api])
			m := s.newModel(srv.URL, srv.Client(), []Tool{{Name: "wire_transfer"}})
			second := toolRoundTrip(t, m)
			if second.Content != "Hello, streamed world!" || second.FinishReason != "stop" || len(second.ToolCalls) != 0 {
				t.Fatalf("second response = %+v, want the joined chunks, stop, no calls", second)
			}
			inc := m.(incrementalModel)
			if got := inc.releasedOutput(); got != "Hello, streamed world!" {
				t.Errorf("released = %q, want the three chunks", got)
			}
			for k, body := range rec.seen {
				if !strings.Contains(body, `"stream":true`) {
					t.Errorf("request %d does not stream: %s", k, body)
				}
			}
		})
	}
}

// TestStreamingSeamTruncated pins a truncated script without a gateway:
// the upstream flushes its chunks and dies, the client reads them all,
// and the seam fails the call (never a verdict).
func TestStreamingSeamTruncated(t *testing.T) {
	script := []ModelTurn{{Respond: Response{Content: "clean, residue", Stream: []string{"clean, ", "residue"}, StreamTruncated: true, ToolCalls: []ToolCall{}, FinishReason: "stop"}}}
	for _, api := range GatewayIncrementalAPIs() {
		t.Run(string(api), func(t *testing.T) {
			s := incrementalSeam(t, api)
			srv, _ := serveScripted(t, s, script, surfacePrefixes[api])
			m := s.newModel(srv.URL, srv.Client(), nil)
			if err := m.open("user", "go"); err != nil {
				t.Fatal(err)
			}
			_, err := m.call(context.Background(), 0)
			if err == nil || strings.Contains(fmt.Sprint(err), "blocked") {
				t.Fatalf("call = %v, want a failed stream that is no verdict", err)
			}
			inc := m.(incrementalModel)
			if got := inc.releasedOutput(); got != "clean, residue" {
				t.Errorf("released = %q, want both chunks", got)
			}
		})
	}
}
