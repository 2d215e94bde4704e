package interceptors

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"unicode/utf8"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/cputime"
)

// benchTools is a request's tool declarations as the gateway projects
// them: names, prose descriptions and parameter schemas, with no secret.
func benchTools() []any {
	tools := make([]any, 0, 8)
	for i := range 8 {
		tools = append(tools, map[string]any{
			"name":        fmt.Sprintf("tool_%d", i),
			"description": "Looks a record up by its id and returns the fields the caller names, at most 50 per call.",
			"schema": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"id":     map[string]any{"type": "string", "description": "The record id, such as r-1234."},
					"fields": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
					"limit":  map[string]any{"type": "integer", "minimum": json.Number("1"), "maximum": json.Number("50")},
				},
				"required": []any{"id"},
			},
		})
	}
	return tools
}

// benchRequest is a pre_model_call context over msgs with tools and
// model.params, as the gateway builds it for a tool-using agent.
func benchRequest(msgs []any) enforcement.Context {
	c := at(enforcement.PreModelCall, msgs)
	c["tools"] = benchTools()
	c["model"] = map[string]any{"id": "gpt-4o", "params": map[string]any{
		"temperature": json.Number("0.2"),
		"tool_choice": "auto",
		"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{
			"name": "answer", "strict": true,
			"schema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}},
		}},
	}}
	return c
}

// scanPolicies are the policies the scan benchmarks run, each with the
// decision it must reach on the benchmark messages.
var scanPolicies = []struct {
	name, src string
	want      enforcement.Decision
}{
	{"regex-deny", "  - name: r\n    type: regex\n    action: deny\n    patterns: ['sk-[A-Za-z0-9_-]{20,}', 'AKIA[0-9A-Z]{16}']\n", enforcement.DecisionAllow},
	{"regex-redact", "  - name: r\n    type: regex\n    action: redact\n    patterns: ['[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}']\n", enforcement.DecisionTransform},
	{"redact", "  - name: r\n    type: redact\n", enforcement.DecisionTransform},
	{"egress-deny", "  - name: e\n    type: egress\n    allow_hosts: ['*.example.com']\n", enforcement.DecisionAllow},
}

// benchParts returns msgs with each message's content split into n text
// parts at rune boundaries, as clients send a prompt in several blocks
// (Claude Code's reminders beside the prompt, input_text parts): the
// joined text equals the original content.
func benchParts(msgs []any, n int) []any {
	out := make([]any, len(msgs))
	for i, m := range msgs {
		text := m.(map[string]any)["content"].(string)
		parts := make([]any, 0, n)
		for k := range n {
			lo, hi := runeCut(text, len(text)*k/n), runeCut(text, len(text)*(k+1)/n)
			parts = append(parts, map[string]any{"type": "text", "text": text[lo:hi]})
		}
		out[i] = map[string]any{"role": "user", "content": parts}
	}
	return out
}

// runeCut moves i back to the start of the rune it falls in.
func runeCut(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// benchIntercept runs ic on c, n bytes of text, until the benchmark
// stops, failing on an error or any decision but want. It reports the CPU
// time per call too, steadier than wall time on a shared machine.
func benchIntercept(b *testing.B, ic enforcement.Interceptor, c enforcement.Context, n int, want enforcement.Decision) {
	b.SetBytes(int64(n))
	b.ReportAllocs()
	start := cputime.Process()
	for b.Loop() {
		v, err := ic.Intercept(context.Background(), c)
		if err != nil || v.Decision != want {
			b.Fatalf("%+v, %v", v, err)
		}
	}
	cputime.ReportPerOp(b, start)
}

// BenchmarkScan measures regex (deny and redact), redact and egress over
// the redact benchmark's messages, with the request's tools and
// model.params beside them ("request") and without ("messages"), and with
// each message's content split into four text parts ("parts"), on 1 KiB
// and 64 KiB message arrays.
func BenchmarkScan(b *testing.B) {
	for _, p := range scanPolicies {
		reg, err := Build(specsOf(b, p.src)[0], Env{})
		if err != nil {
			b.Fatal(err)
		}
		ic := reg.Interceptor
		for _, size := range []int{1 << 10, 64 << 10} {
			msgs := benchMessages(size)
			n := contentBytes(msgs)
			for _, shape := range []string{"messages", "request", "parts"} {
				c := at(enforcement.PreModelCall, msgs)
				switch shape {
				case "request":
					c = benchRequest(msgs)
				case "parts":
					c = at(enforcement.PreModelCall, benchParts(msgs, 4))
				}
				b.Run(fmt.Sprintf("%s/%s/%dKiB", p.name, shape, size>>10), func(b *testing.B) {
					benchIntercept(b, ic, c, n, p.want)
				})
			}
		}
	}
}
