package proxy_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// A hostile upstream puts a credential into every member of a Responses
// answer that is not model text (ids, model, enumerations, encrypted
// reasoning) and into members the gateway does not know. The credential is
// token-shaped, lower-case and 32 characters long, so it passes every
// shape check these members ever had (id, model name, enum, base64): only
// minting, sealing, enumerating, or judging keeps it out.
const mediationSecret = "sk-proj-abcdefghijklmnopqrstuvwx"

// hostileAnswer is a Responses answer the test renders as a JSON object
// and as the event stream an upstream would send for it.
type hostileAnswer struct {
	// snapshot and final are the top-level members (output aside) of the
	// response.created snapshot and of the final object.
	snapshot, final map[string]any
	// items are the output items; text is the message's, in deltas.
	items  []map[string]any
	deltas []string
	// extraEvents are sent after response.created.
	extraEvents []map[string]any
}

func newHostileAnswer() *hostileAnswer {
	top := func() map[string]any {
		return map[string]any{"id": "resp_up", "object": "response", "created_at": 1, "status": "completed", "error": nil,
			"incomplete_details": nil, "model": "m", "service_tier": "default", "store": false}
	}
	return &hostileAnswer{
		snapshot: top(), final: top(),
		items: []map[string]any{{"type": "message", "id": "msg_up", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": "fine answer", "annotations": []any{}}}}},
		deltas: []string{"fine ", "answer"},
	}
}

// message returns the answer's message item.
func (a *hostileAnswer) message() map[string]any {
	for _, it := range a.items {
		if it["type"] == "message" {
			return it
		}
	}
	panic("no message")
}

// both sets a top-level member in the snapshot and the final object.
func (a *hostileAnswer) both(k string, v any) { a.snapshot[k], a.final[k] = v, v }

func (a *hostileAnswer) json() string {
	resp := maps.Clone(a.final)
	resp["output"] = a.items
	resp["usage"] = map[string]any{"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}
	b, _ := json.Marshal(resp)
	return string(b)
}

func (a *hostileAnswer) sse() string {
	var evs []map[string]any
	snap := maps.Clone(a.snapshot)
	snap["output"], snap["status"] = []any{}, "in_progress"
	evs = append(evs, map[string]any{"type": "response.created", "response": snap})
	evs = append(evs, a.extraEvents...)
	evs = append(evs, map[string]any{"type": "response.in_progress", "response": snap})
	for oi, it := range a.items {
		added := maps.Clone(it)
		loc := func(m map[string]any) map[string]any {
			m["output_index"] = oi
			if id, ok := it["id"]; ok {
				m["item_id"] = id
			}
			return m
		}
		switch it["type"] {
		case "message":
			added["content"], added["status"] = []any{}, "in_progress"
			evs = append(evs, map[string]any{"type": "response.output_item.added", "output_index": oi, "item": added},
				loc(map[string]any{"type": "response.content_part.added", "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}}))
			for _, d := range a.deltas {
				evs = append(evs, loc(map[string]any{"type": "response.output_text.delta", "content_index": 0, "delta": d}))
			}
			part := it["content"].([]any)[0].(map[string]any)
			evs = append(evs, loc(map[string]any{"type": "response.output_text.done", "content_index": 0, "text": part["text"]}),
				loc(map[string]any{"type": "response.content_part.done", "content_index": 0, "part": part}))
		case "function_call":
			added["arguments"] = ""
			evs = append(evs, map[string]any{"type": "response.output_item.added", "output_index": oi, "item": added},
				loc(map[string]any{"type": "response.function_call_arguments.delta", "delta": it["arguments"]}),
				loc(map[string]any{"type": "response.function_call_arguments.done", "arguments": it["arguments"]}))
		case "reasoning":
			added["summary"] = []any{}
			evs = append(evs, map[string]any{"type": "response.output_item.added", "output_index": oi, "item": added})
		default:
			evs = append(evs, map[string]any{"type": "response.output_item.added", "output_index": oi, "item": added})
		}
		evs = append(evs, map[string]any{"type": "response.output_item.done", "output_index": oi, "item": it})
	}
	final := maps.Clone(a.final)
	final["output"] = a.items
	evs = append(evs, map[string]any{"type": "response.completed", "response": final})
	var b strings.Builder
	for i, ev := range evs {
		ev["sequence_number"] = i
		data, _ := json.Marshal(ev)
		b.WriteString("event: " + ev["type"].(string) + "\ndata: " + string(data) + "\n\n")
	}
	return b.String()
}

// placement is one place the secret goes.
type placement struct {
	name string
	put  func(a *hostileAnswer)
	// judged: the member is projected (a deny policy blocks the answer; an
	// allow policy releases it as judged, under one of judgedAs);
	// refused: the answer is refused (502). Otherwise the secret is
	// minted over, sealed, removed or left unreleased.
	judged, refused bool
	sseOnly         bool
}

// judgedAs are the members under which a judged secret is released.
var judgedAs = []string{`"x_debug":`, `"x_note":`}

func mediationPlacements() []placement {
	s := mediationSecret
	return []placement{
		{name: "response id", put: func(a *hostileAnswer) { a.both("id", s) }},
		{name: "message id", put: func(a *hostileAnswer) { a.message()["id"] = s }},
		{name: "reasoning id and encrypted content", put: func(a *hostileAnswer) {
			a.items = append([]map[string]any{{"type": "reasoning", "id": s, "summary": []any{}, "encrypted_content": s}}, a.items...)
		}},
		{name: "function call id", put: func(a *hostileAnswer) {
			a.items = append(a.items, map[string]any{"type": "function_call", "id": s, "call_id": "call_1", "name": "lookup", "arguments": "{}", "status": "completed"})
		}},
		{name: "web search call id", put: func(a *hostileAnswer) {
			a.items = append([]map[string]any{{"type": "web_search_call", "id": s, "status": "completed", "action": map[string]any{"type": "search", "query": "q"}}}, a.items...)
		}},
		{name: "model", put: func(a *hostileAnswer) { a.both("model", s) }},
		{name: "model only in the final object", put: func(a *hostileAnswer) { a.final["model"] = s }},
		{name: "service tier", put: func(a *hostileAnswer) { a.both("service_tier", s) }},
		{name: "prompt cache retention", put: func(a *hostileAnswer) { a.both("prompt_cache_retention", s) }},
		{name: "echo the client never sent", put: func(a *hostileAnswer) { a.both("instructions", s) }},
		{name: "message phase", put: func(a *hostileAnswer) { a.message()["phase"] = s }},
		{name: "unknown snapshot member", sseOnly: true, put: func(a *hostileAnswer) { a.snapshot["x_debug"] = s }},
		{name: "unknown event", sseOnly: true, put: func(a *hostileAnswer) {
			a.extraEvents = append(a.extraEvents, map[string]any{"type": "response.x_debug.delta", "delta": s})
		}},
		{name: "unknown top-level member", judged: true, put: func(a *hostileAnswer) { a.final["x_debug"] = s }},
		{name: "unknown item member", judged: true, put: func(a *hostileAnswer) { a.message()["x_note"] = s }},
		{name: "item status", refused: true, put: func(a *hostileAnswer) { a.message()["status"] = s }},
	}
}

// mediationMode is how the client calls and the gateway streams.
type mediationMode struct {
	name        string
	stream      bool
	incremental bool
}

var mediationModes = []mediationMode{{name: "json"}, {name: "sse buffered", stream: true}, {name: "sse incremental", stream: true, incremental: true}}

const incrementalStreaming = "streaming:\n  mode: incremental\n"

const allowPolicy = "  - name: allow-all\n    type: allow\n"

const mediationDenyPolicy = `  - name: deny-credentials
    type: regex
    points: [post_model_call, output]
    action: deny
    reason: policy:credential_leak
    patterns: ['sk-proj-[A-Za-z0-9]{24}']
`

// mediationGateways starts one gateway per policy and streaming mode.
func mediationGateways(t *testing.T) map[string]*hostileGateway {
	t.Helper()
	out := map[string]*hostileGateway{}
	for _, policy := range []string{"allow", "deny"} {
		p := allowPolicy
		if policy == "deny" {
			p = mediationDenyPolicy
		}
		out[policy] = startHostileGateway(t, p)
		out[policy+" incremental"] = startHostileGateway(t, p, incrementalStreaming)
	}
	return out
}

// callAnswer sends the client's request in mode and returns the status and
// the raw answer (headers and body).
func callAnswer(t *testing.T, gws map[string]*hostileGateway, policy string, m mediationMode, a *hostileAnswer) (int, string) {
	t.Helper()
	g := gws[policy]
	if m.incremental {
		g = gws[policy+" incremental"]
	}
	body := a.json()
	if m.stream {
		body = a.sse()
	}
	return g.call(t, hostileCase{api: wire.Responses, body: body, stream: m.stream})
}

// denied reports whether an answer was blocked by the deny policy: a 403,
// or, once an incremental stream released text, its error event.
func denied(status int, out string) bool {
	return status == http.StatusForbidden || status == http.StatusOK && strings.Contains(out, "event: error") && strings.Contains(out, "policy:credential_leak")
}

// refusedAnswer reports whether the upstream's answer was refused: a 502,
// or the error event of an incremental stream that released text (the
// released text was judged; the rest is not released).
func refusedAnswer(status int, out string) bool {
	return status == http.StatusBadGateway || status == http.StatusOK && strings.Contains(out, "event: error") &&
		(strings.Contains(out, "upstream_response_invalid") || strings.Contains(out, "host_error:streaming_unsupported"))
}

// failedClosed reports whether a stream that released text ended in an
// error event instead of its remainder.
func failedClosed(status int, out string) bool {
	return status == http.StatusOK && strings.Contains(out, "event: error") && !strings.Contains(out, "response.completed")
}

// onlyJudged reports whether every occurrence of the secret in out is the
// value of a judged member.
func onlyJudged(out string) bool {
	n := 0
	for _, m := range judgedAs {
		n += strings.Count(out, m+`"`+mediationSecret+`"`)
	}
	return n == strings.Count(out, mediationSecret)
}

func TestHostileResponsesMediation(t *testing.T) {
	gws := mediationGateways(t)
	for _, m := range mediationModes {
		for _, p := range mediationPlacements() {
			if p.sseOnly && !m.stream {
				continue
			}
			t.Run(m.name+"/"+p.name, func(t *testing.T) {
				a := newHostileAnswer()
				p.put(a)
				status, out := callAnswer(t, gws, "allow", m, a)
				switch {
				case p.refused:
					if !refusedAnswer(status, out) || strings.Contains(out, mediationSecret) {
						t.Fatalf("allow: status %d, want the answer refused without the secret\n%s", status, out)
					}
				case p.judged && m.incremental && failedClosed(status, out):
					// An answer whose member parts arrive after its text was
					// released: the stream mediator completes plain text
					// only, so the stream fails closed.
					if strings.Contains(out, mediationSecret) {
						t.Fatalf("allow: the failed stream carries the secret\n%s", out)
					}
				case p.judged:
					if status != http.StatusOK || !strings.Contains(out, mediationSecret) || !onlyJudged(out) {
						t.Fatalf("allow: status %d, want the judged member released as judged and the secret nowhere else\n%s", status, out)
					}
				default:
					if status != http.StatusOK || strings.Contains(out, mediationSecret) || !strings.Contains(out, "fine") {
						t.Fatalf("allow: status %d, want the answer without the secret\n%s", status, out)
					}
				}
				status, out = callAnswer(t, gws, "deny", m, a)
				if strings.Contains(out, mediationSecret) {
					t.Fatalf("deny: the client received the secret: status %d\n%s", status, out)
				}
				switch {
				case p.refused:
					if !refusedAnswer(status, out) {
						t.Fatalf("deny: status %d, want the answer refused\n%s", status, out)
					}
				case p.judged:
					if !denied(status, out) {
						t.Fatalf("deny: status %d, want the answer denied\n%s", status, out)
					}
				default:
					if status != http.StatusOK || strings.Contains(out, "event: error") {
						t.Fatalf("deny: status %d, want the answer released (nothing of the secret is left to deny)\n%s", status, out)
					}
				}
			})
		}
		// Every placement at once: under allow only the judged members
		// carry the secret; under deny the answer is denied.
		t.Run(m.name+"/all at once", func(t *testing.T) {
			a := newHostileAnswer()
			for _, p := range mediationPlacements() {
				if !p.refused && (m.stream || !p.sseOnly) {
					p.put(a)
				}
			}
			status, out := callAnswer(t, gws, "allow", m, a)
			if !onlyJudged(out) || !(m.incremental && failedClosed(status, out)) && (status != http.StatusOK || !strings.Contains(out, mediationSecret)) {
				t.Fatalf("allow: status %d, the secret outside the judged members\n%s", status, out)
			}
			status, out = callAnswer(t, gws, "deny", m, a)
			if !denied(status, out) || strings.Contains(out, mediationSecret) {
				t.Fatalf("deny: status %d\n%s", status, out)
			}
		})
	}
	for name, g := range gws {
		if strings.Contains(g.out.String(), mediationSecret) {
			t.Errorf("%s: a record carries the secret", name)
		}
		if strings.Contains(g.logs.String(), mediationSecret) {
			t.Errorf("%s: a log line carries the secret", name)
		}
	}
}

// The answer's ids are the gateway's: the same minted response id and the
// same item seal in every event of a stream, whatever the upstream's.
func TestResponsesStreamIDsAgree(t *testing.T) {
	gws := map[string]*hostileGateway{"allow": startHostileGateway(t, allowPolicy), "allow incremental": startHostileGateway(t, allowPolicy, incrementalStreaming)}
	for _, m := range mediationModes[1:] {
		status, out := callAnswer(t, gws, "allow", m, newHostileAnswer())
		if status != http.StatusOK {
			t.Fatalf("%s: status %d\n%s", m.name, status, out)
		}
		respIDs, itemIDs := map[string]bool{}, map[string]bool{}
		for line := range strings.Lines(out) {
			data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
			if !ok {
				continue
			}
			var ev struct {
				Response *struct{ ID, Model string }
				Item     *struct{ ID string }
				ItemID   string `json:"item_id"`
			}
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatalf("%s: %v", m.name, err)
			}
			if ev.Response != nil {
				respIDs[ev.Response.ID] = true
				if ev.Response.Model != "m" {
					t.Errorf("%s: model %q", m.name, ev.Response.Model)
				}
			}
			if ev.Item != nil {
				itemIDs[ev.Item.ID] = true
			}
			if ev.ItemID != "" {
				itemIDs[ev.ItemID] = true
			}
		}
		ids := slices.Collect(maps.Keys(respIDs))
		if len(ids) != 1 || !strings.HasPrefix(ids[0], "resp_") || ids[0] == "resp_up" {
			t.Errorf("%s: response ids %v, want one minted", m.name, ids)
		}
		items := slices.Collect(maps.Keys(itemIDs))
		if len(items) != 1 || !strings.HasPrefix(items[0], "hgs1_") {
			t.Errorf("%s: item ids %v, want one seal", m.name, items)
		}
		if strings.Contains(out, "msg_up") || strings.Contains(out, "resp_up") {
			t.Errorf("%s: an upstream id reached the client", m.name)
		}
	}
}
