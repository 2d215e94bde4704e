package responses

import (
	"strconv"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/cputime"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/wiretest"
)

// benchRequest is codexRequest without the items a client can only send
// back from an answer (their ids and encrypted content are the gateway's
// seals): it parses under every version of the surface.
var benchRequest = strings.NewReplacer(`"id": "rs_1", `, ``, `, "encrypted_content": "gAAAA=="`, ``, `"id": "fc_1", `, ``).Replace(codexRequestRaw)

// BenchmarkParseRequest parses and projects a Codex-shaped request and
// renders its upstream body.
func BenchmarkParseRequest(b *testing.B) { benchParseRequest(b, benchRequest) }

// BenchmarkParseRequestSealed is BenchmarkParseRequest on the request as
// Codex sends it back: its reasoning and call items carry the gateway's
// seals, which are opened for the upstream.
func BenchmarkParseRequestSealed(b *testing.B) { benchParseRequest(b, codexRequest) }

// benchParseRequest parses and projects request and renders its upstream
// body.
func benchParseRequest(b *testing.B, request string) {
	s := New(Options{Seal: testKeys})
	body := []byte(request)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		r, err := s.ParseRequest(body, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.UpstreamBody(nil); err != nil {
			b.Fatal(err)
		}
	}
}

// benchAnswering parses request for a benchmark of its answer, of size
// bytes, and starts counting allocations.
func benchAnswering(b *testing.B, request string, size int) (*Surface, wire.Request) {
	b.Helper()
	s := New(Options{Seal: testKeys})
	req, err := s.ParseRequest([]byte(request), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(size))
	return s, req
}

// BenchmarkReleaseJSON parses a JSON answer and releases it as projected.
func BenchmarkReleaseJSON(b *testing.B) {
	body := []byte(jsonAnswer)
	s, req := benchAnswering(b, benchRequest, len(body))
	for b.Loop() {
		resp, err := s.ParseResponse(req, body)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := resp.Release(nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadStream reads the Codex-shaped fixture stream whole.
func BenchmarkReadStream(b *testing.B) {
	body := sse(streamEvents("hello", "hello")...)
	s, req := benchAnswering(b, benchRequest, len(body))
	for b.Loop() {
		if _, err := s.ReadStream(req, strings.NewReader(body), 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIncremental150Deltas reads a 150-delta answer and a function
// call as incremental mediation does: Text after every event, a release
// every tenth event while the answer is plain, the tail at the end.
func BenchmarkIncremental150Deltas(b *testing.B) {
	deltas := make([]string, 150)
	for i := range deltas {
		deltas[i] = "token " + strconv.Itoa(i) + " "
	}
	body := sse(plainEvents(deltas, true)...)
	s, req := benchAnswering(b, plainRequest, len(body))
	cpu0 := cputime.Process()
	for b.Loop() {
		r := s.OpenStream(req, strings.NewReader(body), 1<<20)
		wiretest.ReleaseIncrementally(b, r, 10)
	}
	cputime.ReportPerOp(b, cpu0)
}

// BenchmarkReleaseStream reads the fixture stream and releases it as
// projected.
func BenchmarkReleaseStream(b *testing.B) {
	body := sse(streamEvents("hello", "hello")...)
	s, req := benchAnswering(b, benchRequest, len(body))
	for b.Loop() {
		st, err := s.ReadStream(req, strings.NewReader(body), 1<<20)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := st.Release(nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReleaseStream200Deltas reads, assembles, projects and releases
// a 200-delta answer as OpenAI streams it (the proxy's HandlerStream200
// responses stream: full response snapshots, logprobs and obfuscation
// beside each delta).
func BenchmarkReleaseStream200Deltas(b *testing.B) {
	body := string(wiretest.ResponsesStream200())
	s, req := benchAnswering(b, plainRequest, len(body))
	cpu0 := cputime.Process()
	for b.Loop() {
		st, err := s.ReadStream(req, strings.NewReader(body), 1<<20)
		if err != nil {
			b.Fatal(err)
		}
		st.Response().Project()
		if _, err := st.Release(nil); err != nil {
			b.Fatal(err)
		}
	}
	cputime.ReportPerOp(b, cpu0)
}
