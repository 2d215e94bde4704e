package responses

import "strings"

// plainWatch follows whether the answer so far is plain text: assistant
// message items, one after the other from output index 0, each holding
// output_text parts one after the other, without annotations, their text
// arriving as output_text deltas. Text is the join of those parts' text,
// as openai-go's output_text joins them. Anything else (another item
// type, a refusal part, an annotation, hosted-tool progress, an item or
// part opened before the one before it was done, an event out of that
// order) ends it for good: the pipeline then buffers and judges the rest
// whole.
type plainWatch struct {
	plain bool
	text  strings.Builder
	// snapshot holds the first response snapshot's members that the final
	// object's rules would release unchanged; Head renders it.
	snapshot map[string]any
	items    []plainItem
	parts    []plainPart
}

// plainItem is one assistant message item of a plain answer, at the
// output index of its position.
type plainItem struct {
	id     string
	parts  int    // content parts added
	status string // its status once done, "" when it had none
	done   bool
}

// plainPart is one output_text part: its item (an index of items), its
// content index, and where its text lies in Text, [start, end); end grows
// until the part is done.
type plainPart struct {
	item, ci   int
	start, end int
	done       bool
}

// observe applies one event the assembler accepted.
func (p *plainWatch) observe(a *assembler, typ string, obj map[string]any) {
	if p.plain && !p.plainEvent(a, typ, obj) {
		p.plain = false
	}
}

// plainEvent reports whether the event keeps the answer plain, recording
// what Head, Delta and Text need.
func (p *plainWatch) plainEvent(a *assembler, typ string, obj map[string]any) bool {
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
		return p.itemAdded(a, obj)
	}
	it := p.openItem(obj)
	if it == nil {
		return false
	}
	switch typ {
	case "response.content_part.added":
		part, _ := obj["part"].(map[string]any)
		ci, ok := index(obj["content_index"])
		if !ok || ci != it.parts || it.parts > 0 && !p.parts[len(p.parts)-1].done || !emptyTextPart(part, "") {
			return false
		}
		it.parts++
		n := p.text.Len()
		p.parts = append(p.parts, plainPart{item: len(p.items) - 1, ci: ci, start: n, end: n})
		return true
	case "response.output_text.delta":
		pt := p.openPart(obj)
		d, ok := obj["delta"].(string)
		if pt == nil || !ok {
			return false
		}
		p.text.WriteString(d)
		pt.end = p.text.Len()
		return true
	case "response.output_text.done":
		return p.openPart(obj) != nil // its text agrees with the deltas (assembler)
	case "response.content_part.done":
		pt := p.openPart(obj)
		part, _ := obj["part"].(map[string]any)
		if pt == nil || !emptyTextPart(part, p.partText(pt)) {
			return false
		}
		pt.done = true
		return true
	case "response.output_item.done":
		return p.itemDone(it, obj)
	}
	return false
}

// itemAdded opens the next message item, after every earlier one is done.
func (p *plainWatch) itemAdded(a *assembler, obj map[string]any) bool {
	item, _ := obj["item"].(map[string]any)
	oi, ok := index(obj["output_index"])
	last := len(p.items) - 1
	switch {
	case !ok || oi != len(p.items) || last >= 0 && !p.items[last].done:
		return false
	case p.snapshot == nil || item["type"] != "message" || item["role"] != "assistant" || !emptyAdded(item):
		return false
	}
	id, ok := item["id"].(string)
	if !ok {
		return false
	}
	if st, ok := item["status"]; ok && st != "in_progress" {
		return false
	}
	p.items = append(p.items, plainItem{id: a.ids.item(id)}) // the seal the done item will carry
	return true
}

// itemDone closes the open item: every part it added done, its content
// exactly those parts, its status (if any) one a finished item has.
func (p *plainWatch) itemDone(it *plainItem, obj map[string]any) bool {
	item, _ := obj["item"].(map[string]any)
	content, _ := item["content"].([]any)
	status, _ := item["status"].(string)
	if _, ok := item["status"]; ok && status != "completed" && status != "incomplete" || item["type"] != "message" || len(content) != it.parts {
		return false
	}
	first := len(p.parts) - it.parts // the item's parts are the last ones
	for j, c := range content {
		pt := &p.parts[first+j]
		part, _ := c.(map[string]any)
		if !pt.done || !emptyTextPart(part, p.partText(pt)) {
			return false
		}
	}
	it.done, it.status = true, status
	return true
}

// openItem returns the last item when it is still open and obj addresses
// it, else nil.
func (p *plainWatch) openItem(obj map[string]any) *plainItem {
	oi, ok := index(obj["output_index"])
	return p.openItemAt(oi, ok)
}

// openItemAt is openItem for an event addressing output index oi (ok:
// it has one).
func (p *plainWatch) openItemAt(oi int, ok bool) *plainItem {
	if !ok || oi != len(p.items)-1 || p.items[oi].done {
		return nil
	}
	return &p.items[oi]
}

// openPart returns the last part when it is still open and obj (an event
// of the open item) addresses it by its content index, else nil.
func (p *plainWatch) openPart(obj map[string]any) *plainPart {
	ci, ok := index(obj["content_index"])
	return p.openPartAt(ci, ok)
}

// openPartAt is openPart for an event addressing content index ci (ok:
// it has one).
func (p *plainWatch) openPartAt(ci int, ok bool) *plainPart {
	if len(p.parts) == 0 {
		return nil
	}
	pt := &p.parts[len(p.parts)-1]
	if pt.done || pt.item != len(p.items)-1 || !ok || ci != pt.ci {
		return nil
	}
	return pt
}

// plainDelta is plainEvent for a delta event the fast path applied
// (output: an output_text delta) at output index oi and content index ci
// (hasCI: the event names one), carrying text.
func (p *plainWatch) plainDelta(output bool, oi, ci int, hasCI bool, text []byte) bool {
	if p.openItemAt(oi, true) == nil || !output {
		return false
	}
	pt := p.openPartAt(ci, hasCI)
	if pt == nil {
		return false
	}
	p.text.Write(text)
	pt.end = p.text.Len()
	return true
}

// partText is the text of pt so far.
func (p *plainWatch) partText(pt *plainPart) string {
	return p.text.String()[pt.start:pt.end]
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

// finish keeps the answer plain only when its projection's content holds
// exactly the plain parts' text, which Text promised to be a prefix of.
func (p *plainWatch) finish(resp *Response) {
	var texts []string
	switch c := resp.proj["content"].(type) {
	case string:
		texts = []string{c}
	case []any:
		for _, e := range c {
			part, _ := e.(map[string]any)
			s, ok := part["text"].(string)
			if part["type"] != "text" || !ok {
				p.plain = false
				return
			}
			texts = append(texts, s)
		}
	}
	if len(texts) != len(p.parts) {
		p.plain = false
		return
	}
	for i := range p.parts {
		if texts[i] != p.partText(&p.parts[i]) {
			p.plain = false
			return
		}
	}
}
