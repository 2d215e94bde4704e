package proxy_test

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// The hostile cases of the OpenAI Responses API: the same secret in every
// place its JSON and its typed event stream can carry text.

// responseObject is a Responses API answer holding output items.
func responseObject(output, topExtra string) string {
	return `{"id":"resp_h","object":"response","created_at":1,"status":"completed","error":null,"incomplete_details":null,"model":"m",` +
		`"output":[` + output + `],"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}` + topExtra + `}`
}

// messageItem is an assistant message output item; parts are its content.
func messageItem(parts, extra string) string {
	return `{"type":"message","id":"msg_h","status":"completed","role":"assistant","content":[` + parts + `]` + extra + `}`
}

func outputText(text, extra string) string {
	return `{"type":"output_text","text":"` + text + `"` + extra + `}`
}

var eventType = regexp.MustCompile(`^\{"type":"([a-z_.]+)"`)

// rsEvents frames Responses stream events: each data object starts with
// its "type", which names the event; sequence numbers count from 0.
func rsEvents(datas ...string) string {
	var b strings.Builder
	for i, d := range datas {
		m := eventType.FindStringSubmatch(d)
		name := "unnamed"
		if m != nil {
			name = m[1]
		}
		d = strings.TrimSuffix(d, "}") + `,"sequence_number":` + strconv.Itoa(i) + `}`
		b.WriteString("event: " + name + "\ndata: " + d + "\n\n")
	}
	return b.String()
}

// rsStream is a whole stream whose single output item is item, with the
// given events between the item's added and done events.
func rsStream(addedItem, doneItem string, middle ...string) []string {
	created := `{"type":"response.created","response":{"id":"resp_h","object":"response","created_at":1,"status":"in_progress","model":"m","output":[]}}`
	evs := []string{created,
		`{"type":"response.output_item.added","output_index":0,"item":` + addedItem + `}`}
	evs = append(evs, middle...)
	return append(evs,
		`{"type":"response.output_item.done","output_index":0,"item":`+doneItem+`}`,
		`{"type":"response.completed","response":`+responseObject(doneItem, "")+`}`)
}

func textStream(text string, deltas ...string) []string {
	var middle []string
	middle = append(middle, `{"type":"response.content_part.added","item_id":"msg_h","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}`)
	for _, d := range deltas {
		middle = append(middle, `{"type":"response.output_text.delta","item_id":"msg_h","output_index":0,"content_index":0,"delta":"`+d+`"}`)
	}
	middle = append(middle,
		`{"type":"response.output_text.done","item_id":"msg_h","output_index":0,"content_index":0,"text":"`+text+`"}`,
		`{"type":"response.content_part.done","item_id":"msg_h","output_index":0,"content_index":0,"part":`+outputText(text, "")+`}`)
	return rsStream(`{"type":"message","id":"msg_h","status":"in_progress","role":"assistant","content":[]}`, messageItem(outputText(text, ""), ""), middle...)
}

func responsesHostileCases() []hostileCase {
	s := hostileSecret
	fine := outputText("fine", "")
	call := func(name, args string) string {
		return `{"type":"function_call","id":"fc_h","call_id":"call_1","name":"` + name + `","arguments":"` + args + `","status":"completed"}`
	}
	cases := []hostileCase{
		{name: "json output_text", body: responseObject(messageItem(outputText("fine "+s, ""), ""), ""), want: judged},
		{name: "json refusal part", body: responseObject(messageItem(fine+`,{"type":"refusal","refusal":"no `+s+`"}`, ""), ""), want: judged},
		{name: "json reasoning summary", body: responseObject(`{"type":"reasoning","id":"rs_h","summary":[{"type":"summary_text","text":"think `+s+`"}]},`+messageItem(fine, ""), ""), want: judged},
		{name: "json url citation", body: responseObject(messageItem(outputText("fine", `,"annotations":[{"type":"url_citation","url":"https://x.test/?k=`+s+`","title":"t","start_index":0,"end_index":4}]`), ""), ""), want: judged},
		{name: "json url citation title", body: responseObject(messageItem(outputText("fine", `,"annotations":[{"type":"url_citation","url":"https://x.test/","title":"`+s+`","start_index":0,"end_index":4}]`), ""), ""), want: judged},
		{name: "json function call arguments", body: responseObject(call("send", `{\"key\":\"`+s+`\"}`), ""), want: judged},
		{name: "json function call name", body: responseObject(call(s, `{}`), ""), want: judged},
		{name: "json web search query", body: responseObject(`{"type":"web_search_call","id":"ws_h","status":"completed","action":{"type":"search","query":"`+s+`"}},`+messageItem(fine, ""), ""), want: judged},
		{name: "json logprobs", body: responseObject(messageItem(outputText("fine", `,"logprobs":[{"token":"`+s+`","logprob":-1,"bytes":[1],"top_logprobs":[]}]`), ""), ""), want: removed},
		{name: "json unknown top-level member", body: responseObject(messageItem(fine, ""), `,"debug":"`+s+`"`), want: judged},
		{name: "json unknown item member", body: responseObject(messageItem(fine, `,"x_note":"`+s+`"`), ""), want: judged},
		{name: "json unknown part member", body: responseObject(messageItem(outputText("fine", `,"x_note":"`+s+`"`), ""), ""), want: judged},
		{name: "json unknown reasoning entry member", body: responseObject(`{"type":"reasoning","id":"rs_h","summary":[{"type":"summary_text","text":"t","x":"`+s+`"}]},`+messageItem(fine, ""), ""), want: judged},
		{name: "json unknown member as a name", body: responseObject(messageItem(fine, ""), `,"`+s+`":1`), want: judgedUnrewritable},
		{name: "json echoed instructions the client never sent", body: responseObject(messageItem(fine, ""), `,"instructions":"`+s+`"`), want: removed},
		{name: "json metadata shaped like text", body: strings.Replace(responseObject(messageItem(fine, ""), ""), `"model":"m"`, `"model":"m `+s+`"`, 1), want: removed},
		{name: "json case-colliding member", body: responseObject(messageItem(fine, `,"Content":"`+s+`"`), ""), want: refused},
		{name: "json unknown output item", body: responseObject(`{"type":"x_secret_item","id":"x","text":"`+s+`"},`+messageItem(fine, ""), ""), want: judged},
		{name: "json unknown output item's id", body: responseObject(`{"type":"x_secret_item","id":"`+s+`","text":"t"},`+messageItem(fine, ""), ""), want: removed},
		{name: "json output item typed like a part", body: responseObject(`{"type":"text","text":"`+s+`"},`+messageItem(fine, ""), ""), want: refused},
		{name: "json failed response", body: strings.Replace(responseObject(messageItem(fine, ""), ""), `"status":"completed","error":null`, `"status":"failed","error":{"code":"server_error","message":"`+s+`"}`, 1), want: refused},

		{name: "sse text split across deltas", stream: true, body: rsEvents(textStream("fine "+s, "fine "+hostileHead, hostileTail)...), want: judged},
		{name: "sse function call arguments split", stream: true, body: rsEvents(rsStream(
			`{"type":"function_call","id":"fc_h","call_id":"call_1","name":"send","arguments":"","status":"in_progress"}`, call("send", `{\"k\":\"`+s+`\"}`),
			`{"type":"response.function_call_arguments.delta","item_id":"fc_h","output_index":0,"delta":"{\"k\":\"`+hostileHead+`"}`,
			`{"type":"response.function_call_arguments.delta","item_id":"fc_h","output_index":0,"delta":"`+hostileTail+`\"}"}`,
			`{"type":"response.function_call_arguments.done","item_id":"fc_h","output_index":0,"arguments":"{\"k\":\"`+s+`\"}"}`)...), want: judged},
		{name: "sse deltas disagreeing with the done item", stream: true, body: rsEvents(textStream("fine", "fine "+s)...), want: refused},
		{name: "sse events after completion", stream: true, body: rsEvents(append(textStream("fine", "fine"),
			`{"type":"response.output_text.delta","item_id":"msg_h","output_index":0,"content_index":0,"delta":"`+s+`"}`)...), want: removed},
		{name: "sse unknown event", stream: true, body: rsEvents(append(textStream("fine", "fine")[:2:2],
			append([]string{`{"type":"response.x_secret.delta","delta":"` + s + `"}`}, textStream("fine", "fine")[2:]...)...)...), want: removed},
		{name: "sse delta at a part the done item lacks", stream: true, body: rsEvents(append(textStream("fine", "fine")[:3:3],
			append([]string{`{"type":"response.output_text.delta","item_id":"msg_h","output_index":0,"content_index":5,"delta":"` + s + `"}`}, textStream("fine", "fine")[3:]...)...)...), want: refused},
		{name: "sse obfuscation", stream: true, body: strings.Replace(rsEvents(textStream("fine", "fine")...), `"delta":"fine"`, `"delta":"fine","obfuscation":"`+s+`"`, 1), want: removed},
		{name: "sse comment, id and retry lines", stream: true, body: ": " + s + "\nid: " + s + "\nretry: 10\n\n" + rsEvents(textStream("fine", "fine")...), want: removed},
		{name: "sse event name disagreeing with its type", stream: true, body: strings.Replace(rsEvents(textStream("fine", "fine")...), "event: response.output_text.delta", "event: x"+s, 1), want: refused},
		{name: "sse upstream error event", stream: true, body: rsEvents(`{"type":"error","code":"server_error","message":"` + s + `","param":null}`), want: refused},

		// Metadata and replayed event members outside their shape.
		{name: "json usage member name", body: strings.Replace(responseObject(messageItem(fine, ""), ""), `"total_tokens":2`, `"total_tokens":2,"`+s+`":1`, 1), want: removed},
		{name: "json usage details member", body: strings.Replace(responseObject(messageItem(fine, ""), ""), `"total_tokens":2`, `"total_tokens":2,"input_tokens_details":{"cached_tokens":0,"note":"`+s+`"}`, 1), want: removed},
		{name: "json incomplete_details of a completed response", body: strings.Replace(responseObject(messageItem(fine, ""), ""), `"incomplete_details":null`, `"incomplete_details":{"reason":"`+s+`"}`, 1), want: removed},
		{name: "json url citation extra member", body: responseObject(messageItem(outputText("fine", `,"annotations":[{"type":"url_citation","url":"https://x.test/","title":"t","start_index":0,"end_index":4,"note":"`+s+`"}]`), ""), ""), want: removed},
		{name: "json url citation index as text", body: responseObject(messageItem(outputText("fine", `,"annotations":[{"type":"url_citation","url":"https://x.test/","title":"t","start_index":"`+s+`","end_index":4}]`), ""), ""), want: removed},
		{name: "json message id shaped like text", body: strings.Replace(responseObject(messageItem(fine, ""), ""), `"id":"msg_h"`, `"id":"msg `+s+`"`, 1), want: removed},
		{name: "json message id", body: strings.Replace(responseObject(messageItem(fine, ""), ""), `"id":"msg_h"`, `"id":"`+s+`"`, 1), want: removed},
		{name: "json response id", body: strings.Replace(responseObject(messageItem(fine, ""), ""), `"id":"resp_h"`, `"id":"`+s+`"`, 1), want: removed},
		{name: "json service tier", body: responseObject(messageItem(fine, ""), `,"service_tier":"`+s+`"`), want: removed},
		{name: "json message phase", body: responseObject(messageItem(fine, `,"phase":"`+s+`"`), ""), want: removed},
		{name: "json item status shaped like text", body: strings.Replace(responseObject(messageItem(fine, ""), ""), `"status":"completed","role"`, `"status":"`+s+`","role"`, 1), want: refused},
		{name: "json encrypted reasoning that is prose", body: responseObject(`{"type":"reasoning","id":"rs_h","summary":[],"encrypted_content":"key: `+s+`"},`+messageItem(fine, ""), ""), want: removed},
		{name: "json encrypted reasoning", body: responseObject(`{"type":"reasoning","id":"`+s+`","summary":[],"encrypted_content":"`+s+`"},`+messageItem(fine, ""), ""), want: removed},
		{name: "json web search with reasoning", body: responseObject(`{"type":"reasoning","id":"rs_h","summary":[{"type":"summary_text","text":"look up"}],"encrypted_content":"E"},{"type":"web_search_call","id":"ws_h","status":"completed","action":{"type":"search","query":"q `+s+`","sources":[{"type":"url","url":"https://x.test/`+s+`"}]}},`+messageItem(fine, ""), ""), want: judged},
		{name: "sse snapshot model shaped like text", stream: true, body: strings.Replace(rsEvents(textStream("fine", "fine")...), `"status":"in_progress","model":"m"`, `"status":"in_progress","model":"m `+s+`"`, 1), want: removed},
		{name: "sse snapshot status shaped like text", stream: true, body: strings.Replace(rsEvents(textStream("fine", "fine")...), `"status":"in_progress","model":"m"`, `"status":"`+s+`","model":"m"`, 1), want: removed},
		{name: "sse added item member the done item lacks", stream: true, body: strings.Replace(rsEvents(textStream("fine", "fine")...), `"role":"assistant","content":[]}`, `"role":"assistant","content":[],"x_note":"`+s+`"}`, 1), want: removed},
		{name: "sse added part member", stream: true, body: strings.Replace(rsEvents(textStream("fine", "fine")...), `"text":"","annotations":[]}`, `"text":"","annotations":[],"x_note":"`+s+`"}`, 1), want: removed},
		{name: "sse done part member", stream: true, body: strings.Replace(rsEvents(textStream("fine", "fine")...), `"part":{"type":"output_text","text":"fine"}`, `"part":{"type":"output_text","text":"fine","x_note":"`+s+`"}`, 1), want: removed},
		{name: "sse content_index as text", stream: true, body: strings.Replace(rsEvents(textStream("fine", "fine")...), `"content_index":0,"delta"`, `"content_index":"`+s+`","delta"`, 1), want: refused},
		{name: "sse annotation the done item lacks", stream: true, body: rsEvents(append(textStream("fine", "fine")[:4:4], append([]string{
			`{"type":"response.output_text.annotation.added","item_id":"msg_h","output_index":0,"content_index":0,"annotation_index":0,"annotation":{"type":"url_citation","url":"https://x.test/` + s + `","title":"t","start_index":0,"end_index":4}}`},
			textStream("fine", "fine")[4:]...)...)...), want: removed},
		{name: "sse function call name on arguments.done", stream: true, body: rsEvents(rsStream(
			`{"type":"function_call","id":"fc_h","call_id":"call_1","name":"send","arguments":"","status":"in_progress"}`, call("send", `{\"v\":\"fine\"}`),
			`{"type":"response.function_call_arguments.delta","item_id":"fc_h","output_index":0,"delta":"{\"v\":\"fine\"}"}`,
			`{"type":"response.function_call_arguments.done","item_id":"fc_h","output_index":0,"arguments":"{\"v\":\"fine\"}","name":"`+s+`"}`)...), want: removed},
		{name: "sse reasoning summary", stream: true, body: rsEvents(rsStream(
			`{"type":"reasoning","id":"rs_h","summary":[]}`, `{"type":"reasoning","id":"rs_h","summary":[{"type":"summary_text","text":"think `+s+`"}]}`,
			`{"type":"response.reasoning_summary_part.added","item_id":"rs_h","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}}`,
			`{"type":"response.reasoning_summary_text.delta","item_id":"rs_h","output_index":0,"summary_index":0,"delta":"think `+hostileHead+`"}`,
			`{"type":"response.reasoning_summary_text.delta","item_id":"rs_h","output_index":0,"summary_index":0,"delta":"`+hostileTail+`"}`,
			`{"type":"response.reasoning_summary_text.done","item_id":"rs_h","output_index":0,"summary_index":0,"text":"think `+s+`"}`,
			`{"type":"response.reasoning_summary_part.done","item_id":"rs_h","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":"think `+s+`"}}`)...), want: judged},
		{name: "sse web search query", stream: true, body: rsEvents(rsStream(
			`{"type":"web_search_call","id":"ws_h","status":"in_progress"}`, `{"type":"web_search_call","id":"ws_h","status":"completed","action":{"type":"search","query":"`+s+`"}}`,
			`{"type":"response.web_search_call.in_progress","item_id":"ws_h","output_index":0}`,
			`{"type":"response.web_search_call.completed","item_id":"ws_h","output_index":0}`)...), want: judged},
	}
	for i := range cases {
		cases[i].api = wire.Responses
		cases[i].name = "responses " + cases[i].name
	}
	return cases
}

// allHostileCases are the hostile cases of every surface.
func allHostileCases() []hostileCase {
	return append(append(hostileCases(), responsesHostileCases()...), messagesHostileCases()...)
}
