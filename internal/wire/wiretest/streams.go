package wiretest

import (
	"fmt"
	"strings"
)

// ResponsesStream200 is a Responses stream of 200 output_text deltas, as
// OpenAI sends it (the proxy's and the responses surface's stream200
// benchmarks).
func ResponsesStream200() []byte {
	var b strings.Builder
	seq := 0
	ev := func(typ, body string) {
		fmt.Fprintf(&b, "event: %s\ndata: {\"type\":%q,\"sequence_number\":%d,%s}\n\n", typ, typ, seq, body)
		seq++
	}
	obj := func(status, output string) string {
		return `{"id":"resp_bench","object":"response","created_at":1700000000,"status":"` + status + `","error":null,"incomplete_details":null,"instructions":"You are a careful assistant.","model":"gpt-bench","output":` + output + `,"parallel_tool_calls":true,"store":false,"temperature":0.2,"text":{"format":{"type":"text"},"verbosity":"medium"},"tool_choice":"auto","tools":[],"top_p":1.0,"truncation":"disabled","usage":null,"metadata":{}}`
	}
	ev("response.created", `"response":`+obj("in_progress", "[]"))
	ev("response.in_progress", `"response":`+obj("in_progress", "[]"))
	ev("response.output_item.added", `"output_index":0,"item":{"id":"msg_bench","type":"message","status":"in_progress","content":[],"role":"assistant"}`)
	loc := `"item_id":"msg_bench","output_index":0,"content_index":0`
	ev("response.content_part.added", loc+`,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}`)
	var full strings.Builder
	for i := range 200 {
		t := fmt.Sprintf("tok%d ", i)
		full.WriteString(t)
		ev("response.output_text.delta", loc+`,"delta":"`+t+`","logprobs":[],"obfuscation":"x1"`)
	}
	text := `"` + full.String() + `"`
	ev("response.output_text.done", loc+`,"text":`+text+`,"logprobs":[]`)
	part := `{"type":"output_text","annotations":[],"logprobs":[],"text":` + text + `}`
	ev("response.content_part.done", loc+`,"part":`+part)
	item := `{"id":"msg_bench","type":"message","status":"completed","content":[` + part + `],"role":"assistant"}`
	ev("response.output_item.done", `"output_index":0,"item":`+item)
	ev("response.completed", `"response":`+strings.Replace(obj("completed", "["+item+"]"), `"usage":null`, `"usage":{"input_tokens":400,"input_tokens_details":{"cached_tokens":0},"output_tokens":200,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":600}`, 1))
	return []byte(b.String())
}
