package jcs

// Canonical holds a value's canonical bytes, made under the identity
// path's checks, for a value that appears more than once in what is
// hashed (a context's target and the member it mirrors): the bytes are
// made once and written wherever a *Canonical stands for the value.
// The zero value is empty; Release returns its buffer to the pool.
type Canonical struct {
	e     *encoder // its buf holds bytes; its shares, where memo bytes are
	bytes []byte
}

// Encode makes the canonical bytes of v as SHA256Identity under maxDepth
// would write them for v at nesting level depth (the root is 1; maxDepth
// <= 0 selects DefaultMaxDepth). The result may stand for v at level
// depth or any shallower one: a depth bound that holds deeper holds
// higher up, and no other check depends on where v sits. On error the
// caller should hash without it, so that the error it reports is the one
// the whole walk finds first.
func (c *Canonical) Encode(v any, depth, maxDepth int) error {
	return c.encode(v, depth, maxDepth, nil)
}

// encode is Encode consulting memo (nil: none).
func (c *Canonical) encode(v any, depth, maxDepth int, memo Memo) error {
	if c.e == nil {
		c.e = getEncoder(0, true)
	}
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	e := c.e
	e.buf = e.buf[:0]
	e.maxDepth = maxDepth
	e.checkInts = true
	e.sink = nil
	e.memo = memo
	c.bytes = nil
	clear(e.shares)
	e.shares = e.shares[:0]
	e.recordShares = memo != nil
	if err := e.encode(v, depth); err != nil {
		return err
	}
	c.bytes = e.buf
	return nil
}

// Release drops the bytes and returns the buffer to the pool.
func (c *Canonical) Release() {
	if c.e != nil {
		putEncoder(c.e)
	}
	*c = Canonical{}
}

// writeCanonical writes pre-made canonical bytes: straight into the
// sink after what is buffered when there is one, so a large value is
// not copied into the buffer.
func (e *encoder) writeCanonical(b []byte) {
	if e.sink != nil && len(b) >= flushSize {
		e.flush()
		if e.trail != nil {
			e.piece(b, false)
		} else {
			e.sink.Write(b)
		}
		return
	}
	e.buf = append(e.buf, b...)
	e.maybeFlush()
}
