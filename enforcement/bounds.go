package enforcement

import "github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"

// checkBounds runs the §12.3 size and depth check (and Check's value-domain
// walk) over c. A target that is the very container it mirrors (§4.3: a
// deep reference, as Builder makes it) is measured once, where it lives:
// it costs no memory of its own, Clone keeps it shared, and counting it
// twice would refuse a response or a message list at half the configured
// bound. A target that is a separate value is measured as well.
//
// memo (nil: none) supplies the measures of objects an earlier emission
// of the session walked (see jsonvalue.SizeMemo).
func checkBounds(c Context, lim jsonvalue.Limits, memo ObjectMemo) error {
	var m jsonvalue.SizeMemo
	if memo != nil {
		m = memo
	}
	alias, ok := targetAlias(c, c.Point())
	if !ok || !sameValue(alias, c["target"]) {
		return jsonvalue.CheckMemo(map[string]any(c), lim, m)
	}
	return jsonvalue.CheckWithoutMemo(map[string]any(c), "target", lim, m)
}
