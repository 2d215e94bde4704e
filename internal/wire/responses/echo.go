package responses

import (
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// Events repeat parts of their item (the added item, added and done
// parts, annotations, the call name). The verdict covers the done item
// only, so the upstream's events are replayed only when every repeated
// value equals the done item's, or, for added items and parts, is its
// empty form; otherwise the stream is synthesized from the verdict.

// indexMembers are the event members that must be indices.
var indexMembers = []string{"output_index", "content_index", "summary_index", "annotation_index", "partial_image_index"}

// echo is one value an event repeated from its item.
type echo struct {
	path  []any // member names and indices into the done item
	value any
	added bool // the value may be the empty form of the done value
}

// echo records a repeated value.
func (it *streamItem) echo(path []any, v any, added bool) {
	it.echoes = append(it.echoes, echo{path: path, value: v, added: added})
}

// partPath is where a part event's part lives in its item.
func partPath(typ string, ci, si int) []any {
	if typ == "response.reasoning_summary_part.added" || typ == "response.reasoning_summary_part.done" {
		return []any{"summary", si}
	}
	return []any{"content", ci}
}

// echoesAgree reports whether every repeated value agrees with the done
// item.
func (it *streamItem) echoesAgree() bool {
	for _, e := range it.echoes {
		d, ok := lookup(it.done, e.path)
		if !ok || !agrees(e.value, d, e.added) {
			return false
		}
	}
	return true
}

// lookup follows path into v.
func lookup(v any, path []any) (any, bool) {
	for _, step := range path {
		switch k := step.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[k]; !ok {
				return nil, false
			}
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil, false
			}
			v = l[k]
		}
	}
	return v, true
}

// agrees reports whether v equals done, or, when added, is an object
// whose every member equals done's, is empty, or is a status.
func agrees(v, done any, added bool) bool {
	if jsonvalue.Equal(v, done) {
		return true
	}
	vm, ok1 := v.(map[string]any)
	dm, ok2 := done.(map[string]any)
	if !added || !ok1 || !ok2 {
		return false
	}
	for k, x := range vm {
		if !jsonvalue.Equal(x, dm[k]) && !isEmpty(x) && !(k == "status" && matches(wire.IsEnum, x)) {
			return false
		}
	}
	return true
}

// isEmpty reports whether v is null, "", [] or {}.
func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}
