package jcs

import (
	"bytes"
	"encoding"
	"math"
	"unsafe"
)

// Trail is what one identity walk leaves for the next walk of the same
// kind: the pieces its canonical bytes were hashed in, and SHA-256 states
// at some of their boundaries. A later walk whose bytes begin with the
// same pieces resumes the hash after them instead of hashing them again.
//
// A piece is either literal (the walk's own bytes: punctuation, keys,
// values no memo holds), which matches only bytes equal to it, or shared:
// canonical bytes a Memo handed out, which matches only those very bytes
// (the same memory at the same length), since a memo never modifies what
// it hands out. Equal pieces in equal order are equal bytes, so a resumed
// hash is the hash of the whole walk: the trail changes how much is
// hashed, never what. A session's next turn, which sends its history
// again, then hashes what follows the history's last shared piece.
//
// A Trail serves one walk at a time; its zero value is empty.
type Trail struct {
	pieces []piece
	lit    []byte       // literal pieces' bytes, in order
	states []trailState // at increasing piece counts
	saved  []byte       // the states' marshaled digests, in order
	hashed int          // bytes the last walk hashed
}

// piece is one piece of a walk's bytes, in 16 bytes: a trail holds one
// per message of a conversation and more.
type piece struct {
	shared *byte  // the first of a memo's bytes; nil for a literal piece
	n      uint32 // a shared piece's length
	litEnd uint32 // where this piece's literal bytes end in lit
}

// trailState is the digest after the first pieces pieces.
type trailState struct {
	pieces   int
	savedEnd int // end of its marshaled digest in saved
}

// stateEvery is how many bytes a walk hashes between saved states: a
// resumed walk hashes at most this much again before the first piece
// that differs. A state takes 124 bytes.
const stateEvery = 4 << 10

// maxTrailBytes bounds what a trail records: piece lengths and offsets
// are 32-bit. A walk beyond it hashes on without recording.
const maxTrailBytes = math.MaxUint32

// pieceSize and stateSize are a piece's and a state's memory, for Size.
const (
	pieceSize = 16
	stateSize = 16
)

// SHA256IdentityTrailInto is SHA256IdentityMemoInto resuming the hash
// from t (nil: none) and leaving t for the next walk (emptied when this
// one fails). The trail pays off with a memo: its shared pieces are what
// lets a walk match a long history by address rather than by content.
func SHA256IdentityTrailInto(dst *[SHA256IdentitySize]byte, v any, maxDepth int, memo Memo, t *Trail) error {
	e := getEncoder(0, true)
	defer putEncoder(e)
	e.memo = memo
	return e.identityTrailInto(dst, v, maxDepth, t)
}

// Size estimates the memory t holds of its own; shared pieces' bytes are
// their memo's.
func (t *Trail) Size() int {
	return cap(t.pieces)*pieceSize + cap(t.lit) + cap(t.states)*stateSize + cap(t.saved)
}

// Hashed is the number of bytes the last walk with t hashed: all of its
// canonical bytes when it resumed nothing.
func (t *Trail) Hashed() int { return t.hashed }

// reset empties t (every state follows at least one piece).
func (t *Trail) reset() { t.truncate(0) }

// litStart is where piece i's literal bytes start in lit.
func (t *Trail) litStart(i int) int {
	if i == 0 {
		return 0
	}
	return int(t.pieces[i-1].litEnd)
}

// bytesOf is piece i's bytes.
func (t *Trail) bytesOf(i int) []byte {
	if p := t.pieces[i]; p.shared != nil {
		return unsafe.Slice(p.shared, p.n)
	}
	return t.lit[t.litStart(i):t.pieces[i].litEnd]
}

// matches reports whether piece i is b, shared or not.
func (t *Trail) matches(i int, b []byte, shared bool) bool {
	p := t.pieces[i]
	if shared {
		return p.shared == &b[0] && int(p.n) == len(b)
	}
	return p.shared == nil && bytes.Equal(t.lit[t.litStart(i):p.litEnd], b)
}

// push appends b as a piece; literal bytes are copied. It reports false,
// recording nothing, when b would take the trail beyond maxTrailBytes.
func (t *Trail) push(b []byte, shared bool) bool {
	if shared {
		if uint64(len(b)) > maxTrailBytes {
			return false
		}
		t.pieces = append(t.pieces, piece{shared: &b[0], n: uint32(len(b)), litEnd: uint32(len(t.lit))})
		return true
	}
	if uint64(len(t.lit))+uint64(len(b)) > maxTrailBytes {
		return false
	}
	t.lit = append(t.lit, b...)
	t.pieces = append(t.pieces, piece{litEnd: uint32(len(t.lit))})
	return true
}

// truncate keeps the first n pieces and the states within them.
func (t *Trail) truncate(n int) {
	t.lit = t.lit[:t.litStart(n)]
	clear(t.pieces[n:]) // do not pin memo bytes no longer used
	t.pieces = t.pieces[:n]
	k := len(t.states)
	for k > 0 && t.states[k-1].pieces > n {
		k--
	}
	t.states = t.states[:k]
	t.saved = t.saved[:t.savedStart(k)]
}

// savedStart is where state k's marshaled digest starts in saved.
func (t *Trail) savedStart(k int) int {
	if k == 0 {
		return 0
	}
	return t.states[k-1].savedEnd
}

// startTrail has e's identity walk (sink e.hash, just reset) resume from
// t. A hash that cannot save and restore its state walks without one.
func (e *encoder) startTrail(t *Trail) {
	e.trail = nil
	if t == nil {
		return
	}
	if _, ok := e.hash.(encoding.BinaryAppender); !ok {
		return
	}
	if _, ok := e.hash.(encoding.BinaryUnmarshaler); !ok {
		return
	}
	e.trail, e.matched, e.matching, e.recording, e.since = t, 0, len(t.pieces) > 0, true, 0
	t.hashed = 0
}

// piece hands b to the hash as one piece of the walk: skipped while the
// walk still follows its trail, hashed and recorded once it left it.
func (e *encoder) piece(b []byte, shared bool) {
	if len(b) == 0 {
		return
	}
	t := e.trail
	if e.matching {
		if e.matched < len(t.pieces) && t.matches(e.matched, b, shared) {
			e.matched++
			return
		}
		e.leaveTrail()
	}
	e.hash.Write(b)
	t.hashed += len(b)
	if e.recording {
		e.recording = t.push(b, shared)
	}
	e.since += len(b)
	if e.recording && e.since >= stateEvery {
		e.saveState()
	}
}

// leaveTrail brings the hash to the end of the pieces matched so far,
// from the last state saved within them, and drops the rest of the trail.
func (e *encoder) leaveTrail() {
	e.matching = false
	t := e.trail
	t.truncate(e.matched)
	e.hash.Reset()
	from := 0
	if k := len(t.states); k > 0 {
		st := t.states[k-1]
		if err := e.hash.(encoding.BinaryUnmarshaler).UnmarshalBinary(t.saved[t.savedStart(k-1):st.savedEnd]); err == nil {
			from = st.pieces
		} else {
			e.hash.Reset()
			t.states, t.saved = t.states[:0], t.saved[:0]
		}
	}
	e.since = 0
	for i := from; i < e.matched; i++ {
		b := t.bytesOf(i)
		e.hash.Write(b)
		t.hashed += len(b)
		e.since += len(b)
	}
}

// saveState records the digest after the pieces hashed so far.
func (e *encoder) saveState() {
	t := e.trail
	saved, err := e.hash.(encoding.BinaryAppender).AppendBinary(t.saved)
	if err != nil {
		return
	}
	t.saved = saved
	t.states = append(t.states, trailState{pieces: len(t.pieces), savedEnd: len(t.saved)})
	e.since = 0
}

// endTrail finishes a walk that succeeded: a walk that matched its whole
// way catches its hash up, and the final state is kept, so an identical
// walk next costs no hashing at all.
func (e *encoder) endTrail() {
	if e.matching {
		e.leaveTrail()
	}
	if e.recording && e.since > 0 {
		e.saveState()
	}
	e.trail = nil
}

// share is memo bytes b, copied into a Canonical's bytes at at.
type share struct {
	at int
	b  []byte
}

// writeShared writes a memo's canonical bytes: as a shared piece on a
// walk with a trail, recorded as shared within a Canonical being made.
func (e *encoder) writeShared(b []byte) {
	switch {
	case e.trail != nil:
		e.flush()
		e.piece(b, true)
	case e.recordShares:
		e.shares = append(e.shares, share{at: len(e.buf), b: b})
		e.buf = append(e.buf, b...)
	default:
		e.writeCanonical(b)
	}
}

// writeCanonicalOf writes a Canonical's bytes: on a walk with a trail,
// the memo bytes it was made of as shared pieces between literal ones.
func (e *encoder) writeCanonicalOf(c *Canonical) {
	if e.trail == nil || len(c.e.shares) == 0 {
		e.writeCanonical(c.bytes)
		return
	}
	e.flush()
	last := 0
	for _, s := range c.e.shares {
		e.piece(c.bytes[last:s.at], false)
		e.piece(s.b, true)
		last = s.at + len(s.b)
	}
	e.piece(c.bytes[last:], false)
}
