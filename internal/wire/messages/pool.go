package messages

import (
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// poolKind separates the projections original blocks are matched by.
type poolKind int

const (
	poolPart   poolKind = iota // a content part (text, image, reasoning, native)
	poolCall                   // an assistant tool call (tool_use)
	poolResult                 // a tool message (tool_result)
	poolCite                   // a citation (a text part's annotation)
	poolKinds
)

// pool holds the original blocks of a request (or answer) by their
// projection, so that a verdicted entry equal to an original re-emits the
// original's bytes: its metadata (cache_control, citations, signature,
// encrypted data) survives, and a thinking block keeps its signature.
type pool struct {
	entries [poolKinds][]poolEntry
}

type poolEntry struct {
	proj any
	raw  []byte
	span rawjson.Span // raw's place in a request body (addSpan)
}

func (p *pool) add(k poolKind, proj any, raw []byte) {
	p.entries[k] = append(p.entries[k], poolEntry{proj: proj, raw: raw})
}

// addSpan adds the original at span s of body.
func (p *pool) addSpan(k poolKind, proj any, body []byte, s rawjson.Span) {
	p.entries[k] = append(p.entries[k], poolEntry{proj: proj, raw: body[s.Start:s.End], span: s})
}

// rebase points every entry added by addSpan at its place in body, where
// move puts its span.
func (p *pool) rebase(body []byte, move func(rawjson.Span) rawjson.Span) {
	for k := range p.entries {
		for i := range p.entries[k] {
			e := &p.entries[k][i]
			e.span = move(e.span)
			e.raw = body[e.span.Start:e.span.End]
		}
	}
}

// claimer hands out pool entries for one write-back: the first unused
// entry equal to v, else (a duplicated entry) the first used equal one.
type claimer struct {
	p    *pool
	used [poolKinds][]bool
}

func (p *pool) claimer() *claimer {
	c := &claimer{p: p}
	for k := range c.used {
		c.used[k] = make([]bool, len(p.entries[k]))
	}
	return c
}

// claim returns the raw bytes of the original equal to v, or nil.
func (c *claimer) claim(k poolKind, v any) []byte {
	es := c.p.entries[k]
	reuse := -1
	for i := range es {
		if !jsonvalue.Equal(es[i].proj, v) {
			continue
		}
		if !c.used[k][i] {
			c.used[k][i] = true
			return es[i].raw
		}
		if reuse < 0 {
			reuse = i
		}
	}
	if reuse >= 0 {
		return es[reuse].raw
	}
	return nil
}
