package messages

import (
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/hooks-gateway/hooks-gateway/internal/seal"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// An answer's metadata (usage, stop_details, container,
// context_management, diagnostics) is released member by member: each
// value is a count, a documented enumeration, a timestamp the gateway
// re-renders, an upstream id the gateway seals, or text projected where
// a policy sees it (a member part named by its path). A value that is
// none of these is removed; a member the gateway does not know is judged
// (projected) or, under StrictMembers, removed. A shape check lets
// nothing through: a credential is token-shaped.

// metaKind is how one metadata value is released.
type metaKind uint8

const (
	metaObject    metaKind = iota // its members as listed; others judged or removed
	metaCount                     // a non-negative integer, else removed
	metaEnum                      // one of the documented values, else removed
	metaTime                      // an RFC 3339 timestamp, re-rendered, else removed
	metaSealed                    // an upstream id the client may send back: sealed
	metaProjected                 // text or ids the client only reads: a member part
	metaList                      // an array of elem (all removed if one is not an object)
)

// metaNode describes one metadata value.
type metaNode struct {
	kind    metaKind
	members map[string]*metaNode
	known   rawjson.MemberSet
	enum    []string
	elem    *metaNode
	seal    seal.Kind
}

func metaObj(members map[string]*metaNode) *metaNode {
	known := make(rawjson.MemberSet, len(members))
	for k := range members {
		known[k] = struct{}{}
	}
	return &metaNode{kind: metaObject, members: members, known: known}
}

func metaEnumOf(values ...string) *metaNode { return &metaNode{kind: metaEnum, enum: values} }

var (
	metaCountNode     = &metaNode{kind: metaCount}
	metaProjectedNode = &metaNode{kind: metaProjected}
)

// usageCounts are the usage members that must be non-negative integers:
// the normalized usage is made of them, so an answer without a valid one
// is refused.
var usageCounts = []string{"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}

// metaSchema is every metadata member of a Message (anthropic-sdk-go
// v2.17.0 Message and BetaMessage; usage.inference_geo's values from the
// data residency documentation).
var metaSchema = map[string]*metaNode{
	"usage": metaObj(map[string]*metaNode{
		"input_tokens":                metaCountNode,
		"output_tokens":               metaCountNode,
		"cache_creation_input_tokens": metaCountNode,
		"cache_read_input_tokens":     metaCountNode,
		"cache_creation": metaObj(map[string]*metaNode{
			"ephemeral_1h_input_tokens": metaCountNode,
			"ephemeral_5m_input_tokens": metaCountNode,
		}),
		"server_tool_use": metaObj(map[string]*metaNode{
			"web_search_requests": metaCountNode,
			"web_fetch_requests":  metaCountNode,
		}),
		"output_tokens_details": metaObj(map[string]*metaNode{
			"thinking_tokens": metaCountNode,
		}),
		"service_tier":  metaEnumOf("standard", "priority", "batch"),
		"inference_geo": metaEnumOf("global", "us"),
		"speed":         metaEnumOf("standard", "fast"),
	}),
	"stop_details": metaObj(map[string]*metaNode{
		"type":        metaEnumOf("refusal"),
		"category":    metaEnumOf("cyber", "bio", "frontier_llm", "reasoning_extraction", "general_harms"),
		"explanation": metaProjectedNode,
	}),
	"container": metaObj(map[string]*metaNode{
		"id":         {kind: metaSealed, seal: kindContainerID},
		"expires_at": {kind: metaTime},
		"skills":     metaProjectedNode,
	}),
	"context_management": metaObj(map[string]*metaNode{
		"applied_edits": {kind: metaList, elem: metaObj(map[string]*metaNode{
			"type":                   metaEnumOf("clear_tool_uses_20250919", "clear_thinking_20251015"),
			"cleared_tool_uses":      metaCountNode,
			"cleared_input_tokens":   metaCountNode,
			"cleared_thinking_turns": metaCountNode,
		})},
	}),
	"diagnostics": metaObj(map[string]*metaNode{
		"cache_miss_reason": metaObj(map[string]*metaNode{
			"type":                      metaEnumOf("model_changed", "system_changed", "tools_changed", "messages_changed", "previous_message_not_found", "unavailable"),
			"cache_missed_input_tokens": metaCountNode,
		}),
	}),
}

// extraMember is an answer member projected as a member part
// {"type":"member","name","value"}: a top-level member the gateway does
// not know (path empty), or a value inside a metadata member top.
type extraMember struct {
	name  string
	top   string
	path  []any // keys and indices below top
	value any
}

// partName names the value at path below top: plain names joined by dots,
// others quoted in brackets, indices in brackets ("usage.server_tool_use.x",
// "context_management.applied_edits[0].y", `["odd name"]`), so no two
// paths share a name.
func partName(top string, path []any) string {
	b := appendPathKey(nil, top, true)
	for _, p := range path {
		switch x := p.(type) {
		case string:
			b = appendPathKey(b, x, false)
		case int:
			b = append(strconv.AppendInt(append(b, '['), int64(x), 10), ']')
		}
	}
	return string(b)
}

func appendPathKey(b []byte, k string, first bool) []byte {
	if rawjson.PlainName(k) {
		if !first {
			b = append(b, '.')
		}
		return append(b, k...)
	}
	return append(append(append(b, '['), strconv.Quote(k)...), ']')
}

// metaCleaner releases the metadata of one answer.
type metaCleaner struct {
	s     *Surface
	parts []extraMember
}

// clean returns v as released under n at path below top (keep false:
// removed) and whether it differs from v. Projected values are recorded
// in c.parts. A member differing from a known one only in letter case is
// refused (ambiguous).
func (c *metaCleaner) clean(n *metaNode, v any, top string, path []any) (out any, keep, changed bool, err error) {
	if v == nil {
		return nil, true, false, nil // null carries nothing
	}
	switch n.kind {
	case metaCount:
		_, ok := count(v)
		return v, ok, !ok, nil
	case metaEnum:
		s, ok := v.(string)
		ok = ok && slices.Contains(n.enum, s)
		return v, ok, !ok, nil
	case metaTime:
		s, ok := v.(string)
		t, err := time.Parse(time.RFC3339Nano, s)
		if !ok || err != nil {
			return nil, false, true, nil
		}
		f := t.Format(time.RFC3339Nano)
		return f, true, f != s, nil
	case metaSealed:
		s, ok := v.(string)
		if !ok {
			return nil, false, true, nil
		}
		if s == "" {
			return v, true, false, nil // an empty id carries nothing
		}
		return c.s.seal.SealString(n.seal, s), true, true, nil
	case metaProjected:
		if !empty(v) {
			c.parts = append(c.parts, extraMember{name: partName(top, path), top: top, path: path, value: v})
		}
		return v, true, false, nil
	case metaList:
		list, ok := v.([]any)
		if !ok {
			return nil, false, true, nil
		}
		out := make([]any, len(list))
		for i, e := range list {
			if _, isObj := e.(map[string]any); !isObj {
				return nil, false, true, nil
			}
			o, keep, ch, err := c.clean(n.elem, e, top, append(path[:len(path):len(path)], i))
			if err != nil {
				return nil, false, false, err
			}
			out[i], changed = o, changed || ch || !keep
		}
		return out, true, changed, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, false, true, nil
	}
	if k := n.known.CollisionIn(obj); k != "" {
		return nil, false, false, respErr(partName(top, path), collisionMessage(k))
	}
	// In name order, so member parts come in a stable order; the object is
	// copied only when a member changes.
	var buf [16]string
	keys := buf[:0]
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var res map[string]any
	for _, k := range keys {
		child := n.members[k]
		if child == nil && !c.s.strict {
			child = metaProjectedNode
		}
		keep, o, ch := false, any(nil), true
		if child != nil {
			var at []any // the value's path, for the nodes that record parts
			if child.kind == metaObject || child.kind == metaList || child.kind == metaProjected {
				at = append(path[:len(path):len(path)], k)
			}
			var err error
			if o, keep, ch, err = c.clean(child, obj[k], top, at); err != nil {
				return nil, false, false, err
			}
		}
		if keep && !ch {
			continue
		}
		if res == nil {
			res = maps.Clone(obj)
		}
		if keep {
			res[k] = o
		} else {
			delete(res, k)
		}
	}
	if res == nil {
		return obj, true, false, nil
	}
	return res, true, true, nil
}

// empty reports whether a projected value carries nothing: "", [] or {}.
func empty(v any) bool {
	switch x := v.(type) {
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// setAt returns a copy of tree with the value at path set to v, or
// removed when del.
func setAt(tree any, path []any, v any, del bool) any {
	if len(path) == 0 {
		return v
	}
	switch x := tree.(type) {
	case map[string]any:
		k, _ := path[0].(string)
		out := make(map[string]any, len(x))
		for kk, vv := range x {
			out[kk] = vv
		}
		if len(path) == 1 && del {
			delete(out, k)
			return out
		}
		out[k] = setAt(x[k], path[1:], v, del)
		return out
	case []any:
		i, _ := path[0].(int)
		out := slices.Clone(x)
		if i < len(out) {
			if len(path) == 1 && del {
				out[i] = nil
			} else {
				out[i] = setAt(x[i], path[1:], v, del)
			}
		}
		return out
	}
	return tree
}

// metaDoc is the treatment of each metadata member, for the tables.
var metaDoc = map[string]string{
	"usage": "`usage` {prompt_tokens: input + cache creation + cache read tokens, completion_tokens: output_tokens} (those four: non-negative integers, else the answer is refused); " +
		"cache_creation, server_tool_use and output_tokens_details hold their documented counters; service_tier (standard, priority, batch), speed (standard, fast) and inference_geo (global, us) are enumerations; " +
		"a count or enumeration value that is not one is removed; unknown members at any depth are judged as member parts (removed under " + UnknownMembersKey + ": refuse)",
	"stop_details":       "an object or null: type (refusal) and category (cyber, bio, frontier_llm, reasoning_extraction, general_harms or null) are enumerations, else removed; explanation is judged as the member part `stop_details.explanation`; unknown members judged as member parts (removed under strict)",
	"container":          "an object or null: id sealed (`messages.container.id`: the client sends the seal back in the request's container, the provider receives its id); expires_at re-rendered by the gateway from the RFC 3339 timestamp, else removed; skills judged as the member part `container.skills`; unknown members judged as member parts (removed under strict)",
	"context_management": "an object or null: each applied edit's type is an enumeration (clear_tool_uses_20250919, clear_thinking_20251015), else removed, its cleared_* members counts, else removed; unknown members judged as member parts (removed under strict)",
	"diagnostics":        "an object or null: cache_miss_reason's type is an enumeration (model_changed, system_changed, tools_changed, messages_changed, previous_message_not_found, unavailable), else removed, cache_missed_input_tokens a count, else removed; unknown members judged as member parts (removed under strict)",
}
