package responses

import (
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// The fast path applies the events nearly every stream is made of, the
// text deltas, without decoding a value tree: it scans the raw data with
// the strict token checks, and only when the event has a shape whose
// outcome it is sure of (its members escape-free and present once, the
// ones it reads of the expected kind, any other member a lower-case name
// holding a scalar or an empty array or object, the event accepted by
// every check the tree path applies) does it apply it, as the tree path
// would. Any other event, or one it is unsure of (one the tree path would
// refuse included), goes to the tree path untouched: scanning changes no
// state.

// deltaLists maps the delta events to the list of the item's texts their
// delta extends (see textKey): fragment applies them so, and the fast path
// applies these same events.
var deltaLists = map[string]byte{
	"response.output_text.delta":                'c',
	"response.refusal.delta":                    'c',
	"response.reasoning_text.delta":             'c',
	"response.reasoning_summary_text.delta":     's',
	"response.function_call_arguments.delta":    'a',
	"response.code_interpreter_call_code.delta": 'a',
}

// The members a fast event reads, as bits of fastEvent.seen.
const (
	fType uint8 = 1 << iota
	fSeq
	fItemID
	fOutput
	fContent
	fSummary
	fDelta
)

// maxFastUnknown is how many members the fast path ignores in one event;
// an event with more takes the tree path.
const maxFastUnknown = 4

// fastEvent is a scanned delta event. Its byte slices point into the
// event data, so a scan allocates nothing.
type fastEvent struct {
	seen       uint8
	typ        []byte // the type, escape-free
	seq        int64
	itemID     []byte // the item_id's characters, escape-free
	oi, ci, si int    // output, content and summary indices
	delta      rawjson.Span
	escaped    bool // the delta holds an escape
	unknown    [maxFastUnknown][]byte
	nUnknown   int
}

// fastDelta applies the event (data, named evType) when it is a delta the
// fast path is sure of, and reports whether it did; err is then the
// event's outcome.
func (a *assembler) fastDelta(data, evType []byte) (bool, error) {
	if a.noFast {
		return false, nil
	}
	e, ok := scanFastEvent(data)
	if !ok {
		return false, nil
	}
	list, ok := deltaLists[string(e.typ)]
	const need = fType | fSeq | fOutput | fDelta
	switch {
	case !ok, e.seen&need != need, len(evType) > 0 && string(evType) != string(e.typ):
		return false, nil
	case e.seq <= a.lastSeq, e.oi >= len(a.items):
		return false, nil
	}
	it := a.items[e.oi]
	if it.done != nil || e.seen&fItemID != 0 && string(e.itemID) != it.id {
		return false, nil
	}
	// What dispatch, handle, item and fragment do for such an event.
	a.lastSeq = e.seq
	text := data[e.delta.Start+1 : e.delta.End-1]
	if e.escaped {
		a.scratch = rawjson.AppendUnescaped(a.scratch[:0], data[e.delta.Start:e.delta.End])
		text = a.scratch
	}
	it.text(deltaKey(list, e.ci, e.si)).Write(text)
	if a.watch && a.plain.plain && !a.plain.plainDelta(string(e.typ) == "response.output_text.delta", e.oi, e.ci, e.seen&fContent != 0, text) {
		a.plain.plain = false
	}
	return true, nil
}

// deltaKey is the text a delta of list extends, at content index ci or
// summary index si.
func deltaKey(list byte, ci, si int) textKey {
	switch list {
	case 'c':
		return textKey{list, ci}
	case 's':
		return textKey{list, si}
	}
	return textKey{list: list}
}

// scanFastEvent scans data as an object of escape-free member names; ok
// is false for anything else, and for any member it is unsure of.
func scanFastEvent(b []byte) (fastEvent, bool) {
	var e fastEvent
	i := rawjson.SkipSpace(b, 0)
	end, ok := rawjson.ObjectEach(b, i, func(key []byte, at int) (int, bool) {
		return e.member(b, key, at)
	})
	return e, ok && rawjson.SkipSpace(b, end) == len(b)
}

// member scans the member key whose value starts at b[at].
func (e *fastEvent) member(b, key []byte, at int) (int, bool) {
	switch string(key) {
	case "type":
		return e.plainString(b, at, fType, &e.typ)
	case "item_id":
		return e.plainString(b, at, fItemID, &e.itemID)
	case "sequence_number":
		n, end, ok := e.count(b, at, fSeq, 18)
		e.seq = n
		return end, ok
	case "output_index":
		n, end, ok := e.count(b, at, fOutput, 9)
		e.oi = int(n)
		return end, ok
	case "content_index":
		n, end, ok := e.count(b, at, fContent, 9)
		e.ci = int(n)
		return end, ok
	case "summary_index":
		n, end, ok := e.count(b, at, fSummary, 9)
		e.si = int(n)
		return end, ok
	case "delta":
		if b[at] != '"' || !e.once(fDelta) {
			return 0, false
		}
		end, escaped, ok := rawjson.StrictString(b, at)
		e.delta, e.escaped = rawjson.Span{Start: at, End: end}, escaped
		return end, ok
	}
	return e.other(b, key, at)
}

// once marks bit seen and reports whether it was not yet.
func (e *fastEvent) once(bit uint8) bool {
	if e.seen&bit != 0 {
		return false
	}
	e.seen |= bit
	return true
}

// plainString scans the escape-free string at b[at], the first member
// named by bit, into *chars (its characters).
func (e *fastEvent) plainString(b []byte, at int, bit uint8, chars *[]byte) (int, bool) {
	if b[at] != '"' || !e.once(bit) {
		return 0, false
	}
	end, escaped, ok := rawjson.StrictString(b, at)
	if !ok || escaped {
		return 0, false
	}
	*chars = b[at+1 : end-1]
	return end, true
}

// count scans the non-negative integer n at b[at], of at most maxDigits digits
// and without a leading zero, the first member named by bit.
func (e *fastEvent) count(b []byte, at int, bit uint8, maxDigits int) (n int64, end int, ok bool) {
	end, ok = rawjson.StrictNumber(b, at)
	if !ok || !e.once(bit) || end-at > maxDigits || end-at > 1 && b[at] == '0' {
		return 0, 0, false
	}
	for _, c := range b[at:end] {
		if c < '0' || c > '9' {
			return 0, 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, end, true
}

// other scans a member the fast path does not read. The tree path reads
// it and ignores it, unless its name folds onto a known one (a lower-case
// ASCII name cannot, unless it is known), it is an index member (checked
// as an index), it is named error (an upstream error), or the object
// repeats it: those take the tree path, as does any value but a scalar or
// an empty array or object, which the scan would have to check in full.
func (e *fastEvent) other(b, key []byte, at int) (int, bool) {
	if e.nUnknown == maxFastUnknown || !lowerASCII(key) || string(key) == "error" {
		return 0, false
	}
	for _, k := range indexMembers {
		if string(key) == k {
			return 0, false
		}
	}
	for _, k := range e.unknown[:e.nUnknown] {
		if string(k) == string(key) {
			return 0, false
		}
	}
	e.unknown[e.nUnknown] = key
	e.nUnknown++
	return scalarOrEmpty(b, at)
}

// lowerASCII reports whether name has no upper-case letter and no byte
// beyond ASCII: under Unicode case folding it equals only itself.
func lowerASCII(name []byte) bool {
	for _, c := range name {
		if c >= 'A' && c <= 'Z' || c >= 0x80 {
			return false
		}
	}
	return true
}

// scalarOrEmpty checks the value at b[at] when it is a string, number,
// literal, [] or {}, as the strict decoder would.
func scalarOrEmpty(b []byte, at int) (int, bool) {
	switch c := b[at]; c {
	case '"':
		end, _, ok := rawjson.StrictString(b, at)
		return end, ok
	case 't':
		return rawjson.StrictLiteral(b, at, "true")
	case 'f':
		return rawjson.StrictLiteral(b, at, "false")
	case 'n':
		return rawjson.StrictLiteral(b, at, "null")
	case '[', '{':
		i := rawjson.SkipSpace(b, at+1)
		if i < len(b) && b[i] == c+2 { // ']' and '}' follow '[' and '{' by two
			return i + 1, true
		}
		return 0, false
	}
	return rawjson.StrictNumber(b, at)
}

// The response events (response.created, in_progress and queued, the
// snapshots, and response.completed and incomplete, the terminal ones)
// carry the whole response object, of which the assembler reads only the
// output: a snapshot's must be empty, the terminal one's is compared with
// the done items, and finish reads the terminal object again from the
// raw data. lightEvent decodes such an event with its response object
// reduced to that one member, once a raw check has proved that the whole
// data decodes strictly: the tree path's checks then run on it unchanged,
// without building the tree of a response they do not read.

// responseEvent reports whether typ is a response event lightEvent reads.
func responseEvent(typ string) bool {
	switch typ {
	case "response.created", "response.in_progress", "response.queued", "response.completed", "response.incomplete":
		return true
	}
	return false
}

// lightEvent returns the data of a response event decoded as the tree
// path decodes it, but for the members of its response object other than
// output, which it leaves out; ok is false for any other event, for data
// it is unsure of (escaped member names included), and for the snapshot
// whose whole response the plain-text watch keeps (plainEvent).
func (a *assembler) lightEvent(data, evType []byte) (obj map[string]any, ok bool) {
	if a.noFast || len(evType) > 0 && !responseEvent(string(evType)) {
		return nil, false
	}
	root, ok := rawjson.CheckStrict(data)
	if !ok {
		return nil, false
	}
	obj = make(map[string]any, 3)
	_, ok = rawjson.ObjectEach(data, root.Start, func(key []byte, at int) (int, bool) {
		end := rawjson.ValueEnd(data, at)
		v, ok := lightMember(data, string(key), rawjson.Span{Start: at, End: end})
		obj[string(key)] = v
		return end, ok
	})
	typ, _ := obj["type"].(string)
	if !ok || !responseEvent(typ) || a.keepsSnapshot(typ) {
		return nil, false
	}
	return obj, true
}

// lightMember decodes the top-level member key of a response event, whose
// value is at v: its response object reduced to its output.
func lightMember(data []byte, key string, v rawjson.Span) (any, bool) {
	if key != "response" || v.Kind(data) != '{' {
		val, err := jsonvalue.DecodeStrictNested(data[v.Start:v.End], 1)
		return val, err == nil
	}
	resp := map[string]any{}
	_, ok := rawjson.ObjectEach(data, v.Start, func(key []byte, at int) (int, bool) {
		end := rawjson.ValueEnd(data, at)
		if string(key) == "output" {
			out, err := jsonvalue.DecodeStrictNested(data[at:end], 2)
			if err != nil {
				return 0, false
			}
			resp["output"] = out
		}
		return end, true
	})
	return resp, ok
}

// keepsSnapshot reports whether the plain-text watch reads the whole
// response of the event typ: the first snapshot's (plainEvent).
func (a *assembler) keepsSnapshot(typ string) bool {
	switch typ {
	case "response.completed", "response.incomplete":
		return false
	}
	return a.watch && a.plain.plain && a.plain.snapshot == nil
}
