package chatwire

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// maxToolCallIndex bounds delta.tool_calls[].index so a hostile index
// cannot make the assembly allocate; real streams count from 0.
const maxToolCallIndex = 1 << 16

// chunkMeta is what every synthesized chunk repeats from the upstream ones.
type chunkMeta struct {
	id, model, systemFingerprint, serviceTier string
	created                                   int64
}

// assembler folds chat.completion.chunk objects into one response, per
// choice index (only 0 is accepted) and per tool-call index.
type assembler struct {
	meta       chunkMeta
	content    strings.Builder
	sawContent bool
	refusal    strings.Builder
	sawRefusal bool
	calls      map[int]*callAcc
	lastCall   int
	maxCall    int // highest index in calls; keeps index-less fragments O(1)
	finish     *string
	usage      any
	usageRaw   []byte
}

type callAcc struct {
	id, name string
	args     strings.Builder
}

// add folds one chunk in. It reports whether the chunk is usage-only
// (no choices, a usage object), which Replay may strip.
func (a *assembler) add(chunk map[string]any) (bool, error) {
	a.readMeta(chunk)
	var choices []any
	switch c := chunk["choices"].(type) {
	case nil:
	case []any:
		choices = c
	default:
		return false, &ResponseError{Field: "choices", Msg: "must be an array, got " + typeName(c)}
	}
	for i, c := range choices {
		if err := a.choice(c, "choices["+strconv.Itoa(i)+"]"); err != nil {
			return false, err
		}
	}
	switch u := chunk["usage"].(type) {
	case nil:
		return false, nil
	case map[string]any:
		raw, err := jsonvalue.Marshal(u)
		if err != nil {
			return false, &ResponseError{Field: "usage", Msg: "is not encodable JSON"}
		}
		a.usage, a.usageRaw = u, raw
		return len(choices) == 0, nil
	default:
		return false, &ResponseError{Field: "usage", Msg: "must be an object, got " + typeName(u)}
	}
}

// readMeta keeps the first value of each metadata member; like
// ParseResponse it tolerates absent or mistyped metadata.
func (a *assembler) readMeta(chunk map[string]any) {
	first := func(dst *string, key string) {
		if s, ok := chunk[key].(string); ok && *dst == "" {
			*dst = s
		}
	}
	first(&a.meta.id, "id")
	first(&a.meta.model, "model")
	first(&a.meta.systemFingerprint, "system_fingerprint")
	first(&a.meta.serviceTier, "service_tier")
	if n, ok := chunk["created"].(json.Number); ok && a.meta.created == 0 {
		a.meta.created, _ = strconv.ParseInt(string(n), 10, 64)
	}
}

func (a *assembler) choice(v any, field string) error {
	c, ok := v.(map[string]any)
	if !ok {
		return &ResponseError{Field: field, Msg: "must be an object, got " + typeName(v)}
	}
	if idx := c["index"]; idx != nil && !jsonvalue.Equal(idx, json.Number("0")) {
		return &ResponseError{Field: field + ".index", Msg: "only choice 0 is supported: " + nMessage}
	}
	switch f := c["finish_reason"].(type) {
	case nil:
	case string:
		a.finish = &f
	default:
		return &ResponseError{Field: field + ".finish_reason", Msg: "must be a string, got " + typeName(f)}
	}
	switch d := c["delta"].(type) {
	case nil: // Azure sends delta: null on the finish chunk
		return nil
	case map[string]any:
		return a.delta(d, field+".delta")
	default:
		return &ResponseError{Field: field + ".delta", Msg: "must be an object, got " + typeName(d)}
	}
}

func (a *assembler) delta(d map[string]any, field string) error {
	for _, key := range []string{"function_call", "audio"} {
		if d[key] != nil {
			return &ResponseError{Field: field + "." + key, Msg: "cannot be mediated"}
		}
	}
	if err := appendText(&a.content, &a.sawContent, d["content"], field+".content"); err != nil {
		return err
	}
	if err := appendText(&a.refusal, &a.sawRefusal, d["refusal"], field+".refusal"); err != nil {
		return err
	}
	switch tc := d["tool_calls"].(type) {
	case nil:
	case []any:
		for i, f := range tc {
			if err := a.toolCall(f, field+".tool_calls["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	default:
		return &ResponseError{Field: field + ".tool_calls", Msg: "must be an array, got " + typeName(tc)}
	}
	return nil
}

func appendText(b *strings.Builder, saw *bool, v any, field string) error {
	switch s := v.(type) {
	case nil:
	case string:
		b.WriteString(s)
		*saw = true
	default:
		return &ResponseError{Field: field, Msg: "must be a string, got " + typeName(v)}
	}
	return nil
}

// toolCall folds one tool-call fragment in: the id and name come from the
// first fragment that has them, arguments are concatenated.
func (a *assembler) toolCall(v any, field string) error {
	f, ok := v.(map[string]any)
	if !ok {
		return &ResponseError{Field: field, Msg: "must be an object, got " + typeName(v)}
	}
	id, ok := f["id"].(string)
	if !ok && f["id"] != nil {
		return &ResponseError{Field: field + ".id", Msg: "must be a string, got " + typeName(f["id"])}
	}
	if t := f["type"]; t != nil && t != "function" {
		return &ResponseError{Field: field + ".type", Msg: "only function tool calls can be mediated"}
	}
	idx, err := a.callIndex(f["index"], id, field)
	if err != nil {
		return err
	}
	if a.calls == nil {
		a.calls = map[int]*callAcc{}
	}
	acc := a.calls[idx]
	if acc == nil {
		acc = &callAcc{}
		a.calls[idx] = acc
	}
	a.lastCall, a.maxCall = idx, max(a.maxCall, idx)
	switch {
	case acc.id == "":
		acc.id = id
	case id != "" && id != acc.id:
		return &ResponseError{Field: field + ".id", Msg: "conflicts with the id of an earlier fragment of the same call"}
	}
	var fn map[string]any
	switch x := f["function"].(type) {
	case nil:
	case map[string]any:
		fn = x
	default:
		return &ResponseError{Field: field + ".function", Msg: "must be an object, got " + typeName(x)}
	}
	name, ok := fn["name"].(string)
	if !ok && fn["name"] != nil {
		return &ResponseError{Field: field + ".function.name", Msg: "must be a string, got " + typeName(fn["name"])}
	}
	if acc.name == "" {
		acc.name = name
	}
	var saw bool
	return appendText(&acc.args, &saw, fn["arguments"], field+".function.arguments")
}

// callIndex resolves a fragment's tool-call index. OpenAI always sends
// one; for providers that do not, a fragment with a new id starts the next
// call and one without continues the last. -1 means 0, as in openai-go.
func (a *assembler) callIndex(v any, id, field string) (int, error) {
	if v == nil {
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
		return 0, &ResponseError{Field: field + ".index", Msg: "must be an integer, got " + typeName(v)}
	}
	i, err := strconv.Atoi(string(n))
	switch {
	case err != nil || i < -1 || i > maxToolCallIndex:
		return 0, &ResponseError{Field: field + ".index", Msg: "must be an integer from 0 to " + strconv.Itoa(maxToolCallIndex)}
	case i == -1:
		return 0, nil
	}
	return i, nil
}

func keys(m map[int]*callAcc) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// response builds the assembled Response; calls are ordered by index.
func (a *assembler) response() *Response {
	var content any
	if a.sawContent {
		content = a.content.String()
	}
	var refusal *string
	if a.sawRefusal {
		s := a.refusal.String()
		refusal = &s
	}
	idx := keys(a.calls)
	slices.Sort(idx)
	calls := make([]call, len(idx))
	for i, k := range idx {
		c := a.calls[k]
		calls[i] = call{id: c.id, name: c.name, arguments: c.args.String()}
	}
	r := &Response{
		id:                a.meta.id,
		model:             a.meta.model,
		created:           a.meta.created,
		systemFingerprint: a.meta.systemFingerprint,
		usageRaw:          a.usageRaw,
		streamed:          true,
	}
	r.build(content, refusal, calls, a.finish, a.usage)
	return r
}
