package jsonvalue

// SizeMemo remembers, for objects shared between walks (a conversation's
// earlier messages, which a session's next request hands out again), the
// compact size and height Check measured: an object walked without error
// before is valid and has the same size and height now, so the walk adds
// its size and skips it when it fits the limits, and walks it when it
// does not, to name the error as before. enforcement.ObjectMemo and
// internal/sessioncache implement it.
type SizeMemo interface {
	// Keeps reports whether the memo remembers things about obj.
	Keeps(obj map[string]any) bool
	// Verdict returns what judge found in obj.
	Verdict(judge any, obj map[string]any) (any, bool)
	// RememberVerdict stores what judge found in obj.
	RememberVerdict(judge any, obj map[string]any, v any)
}

// measureJudge names Check's measures in a SizeMemo.
type measureJudge struct{}

// measure is an object's compact JSON size and how many levels below it
// the deepest of its values sits.
type measure struct{ size, height int }

// memoObject walks obj, which memo keeps, at depth: from its measure
// when one fits, else in full, remembering its measure.
func (c *checker) memoObject(obj map[string]any, depth int) error {
	if v, ok := c.memo.Verdict(measureJudge{}, obj); ok {
		m := v.(measure)
		if depth+m.height <= c.maxDepth && (c.maxBytes <= 0 || c.size+m.size <= c.maxBytes) {
			c.size += m.size
			c.deepest = max(c.deepest, depth+m.height)
			return nil
		}
	}
	start, outer := c.size, c.deepest
	c.deepest = depth
	err := c.object(obj, depth, "", false)
	if err == nil {
		c.memo.RememberVerdict(measureJudge{}, obj, measure{size: c.size - start, height: c.deepest - depth})
	}
	c.deepest = max(outer, c.deepest)
	return err
}
