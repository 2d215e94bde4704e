package messages

import (
	"slices"

	"github.com/hooks-gateway/hooks-gateway/internal/seal"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// The opaque provider blobs that round-trip through the client. An answer
// carries the gateway's seal of each (bytes the gateway made: the blob
// itself cannot be judged, and may hold anything); a request must bring
// the seal back, and the provider receives the blob it issued. A value
// that does not open is refused, which also shuts the channel from a
// client to the provider through these members.
const (
	kindSignature      seal.Kind = "messages.thinking.signature"
	kindRedactedData   seal.Kind = "messages.redacted_thinking.data"
	kindEncryptedIndex seal.Kind = "messages.citation.encrypted_index"
	kindContainerID    seal.Kind = "messages.container.id"
)

// sealEdit replaces the JSON string at span of a request body by the
// opened blob, JSON-encoded.
type sealEdit struct {
	span rawjson.Span
	repl []byte
}

// applyEdits returns body with every edit applied.
func applyEdits(body []byte, edits []sealEdit) []byte {
	slices.SortFunc(edits, func(a, b sealEdit) int { return a.span.Start - b.span.Start })
	n := len(body)
	for _, e := range edits {
		n += len(e.repl) - (e.span.End - e.span.Start)
	}
	out := make([]byte, 0, n)
	at := 0
	for _, e := range edits {
		out = append(out, body[at:e.span.Start]...)
		out = append(out, e.repl...)
		at = e.span.End
	}
	return append(out, body[at:]...)
}

// openAt opens the seal s of kind, the JSON string at span of the client's
// body (path field), records the edit that puts the provider's blob there
// and returns the blob.
func (r *Request) openAt(span rawjson.Span, field string, kind seal.Kind, s string) (string, error) {
	if s == "" {
		return "", nil // an empty blob carries nothing: it crosses as it is
	}
	blob, err := r.s.seal.OpenString(kind, s)
	if err != nil {
		return "", wire.NotIssued(field)
	}
	r.edits = append(r.edits, sealEdit{span: span, repl: appendString(nil, blob)})
	return blob, nil
}

// openSeals makes the body the upstream receives: the client's with every
// seal replaced by the blob it seals. The spans the writer reuses (the
// root, its members, the messages, the pooled blocks) move onto it: no
// span starts or ends inside a sealed string.
func (r *Request) openSeals() {
	src := r.text.Bytes()
	if len(r.edits) == 0 {
		r.body = src
		return
	}
	r.body = applyEdits(src, r.edits) // sorts the edits
	// ends[i] is the end of edit i, shifts[i] the length the edits up to
	// and including i add.
	ends := make([]int, len(r.edits))
	shifts := make([]int, len(r.edits))
	total := 0
	for i, e := range r.edits {
		total += len(e.repl) - (e.span.End - e.span.Start)
		ends[i], shifts[i] = e.span.End, total
	}
	at := func(x int) int {
		i, found := slices.BinarySearch(ends, x)
		if found {
			i++ // x is the end of edit i: after it
		}
		if i == 0 {
			return x
		}
		return x + shifts[i-1]
	}
	move := func(s rawjson.Span) rawjson.Span { return rawjson.Span{Start: at(s.Start), End: at(s.End)} }
	r.root, r.msgSpan = move(r.root), move(r.msgSpan)
	for i := range r.members {
		r.members[i].KeyAt, r.members[i].Val = at(r.members[i].KeyAt), move(r.members[i].Val)
	}
	for i := range r.msgRaw {
		r.msgRaw[i] = move(r.msgRaw[i])
	}
	r.pool.rebase(r.body, move)
}

// memberSpan is the span of member name's value in the object at s of
// body, which was decoded strictly already; the zero span when absent.
func memberSpan(body []byte, s rawjson.Span, name string) rawjson.Span {
	ms, _ := rawjson.ScanObject(body, s)
	if i := rawjson.Find(ms, name); i >= 0 {
		return ms[i].Val
	}
	return rawjson.Span{}
}

// citationProjection projects a citation, of a request or an answer: a web
// search citation as a url_citation annotation {type, url, title,
// cited_text} with any other member beside them, any other citation as its
// native object. encrypted_index is never projected: the client holds the
// gateway's seal of it, the provider gets back its own.
func citationProjection(c map[string]any) map[string]any {
	if c["type"] == "web_search_result_location" && textOrNull(c["url"]) && textOrNull(c["title"]) && textOrNull(c["cited_text"]) {
		url, _ := c["url"].(string)
		title, _ := c["title"].(string)
		ct, _ := c["cited_text"].(string)
		p := map[string]any{"type": "url_citation", "url": url, "title": title, "cited_text": ct}
		for k, v := range c {
			if !webCitationMembers.Has(k) {
				p[k] = v
			}
		}
		return p
	}
	p := make(map[string]any, len(c))
	for k, v := range c {
		if k != "encrypted_index" {
			p[k] = v
		}
	}
	return p
}

// textOrNull reports whether v is a string, null or absent.
func textOrNull(v any) bool {
	switch v.(type) {
	case nil, string:
		return true
	}
	return false
}

// webCitationMembers are the members of a web search citation that its
// url_citation projection holds or seals.
var webCitationMembers = rawjson.NewMemberSet("type", "url", "title", "cited_text", "encrypted_index")

// sealString returns the JSON string of the seal of blob for kind.
func (s *Surface) sealString(kind seal.Kind, blob string) []byte {
	out := append(make([]byte, 0, s.seal.SealedLen(len(blob))+2), '"')
	out = s.seal.AppendSeal(out, kind, []byte(blob))
	return append(out, '"')
}
