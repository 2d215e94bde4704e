package proxy_test

import (
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// The hostile cases of the Anthropic Messages API: the same secret in
// every place its JSON and its event stream can carry text. Citations are
// judged but can only be kept or removed (a redaction inside one fails
// closed); signed thinking likewise. Opaque blobs reach the client sealed,
// the id and model are the gateway's: the secret is gone whatever the
// policy (outcome removed).

// anthropicMessage is a Messages API answer holding content blocks.
func anthropicMessage(blocks, topExtra string) string {
	return `{"id":"msg_h","type":"message","role":"assistant","model":"m","content":[` + blocks + `],` +
		`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}` + topExtra + `}`
}

// msEvents frames Messages stream events: each data object starts with
// its "type", which names the event.
func msEvents(datas ...string) string {
	var b strings.Builder
	for _, d := range datas {
		m := eventType.FindStringSubmatch(d)
		name := "unnamed"
		if m != nil {
			name = m[1]
		}
		b.WriteString("event: " + name + "\ndata: " + d + "\n\n")
	}
	return b.String()
}

// msStream is a whole stream: message_start, the given block events,
// message_delta and message_stop.
func msStream(stop string, blocks ...string) []string {
	evs := []string{`{"type":"message_start","message":{"id":"msg_h","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}`}
	evs = append(evs, blocks...)
	return append(evs,
		`{"type":"message_delta","delta":{"stop_reason":"`+stop+`","stop_sequence":null},"usage":{"output_tokens":2}}`,
		`{"type":"message_stop"}`)
}

func msBlock(index, start string, deltas ...string) []string {
	evs := []string{`{"type":"content_block_start","index":` + index + `,"content_block":` + start + `}`}
	for _, d := range deltas {
		evs = append(evs, `{"type":"content_block_delta","index":`+index+`,"delta":`+d+`}`)
	}
	return append(evs, `{"type":"content_block_stop","index":`+index+`}`)
}

func msText(text string) []string {
	return msBlock("0", `{"type":"text","text":""}`, `{"type":"text_delta","text":"`+text+`"}`)
}

func messagesHostileCases() []hostileCase {
	s := hostileSecret
	fine := `{"type":"text","text":"fine"}`
	cases := []hostileCase{
		{name: "json text", body: anthropicMessage(`{"type":"text","text":"fine `+s+`"}`, ""), want: judged},
		{name: "json citation", body: anthropicMessage(`{"type":"text","text":"fine","citations":[{"type":"web_search_result_location","url":"https://x.test/?k=`+s+`","title":"t","encrypted_index":"ab","cited_text":"c"}]}`, ""), want: judgedUnrewritable},
		{name: "json cited text", body: anthropicMessage(`{"type":"text","text":"fine","citations":[{"type":"char_location","cited_text":"`+s+`","document_index":0,"document_title":"d","start_char_index":0,"end_char_index":4}]}`, ""), want: judgedUnrewritable},
		{name: "json tool_use input", body: strings.Replace(anthropicMessage(`{"type":"tool_use","id":"toolu_1","name":"send","input":{"key":"`+s+`"}}`, ""), `"end_turn"`, `"tool_use"`, 1), want: judged},
		{name: "json tool_use name", body: strings.Replace(anthropicMessage(`{"type":"tool_use","id":"toolu_1","name":"`+s+`","input":{}}`, ""), `"end_turn"`, `"tool_use"`, 1), want: judged},
		{name: "json thinking", body: anthropicMessage(`{"type":"thinking","thinking":"think `+s+`","signature":"c2ln"},`+fine, ""), want: judgedUnrewritable},
		// Members the gateway does not know are judged: projected (member
		// parts, or beside a block's members) and released as judged.
		{name: "json unknown top-level member", body: anthropicMessage(fine, `,"debug":"`+s+`"`), want: judged},
		{name: "json unknown block member", body: anthropicMessage(`{"type":"text","text":"fine","x_note":"`+s+`"}`, ""), want: judged},
		{name: "json unknown usage member", body: strings.Replace(anthropicMessage(fine, ""), `"output_tokens":1}`, `"output_tokens":1,"note":"`+s+`"}`, 1), want: judged},
		// The answer's id is the gateway's, its model the request's.
		{name: "json metadata shaped like text", body: strings.Replace(anthropicMessage(fine, ""), `"model":"m"`, `"model":"m `+s+`"`, 1), want: removed},
		{name: "json id", body: strings.Replace(anthropicMessage(fine, ""), `"id":"msg_h"`, `"id":"`+s+`"`, 1), want: removed},
		{name: "json stop sequence the client never sent", body: strings.Replace(strings.Replace(anthropicMessage(fine, ""), `"stop_sequence":null`, `"stop_sequence":"`+s+`"`, 1), `"end_turn"`, `"stop_sequence"`, 1), want: refused},
		{name: "json refusal explanation in stop_details", body: anthropicMessage(fine, `,"stop_details":{"type":"refusal","category":"cyber","explanation":"`+s+`"}`), want: judged},
		{name: "json refusal category", body: anthropicMessage(fine, `,"stop_details":{"type":"refusal","category":"`+s+`","explanation":null}`), want: removed},
		{name: "json service tier", body: strings.Replace(anthropicMessage(fine, ""), `"output_tokens":1}`, `"output_tokens":1,"service_tier":"`+s+`"}`, 1), want: removed},
		// Opaque blobs and upstream ids the client sends back are sealed.
		{name: "json container id shaped like text", body: anthropicMessage(fine, `,"container":{"id":"c `+s+`","expires_at":"2026-12-03T00:00:00Z"}`), want: removed},
		{name: "json thinking signature", body: anthropicMessage(`{"type":"thinking","thinking":"hm","signature":"`+s+`"},`+fine, ""), want: removed},
		{name: "json redacted thinking", body: anthropicMessage(`{"type":"redacted_thinking","data":"`+s+`"},`+fine, ""), want: removed},
		{name: "json encrypted_index", body: anthropicMessage(`{"type":"text","text":"fine","citations":[{"type":"web_search_result_location","url":"https://x.test","title":"t","encrypted_index":"`+s+`","cited_text":"c"}]}`, ""), want: removed},
		{name: "json case-colliding member", body: anthropicMessage(`{"type":"text","text":"fine","Text":"`+s+`"}`, ""), want: refused},
		{name: "json unknown block", body: anthropicMessage(`{"type":"x_secret","text":"`+s+`"},`+fine, ""), want: refused},

		{name: "sse text split across deltas", stream: true, body: msEvents(msStream("end_turn",
			msBlock("0", `{"type":"text","text":""}`, `{"type":"text_delta","text":"fine `+hostileHead+`"}`, `{"type":"text_delta","text":"`+hostileTail+`"}`)...)...), want: judged},
		{name: "sse tool input split across deltas", stream: true, body: msEvents(msStream("tool_use",
			msBlock("0", `{"type":"tool_use","id":"toolu_1","name":"send","input":{}}`,
				`{"type":"input_json_delta","partial_json":"{\"k\":\"`+hostileHead+`"}`, `{"type":"input_json_delta","partial_json":"`+hostileTail+`\"}"}`)...)...), want: judged},
		{name: "sse citation", stream: true, body: msEvents(msStream("end_turn", msBlock("0", `{"type":"text","text":""}`,
			`{"type":"text_delta","text":"fine"}`, `{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"https://x.test/?k=`+s+`","title":"t","encrypted_index":"ab","cited_text":"c"}}`)...)...), want: judgedUnrewritable},
		{name: "sse thinking", stream: true, body: msEvents(msStream("end_turn", append(msBlock("0", `{"type":"thinking","thinking":"","signature":""}`,
			`{"type":"thinking_delta","thinking":"`+s+`"}`, `{"type":"signature_delta","signature":"c2ln"}`),
			msBlock("1", `{"type":"text","text":""}`, `{"type":"text_delta","text":"fine"}`)...)...)...), want: judgedUnrewritable},
		{name: "sse events after message_stop", stream: true, body: msEvents(append(msStream("end_turn", msText("fine")...),
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`+s+`"}}`)...), want: removed},
		{name: "sse signature", stream: true, body: msEvents(msStream("end_turn", append(msBlock("0", `{"type":"thinking","thinking":"","signature":""}`,
			`{"type":"thinking_delta","thinking":"hm"}`, `{"type":"signature_delta","signature":"`+s+`"}`),
			msBlock("1", `{"type":"text","text":""}`, `{"type":"text_delta","text":"fine"}`)...)...)...), want: removed},
		{name: "sse message_delta member", stream: true, body: msEvents(append(msStream("end_turn", msText("fine")...)[:4],
			`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null,"x_note":"`+s+`"},"usage":{"output_tokens":2}}`, `{"type":"message_stop"}`)...), want: judged},
		{name: "sse ping carrying a member", stream: true, body: msEvents(append([]string{`{"type":"ping","note":"` + s + `"}`}, msStream("end_turn", msText("fine")...)...)...), want: removed},
		{name: "sse comment, id and retry lines", stream: true, body: ": " + s + "\nid: " + s + "\nretry: 10\n\n" + msEvents(msStream("end_turn", msText("fine")...)...), want: removed},
		{name: "sse unknown delta member", stream: true, body: msEvents(msStream("end_turn",
			msBlock("0", `{"type":"text","text":""}`, `{"type":"text_delta","text":"fine","x_note":"`+s+`"}`)...)...), want: removed},
		{name: "sse unknown event type", stream: true, body: msEvents(append([]string{msStream("end_turn", msText("fine")...)[0], `{"type":"x_telemetry","note":"` + s + `"}`}, msStream("end_turn", msText("fine")...)[1:]...)...), want: removed},
		{name: "sse delta for a block never opened", stream: true, body: msEvents(msStream("end_turn",
			append(msText("fine"), `{"type":"content_block_delta","index":5,"delta":{"type":"text_delta","text":"`+s+`"}}`)...)...), want: refused},
		{name: "sse upstream error event", stream: true, body: msEvents(`{"type":"error","error":{"type":"overloaded_error","message":"` + s + `"}}`), want: refused},
	}
	for i := range cases {
		cases[i].api = wire.Messages
		cases[i].name = "messages " + cases[i].name
	}
	return cases
}
