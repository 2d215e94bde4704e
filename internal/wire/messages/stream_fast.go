package messages

import (
	"bytes"

	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// The fast path applies the event nearly every stream is made of, a
// content_block_delta carrying text, thinking, partial_json or a
// signature, without decoding a value tree: it scans the raw data with
// the strict token checks, and only when the event has exactly that
// shape (every member known, present once, escape-free names, the
// delta's two members) does it apply it, through the checks the tree path
// applies after decoding. Any other event, or one it is unsure of, goes
// to the tree path untouched: scanning changes no state.

// fastDelta applies ev when it is a fast content_block_delta and reports
// whether it did (err is then the event's outcome).
func (a *assembler) fastDelta(ev sseEvent) (bool, error) {
	if ev.name != "content_block_delta" || a.msg == nil {
		return false, nil
	}
	d, ok := scanDelta(ev.data)
	if !ok {
		return false, nil
	}
	spec, ok := deltaTypes[string(d.typ)]
	if !ok || string(d.typ) == "citations_delta" || string(d.member) != spec.member {
		return false, nil
	}
	// What handle does for a known, collision-free event, then delta.
	a.known = !ev.multiLine
	if !a.known {
		a.replayable = false
	}
	a.record(ev, "content_block_delta", string(d.typ) == "signature_delta")
	a.cur = ev.data
	b, err := a.openBlockAt(d.index, true)
	if err != nil {
		return true, err
	}
	if !spec.fits(b) {
		return true, a.fail("a delta that does not fit its block")
	}
	text := ev.data[d.text.Start+1 : d.text.End-1]
	if d.escaped {
		a.scratch = rawjson.AppendUnescaped(a.scratch[:0], ev.data[d.text.Start:d.text.End])
		text = a.scratch
	}
	return true, a.textDelta(b, string(d.typ), text)
}

// fastDeltaEvent is a scanned content_block_delta. typ and member point
// into the event data (nil: not seen), so a scan allocates nothing.
type fastDeltaEvent struct {
	index   int
	typ     []byte // the delta's type
	member  []byte // the delta's other member
	text    rawjson.Span
	escaped bool
}

// scanDelta scans {"type":"content_block_delta","index":N,"delta":{"type":
// T,M:"…"}} in any member order; ok is false for anything else.
func scanDelta(b []byte) (fastDeltaEvent, bool) {
	var d fastDeltaEvent
	var seen uint8
	i := rawjson.SkipSpace(b, 0)
	end, ok := rawjson.ObjectEach(b, i, func(key []byte, at int) (int, bool) {
		switch string(key) {
		case "type":
			end, _, ok := rawjson.StrictString(b, at)
			return end, ok && once(&seen, 1) && string(b[at:end]) == `"content_block_delta"`
		case "index":
			end, ok := rawjson.StrictNumber(b, at)
			if !ok || !once(&seen, 2) {
				return 0, false
			}
			d.index, ok = smallCount(b[at:end])
			return end, ok
		case "delta":
			if !once(&seen, 4) {
				return 0, false
			}
			return d.delta(b, at)
		}
		return 0, false
	})
	return d, ok && seen == 7 && rawjson.SkipSpace(b, end) == len(b)
}

// delta scans the delta object: its type and one string member.
func (d *fastDeltaEvent) delta(b []byte, i int) (int, bool) {
	n := 0
	return rawjson.ObjectEach(b, i, func(key []byte, at int) (int, bool) {
		if at >= len(b) || b[at] != '"' {
			return 0, false
		}
		end, escaped, ok := rawjson.StrictString(b, at)
		if !ok {
			return 0, false
		}
		n++
		switch {
		case n > 2:
			return 0, false
		case string(key) == "type":
			if escaped || d.typ != nil {
				return 0, false
			}
			d.typ = b[at+1 : end-1]
		default:
			if d.member != nil {
				return 0, false
			}
			d.member = key
			d.text, d.escaped = rawjson.Span{Start: at, End: end}, escaped
		}
		return end, true
	}) // n == 2 is checked by the caller: typ and member both set
}

// once marks bit in seen and reports whether it was clear.
func once(seen *uint8, bit uint8) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// smallCount reads a block index of digits only, without leading zeros,
// up to 9 digits (what count and index accept, and more than any stream
// holds); anything else takes the tree path.
func smallCount(tok []byte) (int, bool) {
	if len(tok) == 0 || len(tok) > 9 || len(tok) > 1 && tok[0] == '0' || bytes.ContainsAny(tok, "-.eE+") {
		return 0, false
	}
	n := 0
	for _, c := range tok {
		n = n*10 + int(c-'0')
	}
	return n, true
}
