package interceptors

import (
	"slices"
	"strings"
)

// Text that readers join. The normalized projection splits text the way
// the wire does: a Responses answer into one text part per output_text
// entry of each message item, an Anthropic message into one part per text
// block, a request's input_text parts and text blocks likewise. Readers
// put those pieces back together: openai's output_text concatenates every
// output_text of every message item, skipping reasoning, tool-call and
// hosted-call items between them; applications concatenate an Anthropic
// answer's text blocks around its tool_use and thinking blocks; a model
// reads a message's text blocks as one prompt. So regex, redact and egress
// judge, besides each string, the join of the parts of one kind in one
// array:
//
//   - text parts ({"type":"text","text"}), joined across the parts of
//     other kinds between them;
//   - reasoning parts ({"type":"reasoning","text"}), joined among
//     themselves: clients show reasoning apart from the answer, summary
//     after summary;
//   - refusal parts ({"type":"refusal","refusal"}), likewise.
//
// Pieces of different kinds are never joined with each other, and pieces
// in different arrays (two messages, even consecutive ones of one role)
// are not either: that is a documented limit of pattern matching.

// Kinds of parts whose texts are joined, indexes of joinCounts.
const (
	joinText = iota
	joinReasoning
	joinRefusal
	joinKinds
)

// joinedPart returns the kind of e when e is a part whose text readers
// join with the other parts of its kind in the same array, the member
// holding that text, and the text; kind -1 otherwise. The join of the
// text kind is the text a StreamMediator releases, enforcement.ResponseText
// (TestTextJoinIsResponseText holds the two to one rule).
func joinedPart(e any) (kind int, member, text string) {
	p, ok := e.(map[string]any)
	if !ok {
		return -1, "", ""
	}
	typ, _ := p["type"].(string)
	switch typ {
	case "text":
		kind, member = joinText, "text"
	case "reasoning":
		kind, member = joinReasoning, "text"
	case "refusal":
		kind, member = joinRefusal, "refusal"
	default:
		return -1, "", ""
	}
	if text, ok = p[member].(string); !ok {
		return -1, "", ""
	}
	return kind, member, text
}

// joinCounts counts, per kind, the parts of an array with non-empty text
// and the bytes of their texts. A kind with two such parts or more has a
// join to judge.
type joinCounts struct {
	parts, bytes [joinKinds]int
}

// countJoins counts the joinable parts of x; it allocates nothing.
func countJoins(x []any) (c joinCounts, multi bool) {
	for _, e := range x {
		if k, _, s := joinedPart(e); k >= 0 && s != "" {
			c.parts[k]++
			c.bytes[k] += len(s)
			multi = multi || c.parts[k] > 1
		}
	}
	return c, multi
}

// joined returns the concatenated texts of x's parts of kind k, size bytes
// long: the one allocation judging a join costs.
func joined(x []any, k, size int) string {
	var b strings.Builder
	b.Grow(size)
	for _, e := range x {
		if kk, _, s := joinedPart(e); kk == k {
			b.WriteString(s)
		}
	}
	return b.String()
}

// anyJoin reports whether match holds for the join of a kind of x's parts
// (see joinedPart), for each kind that has two non-empty parts or more.
// Arrays without such parts cost a pass over their elements and no
// allocation.
func anyJoin(x []any, match func(string) bool) bool {
	c, multi := countJoins(x)
	if !multi {
		return false
	}
	for k := range joinKinds {
		if c.parts[k] > 1 && match(joined(x, k, c.bytes[k])) {
			return true
		}
	}
	return false
}

// edit replaces s[start:end] of a string with repl. det is the detector
// that found it (redact); other types leave it 0.
type edit struct {
	start, end int
	repl       string
	det        int
}

// settle orders edits by start, the longer first where two start together,
// and merges each edit that starts inside an earlier one into it: the
// merged edit covers both and keeps the earlier one's replacement, so
// every byte any edit covered is replaced once. Edits found by one search
// of one string come in order and settle keeps their order; the edits of
// several searches (each part of a join, and the join) are sorted first.
func settle(es []edit) []edit {
	order := func(a, b edit) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return b.end - a.end
	}
	if !slices.IsSortedFunc(es, order) {
		slices.SortStableFunc(es, order)
	}
	out := es[:0]
	for _, e := range es {
		if n := len(out); n > 0 && e.start < out[n-1].end {
			out[n-1].end = max(out[n-1].end, e.end)
			continue
		}
		out = append(out, e)
	}
	return out
}

// applyEdits returns s with settled edits applied.
func applyEdits(s string, es []edit) string {
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, e := range es {
		b.WriteString(s[last:e.start])
		b.WriteString(e.repl)
		last = e.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// runText is the judged text of one part of a join: text replaces the
// part's text member when changed is set.
type runText struct {
	text    string
	changed bool
}

// runs judges the joins of x for the rewriter: for every kind with two
// non-empty parts or more it finds the edits in each part and in their
// join, and returns each part's share of them applied, indexed like x.
// It returns nil when nothing was found: the joins themselves are then
// all it allocated.
func (w *textRewriter) runs(x []any, c joinCounts) []runText {
	var out []runText
	for k := range joinKinds {
		if c.parts[k] < 2 {
			continue
		}
		// The edits of each part, at their offsets in the join, then the
		// join's own: a match inside one part counts there whatever the
		// join does to its anchors and normalization.
		var b strings.Builder
		b.Grow(c.bytes[k])
		es := w.buf[:0]
		for _, e := range x {
			if kk, _, s := joinedPart(e); kk == k && s != "" {
				off, n := b.Len(), len(es)
				es = w.find(es, s)
				for i := n; i < len(es); i++ {
					es[i].start += off
					es[i].end += off
				}
				b.WriteString(s)
			}
		}
		join := b.String()
		es = w.find(es, join)
		w.buf = es[:0]
		if len(es) == 0 {
			continue
		}
		es = w.settle(es)
		if out == nil {
			out = make([]runText, len(x))
		}
		distribute(x, k, es, len(join), out)
		w.buf = es[:0]
	}
	return out
}

// distribute writes into out each part's share of the settled edits es of
// the join of x's parts of kind k (total bytes long): an edit's
// replacement goes into the part where it starts, and the rest of what it
// covers is removed from the parts it runs on into. Offsets are bytes of
// the join at rune boundaries (where a match or a URL starts and ends);
// every part is valid UTF-8, so they are rune boundaries of the part they
// fall in and every share is whole UTF-8.
func distribute(x []any, k int, es []edit, total int, out []runText) {
	var local []edit
	j, start := 0, 0
	for i, e := range x {
		kk, _, s := joinedPart(e)
		if kk != k || s == "" {
			continue
		}
		end := start + len(s)
		local = local[:0]
		for ; j < len(es); j++ {
			ed := es[j]
			// An edit starting at this part's end belongs to the next part,
			// unless the join ends there (an empty match at its very end).
			if ed.start > end || ed.start == end && (end < total || ed.end > ed.start) {
				break
			}
			if ed.start >= start {
				local = append(local, edit{start: ed.start - start, end: min(ed.end, end) - start, repl: ed.repl})
			} else {
				local = append(local, edit{start: 0, end: min(ed.end, end) - start})
			}
			if ed.end > end {
				break // it runs on into the next part, which takes it up again
			}
		}
		if len(local) > 0 {
			if ns := applyEdits(s, local); ns != s {
				out[i] = runText{text: ns, changed: true}
			}
		}
		start = end
	}
}
