package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/metrics"
)

// callSink records each call the emitter makes on it: the points of the
// records it was given, one slice per call.
type callSink struct {
	mu    sync.Mutex
	calls [][]enforcement.Point
}

func (s *callSink) WriteRecord(_ context.Context, r *enforcement.Record) error {
	return s.WriteRecords(context.Background(), []*enforcement.Record{r})
}

func (s *callSink) WriteRecords(_ context.Context, rs []*enforcement.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	call := make([]enforcement.Point, len(rs))
	for i, r := range rs {
		call[i] = r.InterceptionPoint
	}
	s.calls = append(s.calls, call)
	return nil
}

// written is how many records the sink has taken.
func (s *callSink) written() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		n += len(c)
	}
	return n
}

func (s *callSink) snapshot() [][]enforcement.Point {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]enforcement.Point(nil), s.calls...)
}

// TestHeldRecordsReachSinkBeforeEffects: a request's records reach the
// sink in one call per exchange — the records before the model call
// before the upstream gets the request, the answer's before the client
// gets a byte of it — on the JSON, buffered-stream and denied paths.
func TestHeldRecordsReachSinkBeforeEffects(t *testing.T) {
	const (
		startup  = enforcement.AgentStartup
		input    = enforcement.Input
		pre      = enforcement.PreModelCall
		post     = enforcement.PostModelCall
		output   = enforcement.Output
		shutdown = enforcement.AgentShutdown
	)
	deny := func(p enforcement.Point) policy {
		return func(c enforcement.Context) enforcement.Verdict {
			if c.Point() == p {
				return enforcement.Deny("policy:test", "denied")
			}
			return enforcement.Allow()
		}
	}
	for _, tc := range []struct {
		name       string
		policy     policy
		stream     bool
		atUpstream int // records written when the upstream got the request
		calls      [][]enforcement.Point
	}{
		{name: "json", atUpstream: 3,
			calls: [][]enforcement.Point{{startup, input, pre}, {post, output, shutdown}}},
		{name: "buffered stream", stream: true, atUpstream: 3,
			calls: [][]enforcement.Point{{startup, input, pre}, {post, output, shutdown}}},
		{name: "input denied", policy: deny(input), atUpstream: -1,
			calls: [][]enforcement.Point{{startup, input, shutdown}}},
		{name: "answer denied", policy: deny(post), atUpstream: 3,
			calls: [][]enforcement.Point{{startup, input, pre}, {post, shutdown}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &callSink{}
			atUpstream := -1
			reply := jsonReply(completionJSON)
			if tc.stream {
				reply = sseReply(chunk(`{"role":"assistant","content":"Hello"}`, ""), chunk(`{"content":" there"}`, "stop"), "[DONE]")
			}
			u := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				atUpstream = sink.written()
				reply(w, r, body)
			})
			g := newGateway(t, gatewayConfig{upstream: u.URL + "/v1", policy: tc.policy, sink: sink})
			body := `{"model":"gpt-test","messages":[{"role":"user","content":"hi"}]`
			if tc.stream {
				body += `,"stream":true`
			}
			req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/chat/completions", strings.NewReader(body+"}"))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			// The answer's head is here: everything its verdicts allowed
			// has been written.
			atAnswer := sink.written()
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			want := 0
			for _, c := range tc.calls {
				want += len(c)
			}
			if atAnswer != want {
				t.Errorf("records written when the answer arrived: %d, want %d", atAnswer, want)
			}
			if atUpstream != tc.atUpstream {
				t.Errorf("records written when the upstream got the request: %d, want %d", atUpstream, tc.atUpstream)
			}
			got := sink.snapshot()
			if len(got) != len(tc.calls) {
				t.Fatalf("sink calls %v, want %v", got, tc.calls)
			}
			for i := range got {
				if !slices.Equal(got[i], tc.calls[i]) {
					t.Errorf("sink call %d: %v, want %v", i, got[i], tc.calls[i])
				}
			}
		})
	}
}

// TestHeldRecordsWrittenWhenHandlerPanics: a handler that panics (net/http
// recovers it; http.ErrAbortHandler aborts a response on purpose) still
// has the records it held written: every record is eventually written.
func TestHeldRecordsWrittenWhenHandlerPanics(t *testing.T) {
	sink := &callSink{}
	em, err := enforcement.NewEmitter(enforcement.Options{
		Interceptors: []enforcement.Registration{{Name: "test", Interceptor: policy(allowAll)}},
		Sink:         sink,
	})
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Metrics: metrics.New(metrics.Options{NoRuntimeCollectors: true})})
	h := s.instrument(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := &enforcement.Builder{Agent: enforcement.Agent{ID: "agent-1"}, SessionID: "sess-1", Sequence: &enforcement.Counter{}}
		c, err := b.Build(r.Context(), enforcement.AgentStartup, enforcement.StartupFields(nil))
		if err != nil {
			t.Error(err)
			return
		}
		if _, err := em.EmitUnchecked(r.Context(), c); err != nil {
			t.Error(err)
			return
		}
		panic(http.ErrAbortHandler)
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	if resp, err := http.Get(srv.URL); err == nil {
		resp.Body.Close()
		t.Fatal("the aborted request got an answer")
	}
	if n := sink.written(); n != 1 {
		t.Errorf("records written after the handler panicked: %d, want 1", n)
	}
}

// writeSpy is a ResponseWriter that notes, at the first call of each of
// WriteHeader, Write and Flush, how many records the sink had taken.
type writeSpy struct {
	http.ResponseWriter
	sink *callSink
	seen map[string]int
}

func (w *writeSpy) note(call string) {
	if _, ok := w.seen[call]; !ok {
		w.seen[call] = w.sink.written()
	}
}

func (w *writeSpy) WriteHeader(code int) { w.note("WriteHeader"); w.ResponseWriter.WriteHeader(code) }

func (w *writeSpy) Write(b []byte) (int, error) { w.note("Write"); return w.ResponseWriter.Write(b) }

func (w *writeSpy) Flush() { w.note("Flush") }

// Each way the answer reaches the client through statusWriter (a status
// line, a body write, a flush) writes the request's held records first.
// The end-to-end test above cannot tell: net/http keeps a small answer in
// its buffer until the handler returns, after the deferred flush.
func TestStatusWriterFlushesHeldRecordsFirst(t *testing.T) {
	for _, first := range []string{"WriteHeader", "Write", "Flush"} {
		sink := &callSink{}
		em, err := enforcement.NewEmitter(enforcement.Options{
			Interceptors: []enforcement.Registration{{Name: "allow", Interceptor: policy(allowAll)}},
			Sink:         sink,
		})
		if err != nil {
			t.Fatal(err)
		}
		var held enforcement.HeldRecords
		ctx := enforcement.WithHeldRecords(context.Background(), &held)
		b := &enforcement.Builder{Agent: enforcement.Agent{ID: "a", Framework: "f"}, SessionID: "s", Sequence: &enforcement.Counter{}}
		c, err := b.Build(ctx, enforcement.AgentStartup, enforcement.StartupFields(nil))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := em.EmitUnchecked(ctx, c); err != nil {
			t.Fatal(err)
		}
		if n := sink.written(); n != 0 {
			t.Fatalf("the record reached the sink before any flush (%d)", n)
		}
		spy := &writeSpy{ResponseWriter: httptest.NewRecorder(), sink: sink, seen: map[string]int{}}
		sw := &statusWriter{ResponseWriter: spy, held: &held}
		switch first {
		case "WriteHeader":
			sw.WriteHeader(http.StatusOK)
		case "Write":
			sw.Write([]byte("{}"))
		case "Flush":
			sw.Flush()
		}
		if got := spy.seen[first]; got != 1 {
			t.Errorf("%s reached the client with %d of 1 held records written", first, got)
		}
	}
}
