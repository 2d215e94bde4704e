package enforcement

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

var benchSizes = []struct {
	name string
	size int
}{
	{"1KiB", 1 << 10},
	{"64KiB", 64 << 10},
	{"1MiB", 1 << 20},
}

// benchContext builds a deterministic pre_model_call context whose
// encoding/json form is about size bytes: a chat history of prose turns,
// assistant tool calls with nested arguments and tool results with small
// records, through the Builder (so numbers are json.Number and target
// mirrors messages, as in production).
func benchContext(tb testing.TB, size int) Context {
	tb.Helper()
	r := rand.New(rand.NewPCG(7, uint64(size)))
	words := []string{
		"the", "agent", "calls", "a", "tool", "with", "arguments", "and", "policy",
		"réponse", "données", "数据", "🙂", `quote"d`, "line\nbreak", "<b>&amp;</b>",
	}
	prose := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		return b.String()
	}
	var messages []any
	// messages appear twice in the context (messages and target), plus a
	// fixed envelope of about 250 bytes.
	budget, used := (size-250)/2, 0
	for i := 0; used < budget; i++ {
		var m map[string]any
		switch i % 5 {
		case 0:
			m = map[string]any{"role": "user", "content": prose(6 + r.IntN(30))}
		case 1, 3:
			m = map[string]any{"role": "assistant", "content": prose(10 + r.IntN(40))}
		case 2:
			m = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id":   fmt.Sprintf("call_%d", i),
				"name": "search",
				"args": map[string]any{
					"query":   prose(4),
					"limit":   r.IntN(100),
					"score":   r.Float64(),
					"filters": map[string]any{"lang": "en", "since": 1700000000 + r.IntN(1e6), "tags": []any{"a", "b"}, "strict": r.IntN(2) == 1},
				},
			}}}
		case 4:
			rows := make([]any, 2)
			for j := range rows {
				rows[j] = map[string]any{"id": fmt.Sprintf("%019d", r.Uint64()>>1), "rank": j, "title": prose(5), "score": r.NormFloat64()}
			}
			m = map[string]any{"role": "tool", "tool_call_id": fmt.Sprintf("call_%d", i-2), "content": map[string]any{"results": rows, "total": r.IntN(1 << 30)}}
		}
		b, err := json.Marshal(m)
		if err != nil {
			tb.Fatal(err)
		}
		if used+len(b) > budget && len(messages) > 0 {
			break // stay at or under the nominal size
		}
		used += len(b) + 1
		messages = append(messages, m)
	}
	bld := newTestBuilder()
	bld.Sequence = &Counter{}
	c, err := bld.Build(context.Background(), PreModelCall, PreModelFields("model-x", messages))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func marshalSize(tb testing.TB, c Context) int {
	b, err := json.Marshal(map[string]any(c))
	if err != nil {
		tb.Fatal(err)
	}
	return len(b)
}

// BenchmarkEmit measures one enforce-mode emission (envelope and bounds
// checks, jcs-sha256 identity, a private copy per interceptor, the record)
// with allow interceptors under the default first_deny profile. Plain
// interceptors run under the timeout (a goroutine and a timer per call);
// "nonblocking" ones, like the built-in allow, deny and regex types, run on
// the emission's goroutine.
func BenchmarkEmit(b *testing.B) {
	nonBlockingAllow := Registration{Interceptor: NonBlockingFunc(func(context.Context, Context) (Verdict, error) { return Allow(), nil })}
	for _, sz := range benchSizes {
		c := benchContext(b, sz.size)
		n := marshalSize(b, c)
		for _, k := range []int{1, 5} {
			for _, nb := range []bool{false, true} {
				regs := make([]Registration, k)
				for i := range regs {
					regs[i] = allowReg()
					if nb {
						regs[i] = nonBlockingAllow
					}
				}
				name := fmt.Sprintf("%s/%dinterceptors", sz.name, k)
				if nb {
					name += "/nonblocking"
				}
				e := newTestEmitter(b, Options{Interceptors: regs})
				b.Run(name, func(b *testing.B) {
					b.ReportAllocs()
					b.SetBytes(int64(n))
					ctx := context.Background()
					for b.Loop() {
						if _, err := e.Emit(ctx, c); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkMarshal is the yardstick: encoding/json of the same context.
func BenchmarkMarshal(b *testing.B) {
	for _, sz := range benchSizes {
		c := benchContext(b, sz.size)
		n := marshalSize(b, c)
		b.Run(sz.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(n))
			for b.Loop() {
				if _, err := json.Marshal(map[string]any(c)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestBenchContextSizes keeps the benchmark contexts near their nominal
// sizes and valid, so the emit/marshal ratios stay comparable.
func TestBenchContextSizes(t *testing.T) {
	for _, sz := range benchSizes {
		c := benchContext(t, sz.size)
		if n := marshalSize(t, c); n < sz.size*8/10 || n > sz.size {
			t.Errorf("%s context is %d bytes", sz.name, n)
		}
		if err := ValidateEnvelope(c); err != nil {
			t.Fatal(err)
		}
	}
}
