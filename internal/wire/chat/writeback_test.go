package chat

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// edit applies a transform to a fresh projection of body.
func edit(t *testing.T, body string, f func(p map[string]any)) (*Response, map[string]any) {
	t.Helper()
	r := mustResponse(t, body)
	p := r.Project()
	f(p)
	return r, p
}

// canonical returns target with its content as the projection of what it
// stands for: a lone text part reads back as a plain string.
func canonical(t testing.TB, r *Response, target map[string]any) map[string]any {
	t.Helper()
	a, err := r.ans.withContent(target["content"])
	if err != nil {
		t.Fatalf("withContent: %v", err)
	}
	out := make(map[string]any, len(target))
	for k, v := range target {
		out[k] = v
	}
	out["content"] = a.content()
	return out
}

func callAt(p map[string]any, i int) map[string]any {
	return p["tool_calls"].([]any)[i].(map[string]any)
}

// replaceOnce replaces the single occurrence of old in s.
func replaceOnce(t *testing.T, s, old, repl string) string {
	t.Helper()
	if n := strings.Count(s, old); n != 1 {
		t.Fatalf("%q occurs %d times", old, n)
	}
	return strings.Replace(s, old, repl, 1)
}

func TestWriteBack(t *testing.T) {
	weatherCall := toolCallResponse[strings.Index(toolCallResponse, `{
            "id": "call_weather"`):strings.Index(toolCallResponse, `,
          {
            "id": "call_transfer"`)]
	transferCall := toolCallResponse[strings.Index(toolCallResponse, `{
            "id": "call_transfer"`):strings.Index(toolCallResponse, `
        ],
        "refusal"`)]
	callsArray := toolCallResponse[strings.Index(toolCallResponse, `[
          {
            "id": "call_weather"`):strings.Index(toolCallResponse, `,
        "refusal"`)]

	tests := []struct {
		name   string
		body   string
		change func(p map[string]any)
		want   func(t *testing.T) string
	}{
		{
			name:   "text redacted",
			body:   textResponse,
			change: func(p map[string]any) { p["content"] = "Your card [REDACTED] is on file." },
			want: func(t *testing.T) string {
				return replaceOnce(t, textResponse, `"Your card `+secret+` is on file."`, `"Your card [REDACTED] is on file."`)
			},
		},
		{
			name:   "content set on a tool-call turn",
			body:   toolCallResponse,
			change: func(p map[string]any) { p["content"] = "<note> & \u2028" },
			want: func(t *testing.T) string {
				return replaceOnce(t, toolCallResponse, `"content": null`, `"content": "<note> & \u2028"`) // as encoding/json writes U+2028
			},
		},
		{
			name: "one call's args changed, the other call byte-identical",
			body: toolCallResponse,
			change: func(p map[string]any) {
				callAt(p, 1)["args"].(map[string]any)["to"] = "[REDACTED]"
			},
			want: func(t *testing.T) string {
				return replaceOnce(t, toolCallResponse, `"{\"to\":\"`+secret+`\",\"amount_cents\":9007199254740993}"`,
					`"{\"amount_cents\":9007199254740993,\"to\":\"[REDACTED]\"}"`)
			},
		},
		{
			name:   "call renamed",
			body:   toolCallResponse,
			change: func(p map[string]any) { callAt(p, 0)["name"] = "get_forecast" },
			want: func(t *testing.T) string {
				return replaceOnce(t, toolCallResponse, `"name": "get_weather"`, `"name": "get_forecast"`)
			},
		},
		{
			name: "call dropped",
			body: toolCallResponse,
			change: func(p map[string]any) {
				p["tool_calls"] = p["tool_calls"].([]any)[1:]
			},
			want: func(t *testing.T) string {
				return replaceOnce(t, toolCallResponse, callsArray, "["+transferCall+"]")
			},
		},
		{
			name: "calls reordered",
			body: toolCallResponse,
			change: func(p map[string]any) {
				c := p["tool_calls"].([]any)
				p["tool_calls"] = []any{c[1], c[0]}
			},
			want: func(t *testing.T) string {
				swapped := strings.NewReplacer(weatherCall, transferCall, transferCall, weatherCall).Replace(callsArray)
				return replaceOnce(t, toolCallResponse, callsArray, swapped)
			},
		},
		{
			name: "all calls dropped removes the member",
			body: toolCallResponse,
			change: func(p map[string]any) {
				p["tool_calls"] = []any{}
				p["content"] = "I cannot do that."
				p["finish_reason"] = "stop"
			},
			want: func(t *testing.T) string {
				// Removing a member rebuilds the message from its members'
				// own raw text.
				start := strings.Index(toolCallResponse, `{
        "role": "assistant"`)
				end := strings.Index(toolCallResponse, `,
      "logprobs"`)
				s := toolCallResponse[:start] + `{"role": "assistant","content": "I cannot do that.","refusal": null,"annotations": []}` + toolCallResponse[end:]
				return replaceOnce(t, s, `"finish_reason": "tool_calls"`, `"finish_reason": "stop"`)
			},
		},
		{
			name:   "refusal written back to refusal",
			body:   refusalResponse,
			change: func(p map[string]any) { p["content"] = "I can't help with that." },
			want: func(t *testing.T) string {
				return replaceOnce(t, refusalResponse, `"refusal":"I can't help with `+secret+`."`, `"refusal":"I can't help with that."`)
			},
		},
		{
			name: "raw_arguments changed: new string verbatim",
			body: rawArgsResponse,
			change: func(p map[string]any) {
				callAt(p, 0)["args"] = map[string]any{"raw_arguments": "ls /tmp"}
			},
			want: func(t *testing.T) string {
				return replaceOnce(t, rawArgsResponse, `"arguments":"ls -la /tmp"`, `"arguments":"ls /tmp"`)
			},
		},
		{
			name: "raw arguments replaced by an object: compact JSON",
			body: rawArgsResponse,
			change: func(p map[string]any) {
				callAt(p, 1)["args"] = map[string]any{"dry_run": true, "n": json.Number("1.0")}
			},
			want: func(t *testing.T) string {
				return replaceOnce(t, rawArgsResponse, `"name":"noop","arguments":""`, `"name":"noop","arguments":"{\"dry_run\":true,\"n\":1.0}"`)
			},
		},
		{
			name:   "finish_reason changed",
			body:   textResponse,
			change: func(p map[string]any) { p["finish_reason"] = "content_filter" },
			want: func(t *testing.T) string {
				return replaceOnce(t, textResponse, `"finish_reason":"stop"`, `"finish_reason":"content_filter"`)
			},
		},
		{
			name:   "finish_reason added when absent",
			body:   `{"choices":[{"message":{"role":"assistant","content":"a"}}]}`,
			change: func(p map[string]any) { p["finish_reason"] = "length" },
			want: func(t *testing.T) string {
				return `{"choices":[{"message":{"role":"assistant","content":"a"},"finish_reason":"length"}]}`
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, target := edit(t, tc.body, tc.change)
			got, err := r.Release(target)
			if err != nil {
				t.Fatal(err)
			}
			_ = tc.want // the message is re-rendered: the released bytes are checked by what they project to
			// What is released projects back to the verdicted target.
			again := mustResponse(t, string(got))
			if !jsonvalue.Equal(again.Project(), target) {
				t.Errorf("released body projects to %s, want %s", mustJSON(t, again.Project()), mustJSON(t, target))
			}
		})
	}
}

// An unchanged target releases the upstream body with the id and model
// edited in place: given the upstream's own id and model, every byte is
// the upstream's.
func TestWriteBackUnchangedReturnsOriginal(t *testing.T) {
	for _, body := range []string{textResponse, refusalResponse, rawArgsResponse} {
		var meta struct{ ID, Model string }
		if err := json.Unmarshal([]byte(body), &meta); err != nil {
			t.Fatal(err)
		}
		r, err := ParseResponse([]byte(body), ResponseOptions{id: meta.ID, Model: meta.Model})
		if err != nil {
			t.Fatal(err)
		}
		target := r.Project()
		// A transform that re-serialized the target without changing it.
		target = tree(t, mustJSON(t, target)).(map[string]any)
		got, err := r.Release(target)
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.Replace(body, `,"system_fingerprint":"fp_1"`, "", 1); string(got) != want {
			t.Errorf("unchanged target changed the body:\n%s", got)
		}
	}
}

func TestWriteBackOnlyRawArgumentsKeepsOtherArgs(t *testing.T) {
	// A real object that happens to be {"raw_arguments": …} is not raw:
	// changing it writes compact JSON, not the bare string.
	body := `{"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"raw_arguments\":\"x\"}"}}]},"finish_reason":"tool_calls"}]}`
	r, target := edit(t, body, func(p map[string]any) {
		callAt(p, 0)["args"] = map[string]any{"raw_arguments": "y"}
	})
	got, err := r.Release(target)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"raw_arguments":"y"}`; mustResponse(t, string(got)).ans.calls[0].arguments != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

func TestCheckWriteBack(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		change func(p map[string]any) any
		field  string
	}{
		{"not an object", textResponse, func(p map[string]any) any { return []any{p} }, "$target"},
		{"extra member", textResponse, func(p map[string]any) any { p["refusal"] = "x"; return p }, "$target"},
		{"missing member", textResponse, func(p map[string]any) any { delete(p, "finish_reason"); return p }, "$target.finish_reason"},
		{"content number", textResponse, func(p map[string]any) any { p["content"] = json.Number("1"); return p }, "$target.content"},
		{"content bool", textResponse, func(p map[string]any) any { p["content"] = true; return p }, "$target.content"},
		{"content part not object", textResponse, func(p map[string]any) any { p["content"] = []any{secret}; return p }, "$target.content[0]"},
		{"second text part", textResponse, func(p map[string]any) any {
			p["content"] = []any{map[string]any{"type": "text", "text": "x"}, map[string]any{"type": "text", "text": "y"}}
			return p
		}, "$target.content[1]"},
		{"added reasoning part", textResponse, func(p map[string]any) any {
			p["content"] = []any{map[string]any{"type": "reasoning", "text": "x"}}
			return p
		}, "$target.content[0]"},
		{"unknown part type", textResponse, func(p map[string]any) any {
			p["content"] = []any{map[string]any{"type": "image_url", "image_url": map[string]any{"url": "https://x"}}}
			return p
		}, "$target.content[0].type"},
		{"finish_reason number", textResponse, func(p map[string]any) any { p["finish_reason"] = json.Number("42"); return p }, "$target.finish_reason"},
		{"finish_reason null", textResponse, func(p map[string]any) any { p["finish_reason"] = nil; return p }, "$target.finish_reason"},
		{"tool_calls not array", toolCallResponse, func(p map[string]any) any { p["tool_calls"] = map[string]any{}; return p }, "$target.tool_calls"},
		{"tool_calls null", textResponse, func(p map[string]any) any { p["tool_calls"] = nil; return p }, "$target.tool_calls"},
		{"call not object", toolCallResponse, func(p map[string]any) any { p["tool_calls"].([]any)[1] = secret; return p }, "$target.tool_calls[1]"},
		{"call extra member", toolCallResponse, func(p map[string]any) any { callAt(p, 0)["type"] = "function"; return p }, "$target.tool_calls[0]"},
		{"id missing", toolCallResponse, func(p map[string]any) any { delete(callAt(p, 1), "id"); return p }, "$target.tool_calls[1].id"},
		{"id number", toolCallResponse, func(p map[string]any) any { callAt(p, 1)["id"] = json.Number("1"); return p }, "$target.tool_calls[1].id"},
		{"added call", toolCallResponse, func(p map[string]any) any {
			p["tool_calls"] = append(p["tool_calls"].([]any), map[string]any{"id": "call_new", "name": "wire_money", "args": map[string]any{}})
			return p
		}, "$target.tool_calls[2].id"},
		{"duplicate id", toolCallResponse, func(p map[string]any) any {
			p["tool_calls"] = []any{callAt(p, 0), callAt(p, 0)}
			return p
		}, "$target.tool_calls[1].id"},
		{"empty name", toolCallResponse, func(p map[string]any) any { callAt(p, 0)["name"] = ""; return p }, "$target.tool_calls[0].name"},
		{"name missing", toolCallResponse, func(p map[string]any) any { delete(callAt(p, 0), "name"); return p }, "$target.tool_calls[0].name"},
		{"args string", toolCallResponse, func(p map[string]any) any { callAt(p, 0)["args"] = "oops " + secret; return p }, "$target.tool_calls[0].args"},
		{"args missing", toolCallResponse, func(p map[string]any) any { delete(callAt(p, 0), "args"); return p }, "$target.tool_calls[0].args"},
		{"bool is not a number", toolCallResponse, func(p map[string]any) any {
			callAt(p, 0)["args"].(map[string]any)["days"] = true
			callAt(p, 0)["name"] = ""
			return p
		}, "$target.tool_calls[0].name"},
		{"invalid number token", textResponse, func(p map[string]any) any { p["content"] = json.Number("1.2.3"); return p }, "$target.content"},
		{"ambiguous upstream ids", `{"choices":[{"message":{"role":"assistant","tool_calls":[{"function":{"name":"a","arguments":"{}"}},{"function":{"name":"b","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
			func(p map[string]any) any { p["tool_calls"] = p["tool_calls"].([]any)[:1]; return p }, "$target.tool_calls"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := mustResponse(t, tc.body)
			target := tc.change(r.Project())
			err := r.CheckWriteBack(target)
			var we *wire.WriteBackError
			if !errors.As(err, &we) {
				t.Fatalf("err = %v, want *WriteBackError", err)
			}
			if we.Field != tc.field {
				t.Errorf("Field = %q, want %q (%s)", we.Field, tc.field, we.Msg)
			}
			noSecret(t, err)
			if _, err := r.Release(target); !errors.As(err, &we) {
				t.Errorf("WriteBack accepted what CheckWriteBack refuses: %v", err)
			}
		})
	}
}

func TestCheckWriteBackAllowsUnchangedOddCalls(t *testing.T) {
	// Upstream calls with empty or duplicate ids and empty names cannot be
	// matched, but leaving them alone must still be allowed.
	body := `{"choices":[{"message":{"role":"assistant","content":"x","tool_calls":[{"function":{"name":"","arguments":"{}"}},{"function":{"name":"b"}}]},"finish_reason":"tool_calls"}]}`
	r, target := edit(t, body, func(p map[string]any) { p["content"] = "y" })
	got, err := r.Release(target)
	if err != nil {
		t.Fatal(err)
	}
	if again := mustResponse(t, string(got)); !jsonvalue.Equal(again.Project(), target) {
		t.Errorf("got %s", got)
	}
}
