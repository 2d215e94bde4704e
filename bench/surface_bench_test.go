package main

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	chatwire "github.com/hooks-gateway/hooks-gateway/internal/wire/chat"
)

// benchSurfaces are every surface the bench drives, chat included, for
// the micro-benchmarks.
func benchSurfaces() []surfaceCase {
	chat := surfaceCase{"chat", chatwire.New(chatwire.Options{}), chatRequest, upstreamJSON, upstreamSSE}
	return append([]surfaceCase{chat}, surfaceCases()...)
}

// BenchmarkSurface measures one model call's wire work through the
// wire.Surface contract, without HTTP or policy: parse and project the
// bench's 2 KiB request, render its upstream body, parse (or read and
// assemble) the mock's answer, project it and release it unchanged.
// json-as-released parses the surface's own rendering of the answer
// (what is left when the upstream's members all survive the closed
// world), so the gap to json is what re-rendering costs. cpu-ns/op is
// the process's CPU time per call, steadier than ns/op on a shared
// machine.
func BenchmarkSurface(b *testing.B) {
	o := upstreamOptions{contentBytes: 1024, chunks: 200}
	for _, c := range benchSurfaces() {
		body := c.json(o)
		b.Run(c.name+"/json", func(b *testing.B) { benchJSON(b, c.surface, c.request(2048, false, false), body) })
		b.Run(c.name+"/json-as-released", func(b *testing.B) {
			b.StopTimer()
			req := c.request(2048, false, false)
			released := releasedAnswer(b, c.surface, req, body)
			b.StartTimer()
			benchJSON(b, c.surface, req, released)
		})
		b.Run(c.name+"/stream200", func(b *testing.B) {
			benchStream(b, c.surface, c.request(2048, true, false), joinEvents(c.sse(o)))
		})
	}
}

// benchJSON is one non-streamed call per iteration.
func benchJSON(b *testing.B, s wire.Surface, reqBody, answer []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(reqBody) + len(answer)))
	defer reportCPU(b, processCPU(b))
	for b.Loop() {
		req := parseProjected(b, s, reqBody)
		resp, err := s.ParseResponse(req, answer)
		if err != nil {
			b.Fatal(err)
		}
		resp.Project()
		resp.Usage()
		if _, err := resp.Release(nil); err != nil {
			b.Fatal(err)
		}
	}
}

// benchStream is one streamed call per iteration.
func benchStream(b *testing.B, s wire.Surface, reqBody, sse []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(reqBody) + len(sse)))
	defer reportCPU(b, processCPU(b))
	for b.Loop() {
		req := parseProjected(b, s, reqBody)
		st, err := s.ReadStream(req, bytes.NewReader(sse), 8<<20)
		if err != nil {
			b.Fatal(err)
		}
		st.Response().Project()
		if _, err := st.Release(nil); err != nil {
			b.Fatal(err)
		}
	}
}

// parseProjected parses a request, builds its pre_model_call projection
// and renders its upstream body, as the pipeline does.
func parseProjected(b *testing.B, s wire.Surface, body []byte) wire.Request {
	req, err := s.ParseRequest(body, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Messages()
	req.Tools()
	req.Params()
	if _, err := req.UpstreamBody(nil); err != nil {
		b.Fatal(err)
	}
	return req
}

// releasedAnswer is what the surface releases for answer.
func releasedAnswer(b *testing.B, s wire.Surface, reqBody, answer []byte) []byte {
	req, err := s.ParseRequest(reqBody, nil)
	if err != nil {
		b.Fatal(err)
	}
	resp, err := s.ParseResponse(req, answer)
	if err != nil {
		b.Fatal(err)
	}
	out, err := resp.Release(nil)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// processCPU is the test process's CPU time so far (user + system, from
// /proc, in clock ticks): steadier than wall time on a shared machine.
func processCPU(b *testing.B) time.Duration {
	d, err := cpuTime(os.Getpid())
	if err != nil {
		b.Skipf("no CPU time here: %v", err)
	}
	return d
}

// reportCPU reports the CPU time per iteration since start as cpu-ns/op.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((processCPU(b)-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
