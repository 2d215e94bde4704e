package enforcement

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// fixedNow keeps timestamps deterministic so identities are reproducible.
func fixedNow() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC) }

func newTestBuilder() *Builder {
	return &Builder{
		Agent:     Agent{ID: "agent-1", Framework: "test-fw"},
		SessionID: "sess-1",
		Sequence:  &Counter{},
		Now:       fixedNow,
	}
}

// pointFields returns representative conditional members for every point.
func pointFields(p Point) map[string]any {
	switch p {
	case AgentStartup:
		return StartupFields([]string{"search", "fetch"})
	case Input:
		return InputFields("hello", "user")
	case PreModelCall:
		return PreModelFields("model-x", []any{
			map[string]any{"role": "user", "content": "hello"},
			map[string]any{"role": "assistant", "content": "hi", "meta": map[string]any{"n": 1}},
		})
	case PostModelCall:
		return PostModelFields("model-x", ModelResponse{
			ToolCalls:    []ToolCall{{ID: "tc-1", Name: "search", Args: map[string]any{"q": "go"}}},
			FinishReason: "tool_calls",
		})
	case PreToolCall:
		return PreToolFields(ToolCall{ID: "tc-1", Name: "fetch", Args: map[string]any{"url": "https://example.com", "n": 3}})
	case PostToolCall:
		return PostToolFields(ToolCall{ID: "tc-1", Name: "fetch", Args: map[string]any{"url": "https://example.com"}},
			map[string]any{"status": 200, "body": "ok"}, false)
	case Output:
		return OutputFields("done")
	case AgentShutdown:
		return ShutdownFields(ShutdownCompleted)
	}
	panic("unknown point " + string(p))
}

// buildAt builds a valid context for p with b (a fresh builder when nil).
func buildAt(t testing.TB, b *Builder, p Point) Context {
	t.Helper()
	if b == nil {
		b = newTestBuilder()
	}
	c, err := b.Build(context.Background(), p, pointFields(p))
	if err != nil {
		t.Fatalf("Build(%s): %v", p, err)
	}
	return c
}

func newTestEmitter(t testing.TB, opts Options) *Emitter {
	t.Helper()
	e, err := NewEmitter(opts)
	if err != nil {
		t.Fatalf("NewEmitter: %v", err)
	}
	return e
}

func reg(name string, f func(context.Context, Context) (Verdict, error)) Registration {
	return Registration{Name: name, Interceptor: InterceptorFunc(f)}
}

func allowReg() Registration {
	return reg("", func(context.Context, Context) (Verdict, error) { return Allow(), nil })
}

func verdictReg(v Verdict) Registration {
	return reg("", func(context.Context, Context) (Verdict, error) { return v, nil })
}

// countingReg returns an allow interceptor and the number of its calls.
func countingReg() (Registration, *atomic.Int64) {
	var n atomic.Int64
	return reg("", func(context.Context, Context) (Verdict, error) {
		n.Add(1)
		return Allow(), nil
	}), &n
}

// collectSink keeps every record it receives.
type collectSink struct {
	mu   sync.Mutex
	recs []*Record
}

func (s *collectSink) WriteRecord(_ context.Context, r *Record) error {
	s.mu.Lock()
	s.recs = append(s.recs, r)
	s.mu.Unlock()
	return nil
}

func (s *collectSink) records() []*Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Record(nil), s.recs...)
}

// recordWire marshals r and decodes the JSON back with json.Number numbers.
func recordWire(t testing.TB, r *Record) (map[string]any, []byte) {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("marshal record: %v", err)
	}
	tree, err := jsonvalue.Decode(b)
	if err != nil {
		t.Fatalf("record is not valid JSON: %v\n%s", err, b)
	}
	m, ok := tree.(map[string]any)
	if !ok {
		t.Fatalf("record is not an object: %s", b)
	}
	return m, b
}

func decodeNumber(t testing.TB, data []byte, into any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(into); err != nil {
		t.Fatalf("decode: %v", err)
	}
}

func derefInt(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func strp(s string) *string { return &s }

// echoResolver answers every request with outcome and v, echoing the
// request identity.
func echoResolver(outcome string, v *Verdict) ApprovalResolver {
	return ApprovalResolverFunc(func(_ context.Context, req ApprovalRequest) (ApprovalResolution, error) {
		return ApprovalResolution{Outcome: outcome, ContextIdentity: req.ContextIdentity, Verdict: v}, nil
	})
}

// mustIdentity returns the jcs-sha256 identity of c.
func mustIdentity(t testing.TB, c Context) string {
	t.Helper()
	id, err := ContextIdentity(c, 0)
	if err != nil {
		t.Fatalf("ContextIdentity: %v", err)
	}
	return id
}

// jsonEqual compares value trees under the CTK's JSON equality.
func jsonEqual(a, b any) bool { return jsonvalue.Equal(a, b) }
