package jcs

// Memo supplies the canonical bytes of objects an earlier walk made, so a
// value shared between walks (a message a session's next request sends
// again) is written rather than walked again. It is consulted by the
// identity path alone (integer-domain check on) and keyed by the object
// itself and the level it sits at under the depth bound: bytes made
// under the same checks at the same level and bound are exactly what the
// walk would write, and a walk that would fail never made any.
type Memo interface {
	// Canonical returns the bytes remembered for m at level depth under
	// maxDepth, or false.
	Canonical(m map[string]any, depth, maxDepth int) ([]byte, bool)
	// Keeps reports whether the memo would remember m's bytes: only then
	// are they made apart from the walk.
	Keeps(m map[string]any) bool
	// Remember stores m's bytes at level depth under maxDepth. The memo
	// owns b.
	Remember(m map[string]any, depth, maxDepth int, b []byte)
}

// SHA256IdentityMemoInto is SHA256IdentityInto consulting memo for the
// objects of v it knows (nil: none).
func SHA256IdentityMemoInto(dst *[SHA256IdentitySize]byte, v any, maxDepth int, memo Memo) error {
	e := getEncoder(0, true)
	defer putEncoder(e)
	e.memo = memo
	return e.identityInto(dst, v, maxDepth)
}

// EncodeMemo is Encode consulting memo for the objects of v it knows.
func (c *Canonical) EncodeMemo(v any, depth, maxDepth int, memo Memo) error {
	return c.encode(v, depth, maxDepth, memo)
}

// memoObject writes m from the memo, or makes its bytes apart and has the
// memo remember them, when the memo knows m; handled is false otherwise.
func (e *encoder) memoObject(m map[string]any, depth int) (handled bool, err *Error) {
	if b, ok := e.memo.Canonical(m, depth, e.maxDepth); ok {
		e.writeShared(b)
		return true, nil
	}
	if !e.memo.Keeps(m) {
		return false, nil
	}
	sub := getEncoder(e.maxDepth, true)
	defer putEncoder(sub)
	sub.memo = e.memo
	if err := sub.plainObject(m, depth); err != nil {
		return true, err
	}
	b := append([]byte(nil), sub.buf...)
	e.memo.Remember(m, depth, e.maxDepth, b)
	e.writeShared(b) // never modified: shared, whether kept or not
	return true, nil
}
