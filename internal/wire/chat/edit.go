package chat

import "github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"

// memberOp is what a release does with one member of an object it edits
// in place: keep it (the zero value), drop it, or replace its value.
type memberOp struct {
	drop bool
	val  []byte // the new raw value; nil keeps the member's own
}

// appendEdited appends to dst the object at obj of b, whose members are
// ms, with ops (indexed like ms) applied and insert (complete members,
// comma-separated) put first. A dropped member goes with its separator;
// every byte not edited is copied as it is, whitespace included. It is
// the release paths' byte-offset edit: the object is never re-rendered.
func appendEdited(dst, b []byte, obj rawjson.Span, ms []rawjson.Member, ops []memberOp, insert []byte) []byte {
	if len(ms) == 0 {
		dst = append(dst, '{')
		dst = append(dst, insert...)
		return append(dst, '}')
	}
	dst = append(dst, b[obj.Start:ms[0].KeyAt]...)
	kept := -1
	for i, m := range ms {
		op := ops[i]
		if op.drop {
			continue
		}
		switch {
		case kept >= 0:
			dst = append(dst, b[ms[kept].Val.End:ms[kept+1].KeyAt]...) // the separator after the last kept member
		case len(insert) > 0:
			dst = append(dst, insert...)
			dst = append(dst, ',')
		}
		if op.val != nil {
			dst = append(dst, b[m.KeyAt:m.Val.Start]...)
			dst = append(dst, op.val...)
		} else {
			dst = append(dst, b[m.KeyAt:m.Val.End]...)
		}
		kept = i
	}
	if kept < 0 {
		dst = append(dst, insert...)
	}
	return append(dst, b[ms[len(ms)-1].Val.End:obj.End]...)
}

// offsetIn returns the offset in b of sub, a slice of b's array at or
// after b's start (a key ObjectEach passes its callback).
func offsetIn(b, sub []byte) int { return cap(b) - cap(sub) }
