package chat

import (
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// ValidateMessages is the pre_model_call write-back check: a verdicted
// target can be sent upstream only if it is a non-empty array of message
// objects, each with a string role and a content that is a string, an
// array of part objects, or null, and every value in it is encodable
// JSON. Errors are *WriteBackError with a "$target[i]…" path.
func ValidateMessages(target any) error {
	list, ok := target.([]any)
	if !ok {
		return &wire.WriteBackError{Field: "$target", Msg: "must be an array of messages, got " + rawjson.TypeName(target)}
	}
	if len(list) == 0 {
		return &wire.WriteBackError{Field: "$target", Msg: "must not be empty"}
	}
	for i, e := range list {
		// The path is built only for an error: a valid list of a thousand
		// messages costs no allocation here.
		m, ok := e.(map[string]any)
		if !ok {
			return &wire.WriteBackError{Field: messageField(i), Msg: "must be an object, got " + rawjson.TypeName(e)}
		}
		if sub, msg := messageProblem(m); msg != "" {
			return &wire.WriteBackError{Field: messageField(i) + sub, Msg: msg}
		}
	}
	return wire.CheckEncodable(target)
}

// messageField is the path of the target's message i.
func messageField(i int) string { return "$target[" + strconv.Itoa(i) + "]" }

// UpstreamBody returns the body to send upstream.
//
// messages is the verdicted pre_model_call target; nil leaves the messages
// member as it was. Otherwise each entry that is jsonvalue.Equal to one of
// the original projected messages re-emits that original's raw bytes (so
// unprojected members and number tokens survive); matching is by equality,
// not position, so removals, insertions and reorderings keep the untouched
// entries intact, and duplicates consume the originals in order. Entries
// that match nothing are marshalled compactly.
//
// forceUsage sets stream_options.include_usage: true, keeping the other
// stream_options members; the gateway needs usage for post_model_call even
// when the client did not ask for it.
//
// Every other member keeps its raw bytes and position. With nothing to
// change the original body slice itself is returned.
func (r *Request) UpstreamBody(messages any, forceUsage bool) ([]byte, error) {
	p := rawjson.NewObjPatch(r.text.Bytes(), r.root, r.members)
	if messages != nil {
		if err := ValidateMessages(messages); err != nil {
			return nil, err
		}
		raw, err := r.messagesRaw(messages.([]any))
		if err != nil {
			return nil, err
		}
		if raw != nil {
			p.Set("messages", raw)
		}
	}
	if forceUsage && !r.includeUsage {
		p.Set("stream_options", r.streamOptionsWithUsage())
	}
	if !p.Changed() {
		return r.text.Bytes(), nil
	}
	return rawjson.SpliceOwned(r.text.Bytes(), r.root, p.Render()), nil
}

// fingerprint is a cheap necessary condition for two messages to be
// Equal; it keeps matching near-linear for long conversations.
type fingerprint struct {
	role    string
	members int
	content int // string length, part count, or -1 for null/other
}

func fingerprintOf(v any) fingerprint {
	m, ok := v.(map[string]any)
	if !ok {
		return fingerprint{members: -1}
	}
	fp := fingerprint{members: len(m), content: -1}
	fp.role, _ = m["role"].(string)
	switch c := m["content"].(type) {
	case string:
		fp.content = len(c)
	case []any:
		fp.content = len(c)
	}
	return fp
}

// messagesRaw renders the new messages array, or returns nil when it would
// be the original array entry for entry.
func (r *Request) messagesRaw(list []any) ([]byte, error) {
	// Originals grouped by fingerprint, in order; next skips the used
	// prefix so that many identical messages still match in linear time.
	type bucket struct {
		idx  []int
		next int
	}
	buckets := make(map[fingerprint]*bucket, len(r.msgs))
	for i, m := range r.msgs {
		fp := fingerprintOf(m)
		if buckets[fp] == nil {
			buckets[fp] = &bucket{}
		}
		buckets[fp].idx = append(buckets[fp].idx, i)
	}
	used := make([]bool, len(r.msgs))
	elems := make([][]byte, len(list))
	same := len(list) == len(r.msgs)
	for i, e := range list {
		// The first unused equal original; an entry repeated more often
		// than the originals reuses the first equal one.
		j := -1
		if b := buckets[fingerprintOf(e)]; b != nil {
			for b.next < len(b.idx) && used[b.idx[b.next]] {
				b.next++
			}
			for _, k := range b.idx[b.next:] {
				if !used[k] && jsonvalue.Equal(r.msgs[k], e) {
					j, used[k] = k, true
					break
				}
			}
			for _, k := range b.idx {
				if j >= 0 {
					break
				}
				if used[k] && jsonvalue.Equal(r.msgs[k], e) {
					j = k // more copies than originals: reuse the first
				}
			}
		}
		if j >= 0 {
			elems[i] = r.text.Bytes()[r.msgRaw[j].Start:r.msgRaw[j].End]
			same = same && j == i
			continue
		}
		b, err := jsonvalue.Marshal(e)
		if err != nil {
			return nil, &wire.WriteBackError{Field: "$target[" + strconv.Itoa(i) + "]", Msg: "is not encodable JSON"}
		}
		elems[i] = b
		same = false
	}
	if same {
		return nil, nil
	}
	return rawjson.RenderArray(r.text.Bytes(), r.msgSpan, r.msgRaw, elems), nil
}

// streamOptionsWithUsage returns stream_options with include_usage: true
// merged into whatever the client sent.
func (r *Request) streamOptionsWithUsage() []byte {
	i := rawjson.Find(r.members, "stream_options")
	if i < 0 || r.members[i].Val.IsNull(r.text.Bytes()) {
		return []byte(`{"include_usage":true}`)
	}
	s := r.members[i].Val
	ms, _ := rawjson.ScanObject(r.text.Bytes(), s) // validated by ParseRequest
	p := rawjson.NewObjPatch(r.text.Bytes(), s, ms)
	p.Set("include_usage", []byte("true"))
	return p.Render()
}
