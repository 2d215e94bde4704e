package chat

import (
	"encoding/json"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
	"slices"
	"strconv"
	"strings"
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
// It also decides whether the upstream events may be replayed as they
// are. They may not (and the stream is re-synthesized from the verdicted
// projection instead) when any chunk holds a member that is removed
// (unknown, logprobs, obfuscation, malformed metadata), or when the
// official clients would assemble the fragments differently from each
// other (a name or id in several fragments, a fragment without index).
type assembler struct {
	pc   partsCollector
	meta chunkMeta
	// metaFirst[k] is the first value of metadata member metaKeys[k],
	// once bit k of metaSeen is set.
	metaFirst  [len(metaKeys)]string
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
}

func newAssembler(opts ResponseOptions) *assembler {
	return &assembler{pc: partsCollector{allow: rawjson.NewMemberSet(opts.AllowMembers...)}, replayable: true}
}

// add folds one raw chunk (a valid JSON object's text and its decoded
// value) in. It reports whether the chunk is usage-only (no choices, a
// usage object), which Replay may strip.
func (a *assembler) add(raw []byte, chunk map[string]any) (bool, error) {
	if chunkTop.AmbiguousKeys(chunk) {
		return false, &wire.ResponseError{Msg: "chunk has a member whose name differs from a known member's only in case"}
	}
	var choices []any
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
		default: // obfuscation, unknown members: removed
			a.replayable = false
		}
	}
	for i, c := range choices {
		if err := a.choice(c, fieldIndex("choices", i)); err != nil {
			return false, err
		}
	}
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

// readMeta keeps the first well-shaped value of each metadata member; a
// malformed one, or one that changes between chunks, makes the stream
// re-synthesized with the first well-shaped value.
func (a *assembler) readMeta(key string, v any) {
	k := metaIndex(key)
	var val string
	switch x := v.(type) {
	case string:
		val = x
	case json.Number:
		val = string(x)
	case nil:
		val = "null"
	default:
		a.replayable = false
		return
	}
	if a.metaSeen&(1<<k) != 0 {
		// openai-go's accumulator drops chunks whose id differs from the
		// first; the re-synthesized stream carries one value throughout.
		if a.metaFirst[k] != val {
			a.replayable = false
		}
		return
	}
	if !metaValueOK(key, v, "chat.completion.chunk") {
		a.replayable = false
		return
	}
	a.metaFirst[k], a.metaSeen = val, a.metaSeen|1<<k
	a.meta.setValue(key, v)
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
		default:
			if k != "logprobs" || x != nil {
				a.replayable = false
			}
		}
	}
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
		case a.pc.allow.Has(k):
			if err := a.extra(k, v); err != nil {
				return err
			}
		default:
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

// extra folds an allowed extra member of a delta: string fragments are
// concatenated, as for content; any other value cannot be assembled.
func (a *assembler) extra(k string, v any) error {
	if v == nil {
		return nil
	}
	s, ok := v.(string)
	if !ok {
		return &wire.ResponseError{Msg: "an allowed extra delta member must be a string in a stream, got " + rawjson.TypeName(v)}
	}
	for i := range a.pc.ans.extras {
		if x := &a.pc.ans.extras[i]; x.name == k {
			x.value = x.value.(string) + s
			return nil
		}
	}
	a.pc.ans.extras = append(a.pc.ans.extras, extraMember{name: k, value: s})
	return nil
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
	for k := range f {
		if !responseToolCall.Has(k) {
			a.replayable = false
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
		a.pc.ans.calls[i] = call{id: c.id, name: c.name, arguments: c.args.String()}
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
