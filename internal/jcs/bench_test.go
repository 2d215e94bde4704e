package jcs

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	gowebpki "github.com/gowebpki/jcs"

	"github.com/hooks-gateway/hooks-gateway/internal/cputime"
)

// benchSizes are the canonical sizes of the generated contexts.
var benchSizes = []struct {
	name string
	size int
}{
	{"1KiB", 1 << 10},
	{"64KiB", 64 << 10},
	{"1MiB", 1 << 20},
}

// genContext builds a deterministic pre_model_call-shaped context whose
// canonical form is at least size bytes: a conversation of prose
// messages (mostly ASCII, some non-ASCII, escapes), tool calls with
// numeric arguments and tool results with small records. It goes through
// JSON text and Decoder.UseNumber so numbers are json.Number, as in
// production.
func genContext(tb testing.TB, size int) any {
	tb.Helper()
	r := rand.New(rand.NewPCG(1, uint64(size)))
	words := []string{
		"the", "agent", "calls", "a", "tool", "with", "arguments", "and",
		"policy", "denies", "réponse", "naïve", "données", "数据", "🙂",
		"quote\"d", "back\\slash", "tab\there", "line\nbreak", "<b>&amp;</b>",
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
	ctx := map[string]any{
		"spec":               "agent-hooks/0.1",
		"interception_point": "pre_model_call",
		"timestamp":          "2026-01-01T00:00:00.000Z",
		"sequence":           2,
		"agent":              map[string]any{"id": "agent-1", "framework": "reference"},
		"session":            map[string]any{"id": "sess-1"},
		"model":              map[string]any{"id": "gpt-x"},
		"target":             map[string]any{"model": "gpt-x"},
	}
	base, err := json.Marshal(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	total := len(base) + len("messages") + 5 // key, quotes, colon, brackets
	for i := 0; ; i++ {
		if total >= size {
			ctx["messages"] = messages
			text, err := json.Marshal(ctx)
			if err != nil {
				tb.Fatal(err)
			}
			var v any
			decodeUseNumber(tb, text, &v)
			return v
		}
		switch i % 4 {
		case 0, 1:
			role := []string{"user", "assistant"}[i%2]
			messages = append(messages, map[string]any{"role": role, "content": prose(8 + r.IntN(40))})
		case 2:
			messages = append(messages, map[string]any{
				"role": "assistant",
				"tool_calls": []any{map[string]any{
					"id":   fmt.Sprintf("call_%d", i),
					"name": "search",
					"args": map[string]any{
						"query":     prose(4),
						"limit":     r.IntN(100),
						"threshold": r.Float64(),
						"filters":   map[string]any{"lang": "en", "since": 1700000000 + r.IntN(1e6), "strict": r.IntN(2) == 1},
					},
				}},
			})
		case 3:
			rows := make([]any, 3)
			for j := range rows {
				rows[j] = map[string]any{
					"id":    fmt.Sprintf("%019d", r.Uint64()>>1),
					"score": r.NormFloat64() * 1e3,
					"rank":  j,
					"title": prose(5),
					"tags":  []any{"a", "b", nil, true},
				}
			}
			messages = append(messages, map[string]any{
				"role":    "tool",
				"content": map[string]any{"results": rows, "total": r.IntN(1 << 30)},
			})
		}
		m, err := json.Marshal(messages[len(messages)-1])
		if err != nil {
			tb.Fatal(err)
		}
		total += len(m) + 1 // element and comma
	}
}

// benchLoop runs fn b.N times and also reports process CPU time per op,
// which, unlike ns/op, stays meaningful when other work competes for the
// machine's cores.
func benchLoop(b *testing.B, fn func() error) {
	b.ReportAllocs()
	start := cputime.Process()
	for b.Loop() {
		if err := fn(); err != nil {
			b.Fatal(err)
		}
	}
	cputime.ReportPerOp(b, start)
}

func BenchmarkCanonicalize(b *testing.B) {
	for _, s := range benchSizes {
		v := genContext(b, s.size)
		b.Run(s.name, func(b *testing.B) {
			out, _ := Canonicalize(v)
			b.SetBytes(int64(len(out)))
			benchLoop(b, func() error {
				_, err := Canonicalize(v)
				return err
			})
		})
	}
}

// BenchmarkAppend reuses the destination buffer, the cheapest way to get
// canonical bytes.
func BenchmarkAppend(b *testing.B) {
	for _, s := range benchSizes {
		v := genContext(b, s.size)
		b.Run(s.name, func(b *testing.B) {
			buf, _ := Append(nil, v)
			b.SetBytes(int64(len(buf)))
			benchLoop(b, func() (err error) {
				buf, err = Append(buf[:0], v)
				return err
			})
		})
	}
}

func BenchmarkSHA256Identity(b *testing.B) {
	for _, s := range benchSizes {
		v := genContext(b, s.size)
		b.Run(s.name, func(b *testing.B) {
			out, _ := Canonicalize(v)
			b.SetBytes(int64(len(out)))
			benchLoop(b, func() error {
				_, err := SHA256Identity(v, DefaultMaxDepth)
				return err
			})
		})
	}
}

func BenchmarkCheckIntegerDomain(b *testing.B) {
	for _, s := range benchSizes {
		v := genContext(b, s.size)
		b.Run(s.name, func(b *testing.B) {
			benchLoop(b, func() error { return CheckIntegerDomain(v) })
		})
	}
}

// BenchmarkMarshal is the yardstick: encoding/json on the same tree
// (non-canonical output).
func BenchmarkMarshal(b *testing.B) {
	for _, s := range benchSizes {
		v := genContext(b, s.size)
		b.Run(s.name, func(b *testing.B) {
			out, _ := Canonicalize(v)
			b.SetBytes(int64(len(out)))
			benchLoop(b, func() error {
				_, err := json.Marshal(v)
				return err
			})
		})
	}
}

// BenchmarkGowebpki is the alternative: json.Marshal, then
// github.com/gowebpki/jcs.Transform of the text.
func BenchmarkGowebpki(b *testing.B) {
	for _, s := range benchSizes {
		v := genContext(b, s.size)
		b.Run(s.name, func(b *testing.B) {
			out, _ := Canonicalize(v)
			b.SetBytes(int64(len(out)))
			benchLoop(b, func() error {
				text, err := json.Marshal(v)
				if err != nil {
					return err
				}
				_, err = gowebpki.Transform(text)
				return err
			})
		})
	}
}
