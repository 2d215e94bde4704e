package responses

import "strings"

// plainWatch follows whether the answer so far is plain text: one
// assistant message item at output index 0 holding one output_text part
// without annotations, its text arriving as output_text deltas. Anything
// else (another item of any type, a second or refusal part, an
// annotation, hosted-tool progress, an event out of that order) ends it
// for good: the pipeline then buffers and judges the rest whole.
type plainWatch struct {
	plain bool
	text  strings.Builder
	// snapshot holds the first response snapshot's members that the final
	// object's rules would release unchanged; Head renders it.
	snapshot map[string]any
	msgID    string
	// the message item and its part: added, then done
	itemAdded, partAdded, partDone, itemDone bool
}

// observe applies one event the assembler accepted.
func (p *plainWatch) observe(a *assembler, typ string, obj map[string]any) {
	if p.plain && !p.plainEvent(a, typ, obj) {
		p.plain = false
	}
}

// plainEvent reports whether the event keeps the answer plain, recording
// what Head and Text need.
func (p *plainWatch) plainEvent(a *assembler, typ string, obj map[string]any) bool {
	ci, hasCI := index(obj["content_index"])
	firstPart := hasCI && ci == 0 && p.itemAdded && !p.itemDone
	switch typ {
	case "response.created", "response.in_progress", "response.queued":
		if p.snapshot == nil {
			resp, _ := obj["response"].(map[string]any)
			p.snapshot = a.snapshotMeta(resp)
		}
		return true
	case "response.completed", "response.incomplete":
		return true
	case "response.output_item.added":
		item, _ := obj["item"].(map[string]any)
		id, ok := item["id"].(string)
		if p.itemAdded || p.snapshot == nil || item["type"] != "message" || item["role"] != "assistant" || !emptyAdded(item) || !ok {
			return false
		}
		if st, ok := item["status"]; ok && st != "in_progress" {
			return false
		}
		p.itemAdded, p.msgID = true, a.ids.item(id) // the seal the done item will carry
		return true
	case "response.content_part.added":
		part, _ := obj["part"].(map[string]any)
		if !firstPart || p.partAdded || !emptyTextPart(part, "") {
			return false
		}
		p.partAdded = true
		return true
	case "response.output_text.delta":
		d, _ := obj["delta"].(string)
		if !firstPart || !p.partAdded || p.partDone {
			return false
		}
		p.text.WriteString(d)
		return true
	case "response.output_text.done":
		return firstPart && p.partAdded && !p.partDone
	case "response.content_part.done":
		part, _ := obj["part"].(map[string]any)
		if !firstPart || !p.partAdded || p.partDone || !emptyTextPart(part, p.text.String()) {
			return false
		}
		p.partDone = true
		return true
	case "response.output_item.done":
		item, _ := obj["item"].(map[string]any)
		content, _ := item["content"].([]any)
		if !p.itemAdded || p.itemDone || !p.partDone || item["type"] != "message" || len(content) != 1 {
			return false
		}
		part, _ := content[0].(map[string]any)
		p.itemDone = true
		return emptyTextPart(part, p.text.String())
	}
	return false
}

// emptyTextPart reports whether part is an output_text part holding text
// and no annotation.
func emptyTextPart(part map[string]any, text string) bool {
	if part["type"] != "output_text" || part["text"] != text {
		return false
	}
	anns, ok := part["annotations"]
	list, isList := anns.([]any)
	return !ok || anns == nil || isList && len(list) == 0
}

// finish keeps the answer plain only when its projection's content is
// exactly the text assembled: what Text promised to be a prefix of.
func (p *plainWatch) finish(resp *Response) {
	if s, ok := resp.proj["content"].(string); !ok || s != p.text.String() {
		p.plain = false
	}
}
