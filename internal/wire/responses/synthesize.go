package responses

import (
	"maps"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// Response returns the assembled answer.
func (s *Stream) Response() wire.Response { return s.resp }

// BufferedBytes is how much of the stream was held in memory.
func (s *Stream) BufferedBytes() int64 { return s.buffered }

// Release renders the events for the client, all synthesized from the
// verdicted answer (target nil: the projection) as the JSON answer would
// be released: nothing of the upstream's events crosses, so ids, seals
// and every value the rules make are the same in every event and in the
// terminal object.
func (s *Stream) Release(target any) ([]byte, error) {
	body, err := s.resp.render(target)
	if err != nil {
		return nil, err
	}
	return synthesize(body)
}

// synthesizer numbers and frames synthesized events.
type synthesizer struct {
	out []byte
	seq int
}

func (y *synthesizer) emit(typ string, members map[string]any) {
	members["type"] = typ
	members["sequence_number"] = y.seq
	y.seq++
	y.out = append(y.out, "event: "...)
	y.out = append(y.out, typ...)
	y.out = append(y.out, "\ndata: "...)
	y.out, _ = jsonvalue.AppendCompact(y.out, members) // built from checked values
	y.out = append(y.out, "\n\n"...)
}

// synthesize renders a complete event sequence for a released response
// object: created, in_progress, per item added / part and delta events /
// done, and response.completed (or response.incomplete), with consecutive
// sequence numbers from 0. Every text arrives in one delta.
func synthesize(body []byte) ([]byte, error) {
	v, err := jsonvalue.Decode(body)
	if err != nil {
		return nil, &wire.WriteBackError{Msg: "released response is not valid JSON"}
	}
	resp := v.(map[string]any)
	output, _ := resp["output"].([]any)
	// The events repeat the object about five times over (two snapshots
	// without the output; each text in its delta, its done event, its
	// part's, its item's and the terminal object), plus each event's
	// framing: sized for that, the output is not copied as it grows.
	y := &synthesizer{out: make([]byte, 0, 5*len(body)+2048)}
	y.open(resp)
	for oi, e := range output {
		y.item(oi, e.(map[string]any))
	}
	y.terminal(resp)
	return y.out, nil
}

// open emits response.created and response.in_progress carrying resp as
// a snapshot: no output, in progress, no usage. Only top-level members
// are replaced, so a shallow copy leaves resp as it was.
func (y *synthesizer) open(resp map[string]any) {
	snap := maps.Clone(resp)
	snap["output"] = []any{}
	snap["status"] = "in_progress"
	snap["usage"] = nil
	snap["incomplete_details"] = nil
	if _, ok := snap["completed_at"]; ok {
		snap["completed_at"] = nil
	}
	y.emit("response.created", map[string]any{"response": snap})
	y.emit("response.in_progress", map[string]any{"response": snap}) // emit does not change it
}

// terminal emits the event that ends the stream with resp:
// response.completed, or response.incomplete for an incomplete answer.
func (y *synthesizer) terminal(resp map[string]any) {
	typ := "response.completed"
	if resp["status"] == "incomplete" {
		typ = "response.incomplete"
	}
	y.emit(typ, map[string]any{"response": resp})
}

// itemLoc returns the function that adds item_id and output_index to an
// event's members.
func itemLoc(id string, oi int) func(map[string]any) map[string]any {
	return func(extra map[string]any) map[string]any {
		extra["item_id"] = id
		extra["output_index"] = oi
		return extra
	}
}

// item emits one output item's events.
func (y *synthesizer) item(oi int, item map[string]any) {
	id, _ := item["id"].(string)
	loc := itemLoc(id, oi)
	added := maps.Clone(item) // only its top-level members change
	if _, ok := added["status"]; ok {
		added["status"] = "in_progress"
	}
	switch item["type"] {
	case "message":
		added["content"] = []any{}
		y.emit("response.output_item.added", map[string]any{"output_index": oi, "item": added})
		content, _ := item["content"].([]any)
		for ci, p := range content {
			y.part(loc, ci, p.(map[string]any))
		}
	case "function_call":
		added["arguments"] = ""
		y.emit("response.output_item.added", map[string]any{"output_index": oi, "item": added})
		y.emit("response.function_call_arguments.delta", loc(map[string]any{"delta": item["arguments"]}))
		y.emit("response.function_call_arguments.done", loc(map[string]any{"arguments": item["arguments"], "name": item["name"]}))
	case "reasoning":
		added["summary"] = []any{}
		delete(added, "content")
		y.emit("response.output_item.added", map[string]any{"output_index": oi, "item": added})
		summary, _ := item["summary"].([]any)
		for si, p := range summary {
			text := p.(map[string]any)["text"]
			y.emit("response.reasoning_summary_part.added", loc(map[string]any{"summary_index": si, "part": map[string]any{"type": "summary_text", "text": ""}}))
			y.emit("response.reasoning_summary_text.delta", loc(map[string]any{"summary_index": si, "delta": text}))
			y.emit("response.reasoning_summary_text.done", loc(map[string]any{"summary_index": si, "text": text}))
			y.emit("response.reasoning_summary_part.done", loc(map[string]any{"summary_index": si, "part": map[string]any{"type": "summary_text", "text": text}}))
		}
		content, _ := item["content"].([]any)
		for ci, p := range content {
			text := p.(map[string]any)["text"]
			y.emit("response.reasoning_text.delta", loc(map[string]any{"content_index": ci, "delta": text}))
			y.emit("response.reasoning_text.done", loc(map[string]any{"content_index": ci, "text": text}))
		}
	default: // provider-executed calls arrive whole
		y.emit("response.output_item.added", map[string]any{"output_index": oi, "item": added})
	}
	y.emit("response.output_item.done", map[string]any{"output_index": oi, "item": item})
}

// part emits one message content part's events.
func (y *synthesizer) part(loc func(map[string]any) map[string]any, ci int, p map[string]any) {
	if p["type"] == "refusal" {
		y.emit("response.content_part.added", loc(map[string]any{"content_index": ci, "part": map[string]any{"type": "refusal", "refusal": ""}}))
		y.emit("response.refusal.delta", loc(map[string]any{"content_index": ci, "delta": p["refusal"]}))
		y.emit("response.refusal.done", loc(map[string]any{"content_index": ci, "refusal": p["refusal"]}))
		y.emit("response.content_part.done", loc(map[string]any{"content_index": ci, "part": p}))
		return
	}
	y.emit("response.content_part.added", loc(map[string]any{"content_index": ci, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}}))
	y.emit("response.output_text.delta", loc(map[string]any{"content_index": ci, "delta": p["text"]}))
	y.closeText(loc, ci, p)
}

// closeText emits the events that end output_text part p after its
// deltas: its annotations, output_text.done and content_part.done.
func (y *synthesizer) closeText(loc func(map[string]any) map[string]any, ci int, p map[string]any) {
	anns, _ := p["annotations"].([]any)
	for ai, a := range anns {
		y.emit("response.output_text.annotation.added", loc(map[string]any{"content_index": ci, "annotation_index": ai, "annotation": a}))
	}
	y.emit("response.output_text.done", loc(map[string]any{"content_index": ci, "text": p["text"]}))
	y.emit("response.content_part.done", loc(map[string]any{"content_index": ci, "part": p}))
}
