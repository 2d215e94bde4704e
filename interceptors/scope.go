package interceptors

import (
	"context"
	"fmt"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// Values of the scope option of the content-scanning types (regex, redact,
// egress).
const (
	// scopeRequest judges, at pre_model_call, the request members beside
	// the target too: the tool declarations and model.params. The default.
	scopeRequest = "request"
	// scopeTarget judges the target alone.
	scopeTarget = "target"
)

// Context members judged beside the target. They are the gateway's own
// member names, so messages may name them.
const (
	memberTools  = "tools"
	memberParams = "model.params"
)

// scanScope says what a content-scanning type judges besides the target.
// Only pre_model_call is widened: every other point's context is judged
// through its target alone, as the conformance vectors expect.
type scanScope struct {
	request bool
}

// scopeOf reads the scope option; "" means request.
func scopeOf(spec config.Interceptor, s string) (scanScope, []config.Problem) {
	switch s {
	case "", scopeRequest:
		return scanScope{request: true}, nil
	case scopeTarget:
		return scanScope{}, nil
	}
	return scanScope{}, []config.Problem{spec.Problemf("scope", "must be request or target (got %q)", s)}
}

// firstOutside runs found over each context member judged beside c's
// target, in a fixed order, and returns the name of the first in which it
// found something. It only reads c.
func (s scanScope) firstOutside(c enforcement.Context, found func(v any) bool) (string, bool) {
	if !s.request || c.Point() != enforcement.PreModelCall {
		return "", false
	}
	if v, ok := c["tools"]; ok && found(v) {
		return memberTools, true
	}
	if model, ok := c["model"].(map[string]any); ok {
		if v, ok := model["params"]; ok && found(v) {
			return memberParams, true
		}
	}
	return "", false
}

// reasonUnredactable is a redactor's deny of what it cannot redact (a
// match outside the target, or a rewrite that would merge two members),
// unless its configuration names a reason: the transform's default,
// policy:redacted, would read as if something had been redacted.
const reasonUnredactable = "policy:unredactable"

// outsideMessage explains a deny for a match a transform cannot reach: a
// transform addresses $target only (spec §5.2). It names the member, never
// what matched.
func outsideMessage(policy, member, action string) string {
	return fmt.Sprintf("content that policy %s would %s lies in %s, outside the rewritable target, so it is denied", policy, action, member)
}

// mergeMessage explains a deny for a rewrite that would make two members
// of one object equal: a transform must not silently drop one of them.
func mergeMessage(policy string) string {
	return "rewriting object keys under policy " + policy + " would merge two members of one object, so it denies instead"
}

// anyText reports whether match holds for a string value or an object key
// anywhere in v (a key can carry a secret as well as a value can), or for
// the join of the parts of an array that readers join (see joinedPart).
func anyText(v any, match func(string) bool) bool { return anyTextIn(v, match, cleanMemo{}) }

// anyTextIn is anyText skipping the objects m knows hold no match, and
// telling m of those it finds hold none.
func anyTextIn(v any, match func(string) bool, m cleanMemo) bool {
	switch x := v.(type) {
	case string:
		return match(x)
	case map[string]any:
		node, clean := m.known(x)
		if clean {
			return false
		}
		for k, e := range x {
			if match(k) || anyTextIn(e, match, m) {
				return true
			}
		}
		if node {
			m.remember(x)
		}
	case []any:
		for _, e := range x {
			if anyTextIn(e, match, m) {
				return true
			}
		}
		return anyJoin(x, match)
	}
	return false
}

// cleanMemo remembers, across a managed session's requests, the objects a
// walk of one interceptor found nothing in (enforcement.ObjectMemo: the
// conversation's earlier messages, which the next request shares). What a
// walk finds in an object is a function of the object and the
// interceptor alone: joins never cross an object's bounds (see
// joinedPart), and the parts of a join are walked apart from this. Only
// "nothing" is remembered, so what the walk makes of an object with a
// match is made again each time. The zero value remembers nothing.
type cleanMemo struct {
	memo  enforcement.ObjectMemo
	judge any
}

// Walks an interceptor remembers apart: a match walk and a rewrite walk
// of one interceptor need not agree on what they find.
const (
	walkMatch = iota
	walkRewrite
)

// walkJudge names one walk of one interceptor in a memo.
type walkJudge struct {
	interceptor any
	walk        int
}

// cleanMemoFor is the memo of the emission that called interceptor with
// ctx, for walk.
func cleanMemoFor(ctx context.Context, interceptor any, walk int) cleanMemo {
	m := enforcement.ObjectMemoFrom(ctx)
	if m == nil {
		return cleanMemo{}
	}
	return cleanMemo{memo: m, judge: walkJudge{interceptor, walk}}
}

// known reports whether the memo keeps obj (node) and, if so, whether the
// walk found nothing in it before (clean).
func (m cleanMemo) known(obj map[string]any) (node, clean bool) {
	if m.memo == nil || !m.memo.Keeps(obj) {
		return false, false
	}
	v, ok := m.memo.Verdict(m.judge, obj)
	return true, ok && v == true
}

// remember tells the memo the walk found nothing in obj.
func (m cleanMemo) remember(obj map[string]any) { m.memo.RememberVerdict(m.judge, obj, true) }

// textRewriter applies the edits find finds to every string value and
// object key of a value tree, and to the joins of the parts readers join
// (see joinedPart), without modifying it. When anything changed, the
// result is the rewriter's own: every container on the way to a change is
// new, and the unchanged ones are deep-copied once (strings and numbers
// are immutable and shared), so it can go into a verdict as it is. What
// nothing modifies is shared instead of copied: all of the input's
// unchanged parts when the host froze its contexts, else the objects a
// session's memo keeps (see unchanged). When nothing changed, the input
// is returned. Numbers, booleans and nulls stay as they are.
type textRewriter struct {
	// find appends to dst the edits of s, in the order one search finds
	// them, at byte offsets of s.
	find func(dst []edit, s string) []edit
	// counts, when not nil, counts the edits applied per detector (redact).
	counts tally
	// merged is set when renaming keys made two members of one object
	// equal; the result is then unusable.
	merged bool
	// buf is find's scratch, reused from string to string.
	buf []edit
	// memo skips objects the session's earlier requests shared and the
	// same walk found nothing in.
	memo cleanMemo
	// frozen: the host never modifies the input (see
	// enforcement.ContextsFrozen), so the result may share what the
	// rewrite left unchanged of it.
	frozen bool
}

// renamedKey is one object key a rewrite changed.
type renamedKey struct{ from, to string }

// settle settles es (see settle) and counts the edits that remain.
func (w *textRewriter) settle(es []edit) []edit {
	es = settle(es)
	if w.counts != nil {
		for _, e := range es {
			w.counts[e.det]++
		}
	}
	return es
}

// unchanged is what the result holds for e, which the rewrite left as it
// was: e itself when nothing modifies it (a frozen input; with a
// session's memo, an object the memo keeps), which the emission shares
// into the transform's value rather than copying; otherwise a deep copy.
func (w *textRewriter) unchanged(e any) any {
	if w.frozen {
		return e
	}
	if obj, ok := e.(map[string]any); ok && w.memo.memo != nil && w.memo.memo.Keeps(obj) {
		return e
	}
	return jsonvalue.DeepCopy(e)
}

// text rewrites one string and reports whether it changed. A string
// without edits costs no allocation.
func (w *textRewriter) text(s string) (string, bool) {
	es := w.find(w.buf[:0], s)
	w.buf = es[:0]
	if len(es) == 0 {
		return s, false
	}
	out := applyEdits(s, w.settle(es))
	return out, out != s
}

// tree rewrites v and reports whether anything changed.
func (w *textRewriter) tree(v any) (any, bool) {
	switch x := v.(type) {
	// Unchanged, v itself comes back: boxing a string or a slice again
	// would allocate for every one of the tree.
	case string:
		if nx, changed := w.text(x); changed {
			return nx, true
		}
	case map[string]any:
		node, clean := w.memo.known(x)
		if clean {
			return v, false
		}
		if nx, changed := w.object(x, "", runText{}); changed {
			return nx, true
		}
		if node {
			w.memo.remember(x)
		}
	case []any:
		if nx, changed := w.array(x); changed {
			return nx, true
		}
	}
	return v, false
}

// array rewrites the elements of x. The parts of a kind readers join,
// when there are two or more, are judged together (see runs), and their
// text members take what the run made of them.
func (w *textRewriter) array(x []any) ([]any, bool) {
	c, multi := countJoins(x)
	var joinedTexts []runText
	if multi {
		joinedTexts = w.runs(x, c)
	}
	var out []any
	for i, e := range x {
		var ne any
		var changed bool
		if k, member, s := joinedPart(e); multi && k >= 0 && c.parts[k] > 1 && s != "" {
			var rt runText
			if joinedTexts != nil {
				rt = joinedTexts[i]
			}
			ne, changed = w.object(e.(map[string]any), member, rt)
		} else {
			ne, changed = w.tree(e)
		}
		if changed {
			if out == nil {
				out = make([]any, len(x))
			}
			out[i] = ne
		}
	}
	if out == nil {
		return x, false
	}
	// A changed element is never nil: the slots still nil are the
	// unchanged ones.
	for i, e := range x {
		if out[i] == nil {
			out[i] = w.unchanged(e)
		}
	}
	return out, true
}

// object rewrites the members and keys of x. When judged is not empty it
// names the member a run already judged (see array): that member takes
// rt's text when rt changed and is otherwise left as it is.
func (w *textRewriter) object(x map[string]any, judged string, rt runText) (map[string]any, bool) {
	var out map[string]any
	var renames []renamedKey
	for k, e := range x {
		var ne any
		var changed bool
		switch {
		case judged == "" || k != judged:
			ne, changed = w.tree(e)
		case rt.changed:
			ne, changed = rt.text, true
		}
		if changed {
			if out == nil {
				out = make(map[string]any, len(x))
			}
			out[k] = ne
		}
		if nk, changed := w.text(k); changed && nk != k {
			renames = append(renames, renamedKey{from: k, to: nk})
		}
	}
	if out == nil && renames == nil {
		return x, false
	}
	if out == nil {
		out = make(map[string]any, len(x))
	}
	for k, e := range x {
		if _, done := out[k]; !done {
			out[k] = w.unchanged(e)
		}
	}
	w.rename(out, renames)
	return out, true
}

// rename moves the renamed members of obj to their new keys. A new key
// equal to a key that stays, or to another new key, merges two members.
func (w *textRewriter) rename(obj map[string]any, renames []renamedKey) {
	if len(renames) == 0 {
		return
	}
	vals := make([]any, len(renames))
	for i, r := range renames {
		vals[i] = obj[r.from]
		delete(obj, r.from)
	}
	for i, r := range renames {
		if _, taken := obj[r.to]; taken {
			w.merged = true
		}
		obj[r.to] = vals[i]
	}
}
