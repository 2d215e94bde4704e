package chat

import (
	"bytes"

	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// The fast path reads the chunks nearly every stream is made of without
// building a value tree per event: metadata, one text or tool-call delta,
// a finish reason. It scans the raw chunk with strict token checks, and
// only when the chunk is valid JSON of exactly that shape, with every
// member known, unique and well typed, does it fold the chunk in (text
// is unescaped straight into the assembly builders). Any other chunk (an
// error, an unknown or escaped member name, usage, logprobs, reasoning
// details, a value the tree path would refuse) is left untouched for the tree
// path, which then decides exactly as it always has. A usage object
// of counts (and objects of counts) is fast too: readUsage reads it in
// place, as the tree path does after decoding the whole chunk. Scanning changes no
// state, so falling back is always safe.

// fastChunk is one scanned chunk; spans point into the chunk data. A zero
// span is an absent or null member (metadata keep null, which matters).
type fastChunk struct {
	meta        [len(metaKeys)]rawjson.Span
	usage       rawjson.Span // zero: null or absent
	obfuscation bool
	choices     []fastChoice
	frags       []fastFrag
	// split is the offset of the first member other than metadata (its
	// key's quote), or of the closing brace when there is none; a replay
	// writes the gateway's head in place of what precedes it. metaAfter
	// reports metadata after split, which a replay could not remove.
	split     int
	metaAfter bool
}

// reset empties fc for the next chunk.
func (fc *fastChunk) reset() {
	fc.meta, fc.usage = [len(metaKeys)]rawjson.Span{}, rawjson.Span{}
	fc.obfuscation, fc.choices, fc.frags = false, fc.choices[:0], fc.frags[:0]
	fc.split, fc.metaAfter = -1, false
}

// replaySplit is fc's split, or -1 when the chunk cannot be replayed.
func (fc *fastChunk) replaySplit() int {
	if fc.metaAfter {
		return -1
	}
	return fc.split
}

type fastChoice struct {
	index, finish, role, content, refusal rawjson.Span
	reasoningContent, reasoning           rawjson.Span
	frags                                 int // fragments in fastChunk.frags before this choice's
	nFrags                                int
}

type fastFrag struct {
	index          int // -1: absent or null
	id, name, args rawjson.Span
}

// addFast folds a chunk in through the fast path and reports whether it
// did, and whether the chunk is usage-only (no choices, a usage object),
// as add reports it; when the chunk is not of the fast shape nothing was
// changed.
func (a *assembler) addFast(b []byte) (ok, usageOnly bool) {
	fc := &a.fast
	fc.reset()
	i := rawjson.SkipSpace(b, 0)
	end, ok := fc.top(b, i)
	if !ok || rawjson.SkipSpace(b, end) != len(b) {
		return false, false
	}
	var u *usage
	if fc.usage != (rawjson.Span{}) {
		var err error
		if u, err = readUsage(b, fc.usage); err != nil {
			return false, false // the tree path reports it
		}
	}
	a.applyFast(b)
	if u != nil {
		a.keepUsage(u)
	}
	return true, u != nil && len(fc.choices) == 0
}

// scalar checks the string, number or null at b[i] and returns its end.
func scalar(b []byte, i int) (int, bool) {
	switch c := b[i]; {
	case c == '"':
		end, _, ok := rawjson.StrictString(b, i)
		return end, ok
	case c == 'n':
		return i + 4, bytes.HasPrefix(b[i:], []byte("null"))
	case c == '-' || c >= '0' && c <= '9':
		return rawjson.StrictNumber(b, i)
	}
	return 0, false
}

// str checks a string or null at b[i]; the span is zero for null.
func str(b []byte, i int) (rawjson.Span, int, bool) {
	end, ok := scalar(b, i)
	switch {
	case !ok || b[i] != '"' && b[i] != 'n':
		return rawjson.Span{}, 0, false
	case b[i] == 'n':
		return rawjson.Span{}, end, true
	}
	return rawjson.Span{Start: i, End: end}, end, true
}

// once marks bit in seen and reports whether it was clear: a repeated
// member is not fast (the tree path refuses it).
func once(seen *uint16, bit uint16) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

func (fc *fastChunk) top(b []byte, i int) (int, bool) {
	var seen uint16
	end, ok := rawjson.ObjectEach(b, i, func(key []byte, at int) (int, bool) {
		for k, name := range metaKeys {
			if string(key) == name {
				end, ok := scalar(b, at)
				if !ok || !once(&seen, 1<<k) {
					return 0, false
				}
				fc.meta[k] = rawjson.Span{Start: at, End: end}
				fc.metaAfter = fc.metaAfter || fc.split >= 0
				return end, true
			}
		}
		if fc.split < 0 {
			fc.split = offsetIn(b, key) - 1
		}
		switch string(key) {
		case "choices":
			if !once(&seen, 1<<8) {
				return 0, false
			}
			if b[at] == 'n' {
				_, end, ok := str(b, at)
				return end, ok
			}
			return rawjson.ArrayEach(b, at, func(at int) (int, bool) { return fc.choice(b, at) })
		case "usage": // null, or an object of counts
			if !once(&seen, 1<<9) {
				return 0, false
			}
			if b[at] == '{' {
				end, ok := countsObject(b, at, 2)
				fc.usage = rawjson.Span{Start: at, End: end}
				return end, ok
			}
			if b[at] != 'n' {
				return 0, false
			}
			_, end, ok := str(b, at)
			return end, ok
		case "obfuscation": // removed: the stream is re-synthesized
			if b[at] != '"' || !once(&seen, 1<<10) {
				return 0, false
			}
			fc.obfuscation = true
			return scalar(b, at)
		}
		return 0, false
	})
	if ok && fc.split < 0 {
		fc.split = end - 1
	}
	return end, ok
}

func (fc *fastChunk) choice(b []byte, i int) (int, bool) {
	c := fastChoice{frags: len(fc.frags)}
	var seen uint16
	end, ok := rawjson.ObjectEach(b, i, func(key []byte, at int) (int, bool) {
		switch string(key) {
		case "index": // only choice 0
			end, ok := scalar(b, at)
			c.index = rawjson.Span{Start: at, End: end}
			return end, ok && once(&seen, 1) && (string(b[at:end]) == "0" || string(b[at:end]) == "null")
		case "logprobs":
			_, end, ok := str(b, at)
			return end, ok && b[at] == 'n' && once(&seen, 2)
		case "finish_reason":
			s, end, ok := str(b, at)
			c.finish = s
			return end, ok && once(&seen, 4)
		case "delta":
			if !once(&seen, 8) {
				return 0, false
			}
			if b[at] == 'n' {
				_, end, ok := str(b, at)
				return end, ok
			}
			return fc.delta(b, at, &c)
		}
		return 0, false
	})
	c.nFrags = len(fc.frags) - c.frags
	fc.choices = append(fc.choices, c)
	return end, ok
}

func (fc *fastChunk) delta(b []byte, i int, c *fastChoice) (int, bool) {
	var seen uint16
	return rawjson.ObjectEach(b, i, func(key []byte, at int) (int, bool) {
		var dst *rawjson.Span
		var bit uint16
		switch string(key) {
		case "role":
			dst, bit = &c.role, 1
		case "content":
			dst, bit = &c.content, 2
		case "refusal":
			dst, bit = &c.refusal, 4
		case wireReasoningContent:
			dst, bit = &c.reasoningContent, 16
		case wireReasoning:
			dst, bit = &c.reasoning, 32
		case "tool_calls":
			if !once(&seen, 8) {
				return 0, false
			}
			if b[at] == 'n' {
				_, end, ok := str(b, at)
				return end, ok
			}
			return rawjson.ArrayEach(b, at, func(at int) (int, bool) { return fc.frag(b, at) })
		default:
			return 0, false
		}
		s, end, ok := str(b, at)
		*dst = s
		return end, ok && once(&seen, bit)
	})
}

func (fc *fastChunk) frag(b []byte, i int) (int, bool) {
	f := fastFrag{index: -1}
	var seen uint16
	end, ok := rawjson.ObjectEach(b, i, func(key []byte, at int) (int, bool) {
		switch string(key) {
		case "index":
			end, ok := scalar(b, at)
			if !ok || !once(&seen, 1) {
				return 0, false
			}
			if b[at] == 'n' {
				return end, true
			}
			n, ok := smallIndex(b[at:end])
			f.index = n
			return end, ok
		case "id":
			s, end, ok := str(b, at)
			f.id = s
			return end, ok && once(&seen, 2)
		case "type": // null or "function"; anything else is refused by the tree path
			end, ok := scalar(b, at)
			return end, ok && once(&seen, 4) && (string(b[at:end]) == `"function"` || string(b[at:end]) == "null")
		case "function":
			if !once(&seen, 8) {
				return 0, false
			}
			if b[at] == 'n' {
				_, end, ok := str(b, at)
				return end, ok
			}
			var fseen uint16
			return rawjson.ObjectEach(b, at, func(key []byte, at int) (int, bool) {
				var dst *rawjson.Span
				var bit uint16
				switch string(key) {
				case "name":
					dst, bit = &f.name, 1
				case "arguments":
					dst, bit = &f.args, 2
				default:
					return 0, false
				}
				s, end, ok := str(b, at)
				*dst = s
				return end, ok && once(&fseen, bit)
			})
		}
		return 0, false
	})
	fc.frags = append(fc.frags, f)
	return end, ok
}

// countsObject checks the object at b[i] whose values are strings,
// numbers, null or (depth > 1) such objects, with escape-free names, none
// repeated and at most maxFastMembers of them: the shape of a usage
// object. Anything else (a boolean, an array, more members) takes the
// tree path.
func countsObject(b []byte, i, depth int) (int, bool) {
	var keys [maxFastMembers][]byte
	n := 0
	return rawjson.ObjectEach(b, i, func(key []byte, at int) (int, bool) {
		if n == maxFastMembers {
			return 0, false
		}
		for _, k := range keys[:n] {
			if bytes.Equal(k, key) {
				return 0, false
			}
		}
		keys[n] = key
		n++
		if b[at] == '{' {
			if depth == 1 {
				return 0, false
			}
			return countsObject(b, at, depth-1)
		}
		return scalar(b, at)
	})
}

// maxFastMembers bounds the members of a fast usage object.
const maxFastMembers = 16

// smallIndex parses a tool-call index token made of digits only, up to
// maxToolCallIndex; anything else (-1, fractions, exponents, big values)
// takes the tree path.
func smallIndex(tok []byte) (int, bool) {
	if len(tok) == 0 || len(tok) > 6 || len(tok) > 1 && tok[0] == '0' {
		return 0, false
	}
	n := 0
	for _, c := range tok {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n <= maxToolCallIndex
}

// applyFast folds a scanned chunk in, with the effects add has on the
// same chunk.
func (a *assembler) applyFast(b []byte) {
	fc := &a.fast
	for k, s := range fc.meta {
		if s != (rawjson.Span{}) {
			a.fastMeta(b, k, s)
		}
	}
	if fc.obfuscation {
		a.replayable = false
	}
	for _, c := range fc.choices {
		if c.finish != (rawjson.Span{}) {
			s := string(a.unescape(b, c.finish))
			a.pc.ans.finish = &s
		}
		if c.role != (rawjson.Span{}) && string(a.unescape(b, c.role)) != "assistant" {
			a.replayable = false
		}
		// In deltaOrder: a reasoning channel is created on first sight.
		if c.reasoningContent != (rawjson.Span{}) {
			a.reasoningDelta(wireReasoningContent, wireReasoningContent+".text", a.unescape(b, c.reasoningContent))
		}
		if c.reasoning != (rawjson.Span{}) {
			a.reasoningDelta(wireReasoning, wireReasoning+".text", a.unescape(b, c.reasoning))
		}
		if c.content != (rawjson.Span{}) {
			a.pc.text.Write(a.unescape(b, c.content))
			a.pc.sawText = true
		}
		if c.refusal != (rawjson.Span{}) {
			a.pc.refusal.Write(a.unescape(b, c.refusal))
			a.pc.sawRefusal = true
		}
		for _, f := range fc.frags[c.frags : c.frags+c.nFrags] {
			a.fastFrag(b, f)
		}
	}
}

// unescape returns the text of the string token at s, in scratch space
// valid until the next call.
func (a *assembler) unescape(b []byte, s rawjson.Span) []byte {
	tok := b[s.Start:s.End]
	if bytes.IndexByte(tok, '\\') < 0 {
		return tok[1 : len(tok)-1]
	}
	a.scratch = rawjson.AppendUnescaped(a.scratch[:0], tok)
	return a.scratch
}

// reasoningDelta is reasoningText for a delta's text; id is member+".text",
// passed as a constant so that a lookup allocates nothing.
func (a *assembler) reasoningDelta(member, id string, text []byte) {
	pc := &a.pc
	i, ok := pc.reasoningAt[id]
	if !ok {
		pc.reasoningText(member, "text", "", true)
		i = pc.reasoningAt[id]
	}
	pc.reasoningB[i].Write(text)
}

// fastMeta is readMeta for metaKeys[k]'s raw string, number or null; a
// member already recorded, or one the gateway replaces, allocates
// nothing.
func (a *assembler) fastMeta(b []byte, k int, s rawjson.Span) {
	key := metaKeys[k]
	switch {
	case key == "id", key == "model", key == "system_fingerprint", a.metaSeen&(1<<k) != 0, b[s.Start] == 'n':
		return
	}
	if a.meta.checkMeta(key, b[s.Start:s.End], "chat.completion.chunk") {
		a.metaSeen |= 1 << k
	}
}

// fastFrag is toolCall for a scanned fragment.
func (a *assembler) fastFrag(b []byte, f fastFrag) {
	var id []byte
	if f.id != (rawjson.Span{}) {
		id = a.unescape(b, f.id)
	}
	idx := f.index
	if idx < 0 {
		idx, _ = a.callIndex(nil, string(id), "") // never fails for a missing index
	}
	acc := a.callAt(idx)
	if len(id) > 0 {
		if acc.ids == 0 || acc.id != string(id) {
			if acc.ids > 0 {
				a.replayable = false // clients keep the last id; the verdicted one is sent once
			}
			acc.id = string(id)
		}
		acc.ids++
	}
	if f.name != (rawjson.Span{}) {
		if name := a.unescape(b, f.name); len(name) > 0 {
			acc.name += string(name)
			acc.names++
			if acc.names > 1 {
				a.replayable = false // openai JS keeps the last fragment, openai-go the concatenation
			}
		}
	}
	if f.args != (rawjson.Span{}) {
		acc.args.Write(a.unescape(b, f.args))
	}
}
