package jsonvalue

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// benchContext builds a deterministic pre_tool_call-style context of at
// least size bytes of compact JSON: a chat transcript whose assistant turns
// carry tool calls with nested arguments, plus the usual envelope fields.
func benchContext(tb testing.TB, size int) any {
	tb.Helper()
	words := []string{"the", "agent", "calls", "a", "tool", "with", "\"quoted\"", "arguments;", "résumé", "naïve", "→", "日本語", "line\nbreak", "tab\there", "emoji 😀"}
	text := func(i, n int) string {
		var b strings.Builder
		for j := range n {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[(i*7+j*3)%len(words)])
		}
		return b.String()
	}
	var messages []any
	ctx := map[string]any{
		"spec":               "agent-hooks/0.1",
		"interception_point": "pre_tool_call",
		"timestamp":          "2026-08-21T10:00:00Z",
		"sequence":           json.Number("7"),
		"agent":              map[string]any{"id": "agent-1", "framework": "bench", "version": "1.0.0"},
		"session":            map[string]any{"id": "sess-42", "user": map[string]any{"id": "u-9", "tenant": "t-1"}},
		"tools_registered":   []any{"fetch", "search", "write_file"},
	}
	args := map[string]any{
		"url":     "https://example.com/api/v1/items?id=18446744073709551616",
		"method":  "POST",
		"headers": map[string]any{"content-type": "application/json", "x-trace": "abc123"},
		"body":    map[string]any{"items": []any{json.Number("1"), json.Number("2.5"), json.Number("-3e-7")}, "flag": true, "none": nil},
	}
	ctx["tool_call"] = map[string]any{"id": "call-0", "name": "fetch", "args": args}
	ctx["target"] = args
	ctx["messages"] = messages
	// Track the size incrementally (each message adds its own encoding
	// plus a comma) so building the 1 MiB context stays linear.
	total := len(mustMarshal(tb, ctx)) - len("null") + len("[]")
	for i := 0; total < size; i++ {
		id := "call-" + strconv.Itoa(i)
		msg := map[string]any{"role": "user", "content": text(i, 12)}
		if i%2 == 1 {
			msg = map[string]any{
				"role":    "assistant",
				"content": text(i, 6),
				"tool_calls": []any{map[string]any{
					"id":   id,
					"type": "function",
					"function": map[string]any{
						"name": "search",
						"arguments": map[string]any{
							"query":   text(i, 4),
							"limit":   json.Number(strconv.Itoa(i)),
							"filters": map[string]any{"lang": []any{"en", "de"}, "after": "2026-01-01", "score": json.Number("0.75")},
							"nested":  map[string]any{"a": map[string]any{"b": map[string]any{"c": []any{true, false, nil}}}},
						},
					},
				}},
			}
		}
		if i%5 == 4 {
			msg = map[string]any{"role": "tool", "tool_call_id": id, "content": text(i, 20), "status": json.Number("200")}
		}
		messages = append(messages, msg)
		total += len(mustMarshal(tb, msg))
		if i > 0 {
			total++
		}
	}
	ctx["messages"] = messages
	return ctx
}

var benchSizes = []struct {
	name string
	size int
}{
	{"1KiB", 1 << 10},
	{"64KiB", 64 << 10},
	{"1MiB", 1 << 20},
}

func stdRoundTrip(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var out any
	err = d.Decode(&out)
	return out, err
}

func BenchmarkDeepCopy(b *testing.B) {
	for _, sz := range benchSizes {
		ctx := benchContext(b, sz.size)
		b.Run(sz.name+"/jsonvalue", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				DeepCopy(ctx)
			}
		})
		b.Run(sz.name+"/encoding_json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := stdRoundTrip(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCheck(b *testing.B) {
	lim := Limits{MaxBytes: 5 << 20, MaxDepth: 128}
	for _, sz := range benchSizes {
		ctx := benchContext(b, sz.size)
		b.Run(sz.name+"/jsonvalue", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := Check(ctx, lim); err != nil {
					b.Fatal(err)
				}
			}
		})
		// The usual alternative: measure size by encoding.
		b.Run(sz.name+"/encoding_json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				out, err := json.Marshal(ctx)
				if err != nil || len(out) > lim.MaxBytes {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkMarshal(b *testing.B) {
	for _, sz := range benchSizes {
		ctx := benchContext(b, sz.size)
		b.Run(sz.name+"/jsonvalue", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Marshal(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(sz.name+"/encoding_json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var buf bytes.Buffer
				e := json.NewEncoder(&buf)
				e.SetEscapeHTML(false)
				if err := e.Encode(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, sz := range benchSizes {
		data, err := Marshal(benchContext(b, sz.size))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(sz.name+"/jsonvalue", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := Decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(sz.name+"/encoding_json", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				d := json.NewDecoder(bytes.NewReader(data))
				d.UseNumber()
				var v any
				if err := d.Decode(&v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEqual(b *testing.B) {
	for _, sz := range benchSizes {
		x := benchContext(b, sz.size)
		y := DeepCopy(x)
		b.Run(sz.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !Equal(x, y) {
					b.Fatal("unequal")
				}
			}
		})
	}
}

func TestBenchContextShape(t *testing.T) {
	for _, sz := range benchSizes {
		v := benchContext(t, sz.size)
		out := mustMarshal(t, v)
		if len(out) < sz.size || len(out) > sz.size*2 {
			t.Errorf("%s context is %d bytes", sz.name, len(out))
		}
		if err := Check(v, Limits{MaxDepth: 128}); err != nil {
			t.Error(err)
		}
		if got, want := string(out), stdCompact(t, v); got != want {
			t.Errorf("%s: Marshal differs from encoding/json", sz.name)
		}
	}
}
