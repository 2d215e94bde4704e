package chat

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// maxToolCallIndex bounds delta.tool_calls[].index so a hostile index
// cannot make the assembly allocate; real streams count from 0.
const maxToolCallIndex = 1 << 16

// Known members of each level of a chat.completion.chunk.
var (
	chunkTop    = rawjson.NewMemberSet("id", "object", "created", "model", "system_fingerprint", "service_tier", "choices", "usage", "obfuscation", "error")
	chunkChoice = rawjson.NewMemberSet("index", "delta", "finish_reason", "logprobs")
	chunkDelta  = rawjson.NewMemberSet("role", "content", "refusal", wireReasoningContent, wireReasoning, wireReasoningDetails,
		"annotations", "tool_calls", "function_call", "audio")
)

// assembler folds chat.completion.chunk objects into one answer, per tool
// call index, the way the official clients accumulate them: text channels
// and tool-call name and argument fragments are concatenated, a later
// non-empty id replaces an earlier one (openai-go and openai JS both do).
//
// It also decides whether the upstream events may be replayed: each as
// the head the gateway renders (minted id, the request's model, checked
// created and service_tier) followed by the chunk's members after its
// metadata. They may not (and the stream is re-synthesized from the
// verdicted projection instead) when any chunk holds a member that is
// removed (logprobs, obfuscation, a null or strict-mode unknown member,
// metadata after another member), a member whose projection is not the
// join of its values (an unknown member of the chunk or its choice, a
// non-string unknown delta member, any unknown member of a tool call), or
// when the official clients would assemble the fragments differently from
// each other (a name or id in several fragments, a fragment without
// index).
type assembler struct {
	pc   partsCollector
	meta chunkMeta
	// metaSeen has bit k set once metadata member metaKeys[k] was
	// recorded: the first releasable value of each is kept.
	metaSeen   uint8
	calls      map[int]*callAcc
	lastCall   int
	maxCall    int // highest index in calls; keeps index-less fragments O(1)
	usage      *usage
	replayable bool
	fast       fastChunk // the fast path's scan of the current chunk
	scratch    []byte    // unescaped text of the fast path, reused
}

type callAcc struct {
	id, name string
	args     strings.Builder // fragments are many: no quadratic concatenation
	names    int             // non-empty name fragments seen
	ids      int             // non-empty id fragments seen
	members  []extraMember   // unknown members, joined as delta members are
}

// newAssembler returns an assembler for one answer, whose id it mints.
func newAssembler(opts ResponseOptions) *assembler {
	return &assembler{
		pc:         partsCollector{allow: rawjson.NewMemberSet(opts.AllowMembers...), opts: opts},
		meta:       chunkMeta{id: opts.mintID(), model: opts.Model},
		replayable: true,
	}
}

// add folds one raw chunk (a valid JSON object's text and its decoded
// value) in. It reports whether the chunk is usage-only (no choices, a
// usage object), which Replay may strip.
func (a *assembler) add(raw []byte, chunk map[string]any) (bool, error) {
	if chunkTop.AmbiguousKeys(chunk) {
		return false, &wire.ResponseError{Msg: "chunk has a member whose name differs from a known member's only in case"}
	}
	var choices []any
	var unknown []string
	usageOnly := false
	for k, v := range chunk {
		switch {
		case k == "choices":
			c, ok := v.([]any)
			if !ok && v != nil {
				return false, &wire.ResponseError{Field: "choices", Msg: "must be an array, got " + rawjson.TypeName(v)}
			}
			choices = c
		case k == "usage":
			if err := a.readUsage(raw, v); err != nil {
				return false, err
			}
		case topMeta.Has(k):
			a.readMeta(k, v)
		case k == "error" && v == nil:
		case k == "obfuscation", k == "error", removedTop.Has(k): // removed
			a.replayable = false
		default:
			unknown = append(unknown, k)
		}
	}
	for i, c := range choices {
		if err := a.choice(c, fieldIndex("choices", i)); err != nil {
			return false, err
		}
	}
	a.unknowns(chunk, unknown, inCompletion)
	if u, ok := chunk["usage"].(map[string]any); ok && u != nil && len(choices) == 0 {
		usageOnly = true
	}
	return usageOnly, nil
}

// readUsage checks a chunk's usage object; the last one wins.
func (a *assembler) readUsage(raw []byte, v any) error {
	if v == nil {
		return nil
	}
	if _, ok := v.(map[string]any); !ok {
		return &wire.ResponseError{Field: "usage", Msg: "must be an object, got " + rawjson.TypeName(v)}
	}
	ms, err := rawjson.ScanObjectInterned(raw, rawjson.RootSpan(raw), responseKeys)
	if err != nil {
		return &wire.ResponseError{Field: "usage", Msg: "has a duplicate member"}
	}
	i := rawjson.Find(ms, "usage")
	u, err := readUsage(raw, ms[i].Val)
	if err != nil {
		return err
	}
	a.keepUsage(u)
	return nil
}

// keepUsage makes u, read from a chunk, the stream's usage.
func (a *assembler) keepUsage(u *usage) {
	u.raw = slices.Clone(u.raw) // raw may point into a buffer the reader replaces
	a.usage = u
	a.replayable = a.replayable && u.clean
}

// readMeta keeps the first releasable value of object, created and
// service_tier (see metaOK). id and model are the gateway's and
// system_fingerprint is removed: a replayed chunk's metadata is replaced
// by the head the gateway renders, whatever the upstream sent.
func (a *assembler) readMeta(key string, v any) {
	switch key {
	case "id", "model", "system_fingerprint":
		return
	}
	k := metaIndex(key)
	var kind byte
	var text string
	switch x := v.(type) {
	case string:
		kind, text = '"', x
	case json.Number:
		kind, text = '0', string(x)
	default: // null is not recorded; any other value is not released
		return
	}
	if a.metaSeen&(1<<k) == 0 && metaOK(key, kind, text, "chat.completion.chunk") {
		a.metaSeen |= 1 << k
		a.meta.record(key, kind, text)
	}
}

// unknowns folds the members of a chunk or of its choice (in) that the
// gateway does not know, keys: each is projected as a member part, the
// last non-null value winning as the openai JS client assembles them
// (Object.assign). The stream is then re-synthesized, so every client
// reads the judged value once; in strict mode they are removed.
func (a *assembler) unknowns(obj map[string]any, keys []string, in string) {
	if len(keys) == 0 {
		return
	}
	a.replayable = false
	if a.pc.opts.StrictMembers {
		return
	}
	slices.Sort(keys) // map order is random; the projection is not
	for _, k := range keys {
		if v := obj[k]; v != nil {
			if x := a.pc.ans.extra(in, k); x != nil {
				x.value = v
			} else {
				a.pc.ans.extras = append(a.pc.ans.extras, extraMember{in: in, name: k, value: v})
			}
		}
	}
}

// joinMember folds one value of an unknown delta-level member into list,
// as the clients accumulate deltas: a string extends an earlier string,
// any other value replaces the earlier one, null changes nothing. It
// reports whether the replayed values would show a client nothing the
// projection lacks: strings only (each is part of the join).
func joinMember(list *[]extraMember, name string, v any) bool {
	if v == nil {
		return true
	}
	s, isString := v.(string)
	for i := range *list {
		x := &(*list)[i]
		if x.name != name {
			continue
		}
		if prev, ok := x.value.(string); ok && isString {
			x.value = prev + s
			return true
		}
		x.value = v
		return false
	}
	*list = append(*list, extraMember{name: name, value: v})
	return isString
}

// metaIndex is key's index in metaKeys; key is one of topMeta's.
func metaIndex(key string) int {
	for k, m := range metaKeys {
		if m == key {
			return k
		}
	}
	panic("chat: " + key + " is not a metadata member")
}

func (a *assembler) choice(v any, field string) error {
	c, ok := v.(map[string]any)
	if !ok {
		return &wire.ResponseError{Field: field, Msg: "must be an object, got " + rawjson.TypeName(v)}
	}
	if chunkChoice.AmbiguousKeys(c) {
		return &wire.ResponseError{Field: field, Msg: "has a member whose name differs from a known member's only in case"}
	}
	// The index first: a choice other than 0 is refused as such whatever
	// else is wrong with it (map order would pick the error at random).
	if x := c["index"]; x != nil && x != json.Number("0") {
		return &wire.ResponseError{Field: field + ".index", Msg: "only choice 0 is supported: " + nMessage}
	}
	var unknown []string
	for k, x := range c {
		switch k {
		case "index": // checked above
		case "finish_reason":
			if err := appendOptReplace(&a.pc.ans.finish, x, field+".finish_reason"); err != nil {
				return err
			}
		case "delta":
			switch d := x.(type) {
			case nil: // Azure sends delta: null on the finish chunk
			case map[string]any:
				if err := a.delta(d, field+".delta"); err != nil {
					return err
				}
			default:
				return &wire.ResponseError{Field: field + ".delta", Msg: "must be an object, got " + rawjson.TypeName(d)}
			}
		case "logprobs": // removed unless null
			if x != nil {
				a.replayable = false
			}
		case "content_filter_results", "content_filter_offsets":
			a.replayable = false
		default:
			unknown = append(unknown, k)
		}
	}
	a.unknowns(c, unknown, inChoice)
	return nil
}

// appendOptReplace sets an optional string to the latest non-null value.
func appendOptReplace(dst **string, v any, field string) error {
	switch s := v.(type) {
	case nil:
	case string:
		*dst = &s
	default:
		return &wire.ResponseError{Field: field, Msg: "must be a string, got " + rawjson.TypeName(v)}
	}
	return nil
}

func (a *assembler) delta(d map[string]any, field string) error {
	if a.pc.known(chunkDelta).AmbiguousKeys(d) {
		return &wire.ResponseError{Field: field, Msg: "has a member whose name differs from a known member's only in case"}
	}
	for _, k := range sortedKeys(d) { // fixed order: channels are created deterministically
		v := d[k]
		switch {
		case k == "tool_calls":
			if err := a.toolCalls(v, field+".tool_calls"); err != nil {
				return err
			}
		case chunkDelta.Has(k):
			ok, err := a.pc.member(k, v, field+"."+k, true)
			if err != nil {
				return err
			}
			a.replayable = a.replayable && ok
		case a.pc.opts.judges(a.pc.allow, k) && (v != nil || a.pc.allow.Has(k)):
			a.replayable = joinMember(&a.pc.ans.extras, k, v) && a.replayable
		default: // removed: strict mode, or a null no part carries
			a.replayable = false
		}
	}
	return nil
}

// deltaOrder lists the delta members in the order a client sees them
// (role first, text channels before tool calls).
var deltaOrder = []string{"role", wireReasoningContent, wireReasoning, wireReasoningDetails, "content", "annotations", "refusal", "tool_calls", "function_call", "audio"}

// sortedKeys returns d's keys: the known ones in deltaOrder, then the
// others sorted (so allowed extras are projected in a stable order).
func sortedKeys(d map[string]any) []string {
	keys := make([]string, 0, len(d))
	for _, k := range deltaOrder {
		if _, ok := d[k]; ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == len(d) {
		return keys
	}
	n := len(keys)
	for k := range d {
		if !slices.Contains(deltaOrder, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys[n:])
	return keys
}

func (a *assembler) toolCalls(v any, field string) error {
	switch tc := v.(type) {
	case nil:
	case []any:
		for i, f := range tc {
			if err := a.toolCall(f, fieldIndex(field, i)); err != nil {
				return err
			}
		}
	default:
		return &wire.ResponseError{Field: field, Msg: "must be an array, got " + rawjson.TypeName(tc)}
	}
	return nil
}

// toolCall folds one tool-call fragment in.
func (a *assembler) toolCall(v any, field string) error {
	f, ok := v.(map[string]any)
	if !ok {
		return &wire.ResponseError{Field: field, Msg: "must be an object, got " + rawjson.TypeName(v)}
	}
	if responseToolCall.AmbiguousKeys(f) {
		return &wire.ResponseError{Field: field, Msg: "has a member whose name differs from a known member's only in case"}
	}
	var unknown []string
	for k := range f {
		if !responseToolCall.Has(k) {
			a.replayable = false // the call's members are rendered once
			unknown = append(unknown, k)
		}
	}
	id, ok := f["id"].(string)
	if !ok && f["id"] != nil {
		return &wire.ResponseError{Field: field + ".id", Msg: "must be a string, got " + rawjson.TypeName(f["id"])}
	}
	if t := f["type"]; t != nil && t != "function" {
		return &wire.ResponseError{Field: field + ".type", Msg: "only function tool calls can be mediated"}
	}
	idx, err := a.callIndex(f["index"], id, field)
	if err != nil {
		return err
	}
	acc := a.callAt(idx)
	if !a.pc.opts.StrictMembers {
		slices.Sort(unknown)
		for _, k := range unknown {
			joinMember(&acc.members, k, f[k])
		}
	}
	if id != "" {
		if acc.ids > 0 && id != acc.id {
			a.replayable = false // clients keep the last id; the verdicted one is sent once
		}
		acc.id = id
		acc.ids++
	}
	var fn map[string]any
	switch x := f["function"].(type) {
	case nil:
	case map[string]any:
		fn = x
	default:
		return &wire.ResponseError{Field: field + ".function", Msg: "must be an object, got " + rawjson.TypeName(x)}
	}
	if responseFunction.AmbiguousKeys(fn) {
		return &wire.ResponseError{Field: field + ".function", Msg: "has a member whose name differs from a known member's only in case"}
	}
	for k, x := range fn {
		s, ok := x.(string)
		switch {
		case !responseFunction.Has(k):
			a.replayable = false
		case !ok && x != nil:
			return &wire.ResponseError{Field: field + ".function." + k, Msg: "must be a string, got " + rawjson.TypeName(x)}
		case k == "name" && s != "":
			acc.name += s
			acc.names++
			if acc.names > 1 {
				a.replayable = false // openai JS keeps the last fragment, openai-go the concatenation
			}
		case k == "arguments":
			acc.args.WriteString(s)
		}
	}
	return nil
}

// callIndex resolves a fragment's tool-call index. OpenAI always sends
// one; for providers that do not, a fragment with a new id starts the next
// call and one without continues the last, and the stream is re-synthesized
// with explicit indexes (clients disagree on index-less fragments). -1
// means 0, as in openai-go.
func (a *assembler) callIndex(v any, id, field string) (int, error) {
	if v == nil {
		a.replayable = false
		if len(a.calls) == 0 {
			return 0, nil
		}
		if id != "" && id != a.calls[a.lastCall].id {
			return a.maxCall + 1, nil
		}
		return a.lastCall, nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, &wire.ResponseError{Field: field + ".index", Msg: "must be an integer, got " + rawjson.TypeName(v)}
	}
	i, err := strconv.Atoi(string(n))
	switch {
	case err != nil || i < -1 || i > maxToolCallIndex:
		return 0, &wire.ResponseError{Field: field + ".index", Msg: "must be an integer from 0 to " + strconv.Itoa(maxToolCallIndex)}
	case i == -1:
		a.replayable = false
		return 0, nil
	}
	return i, nil
}

// response builds the assembled Response; calls are ordered by index.
func (a *assembler) response() *Response {
	idx := make([]int, 0, len(a.calls))
	for k := range a.calls {
		idx = append(idx, k)
	}
	slices.Sort(idx)
	a.pc.ans.calls = make([]call, len(idx))
	for i, k := range idx {
		c := a.calls[k]
		a.pc.ans.calls[i] = call{id: c.id, name: c.name, arguments: c.args.String(), members: c.members}
	}
	a.pc.finish()
	r := &Response{meta: a.meta, ans: a.pc.ans, usage: a.usage, streamed: true}
	r.build()
	return r
}

// callAt is the accumulator of tool call idx, made on first sight; it
// becomes the last call seen.
func (a *assembler) callAt(idx int) *callAcc {
	if a.calls == nil {
		a.calls = map[int]*callAcc{}
	}
	acc := a.calls[idx]
	if acc == nil {
		acc = &callAcc{}
		a.calls[idx] = acc
	}
	a.lastCall, a.maxCall = idx, max(a.maxCall, idx)
	return acc
}
