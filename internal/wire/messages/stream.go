package messages

import (
	"io"
	"strconv"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/seal"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// Members known in each stream event object; an event holding any other
// member is not replayed (the stream is synthesized without it).
var eventMembers = map[string]rawjson.MemberSet{
	"message_start":       rawjson.NewMemberSet("type", "message"),
	"content_block_start": rawjson.NewMemberSet("type", "index", "content_block"),
	"content_block_delta": rawjson.NewMemberSet("type", "index", "delta"),
	"content_block_stop":  rawjson.NewMemberSet("type", "index"),
	"message_delta":       rawjson.NewMemberSet("type", "delta", "usage", "context_management"),
	"message_stop":        rawjson.NewMemberSet("type"),
	"ping":                rawjson.NewMemberSet("type"),
	"error":               rawjson.NewMemberSet("type", "error", "request_id"),
}

// messageDeltaMembers are the message members a message_delta may set.
var messageDeltaMembers = rawjson.NewMemberSet("stop_reason", "stop_sequence", "stop_details", "container")

// deltaTypes maps each content_block_delta type to its text member and
// the block types it may extend.
var deltaTypes = map[string]deltaSpec{
	"text_delta":       {"text", []string{"text"}},
	"input_json_delta": {"partial_json", []string{"tool_use", "server_tool_use", "mcp_tool_use"}},
	"thinking_delta":   {"thinking", []string{"thinking"}},
	"signature_delta":  {"signature", []string{"thinking"}},
	"citations_delta":  {"citation", []string{"text"}},
}

// deltaSpec is a delta type's text member and the block types it extends.
type deltaSpec struct {
	member string
	blocks []string
}

// fits reports whether a delta of this type may extend block b.
func (d deltaSpec) fits(b *sblock) bool {
	for _, t := range d.blocks {
		if b.obj["type"] == t {
			return true
		}
	}
	return false
}

// StreamEvents documents each stream event's treatment.
func StreamEvents() []MemberDoc {
	return []MemberDoc{
		{"message_start", "opens the message (exactly once, first); its message is the answer's metadata"},
		{"content_block_start", "opens block `index`, which must be the next index; tool_use input must be `{}` when input_json_delta follows"},
		{"content_block_delta", "extends an open block: text_delta, input_json_delta (the joined partial_json must be an object), thinking_delta, signature_delta (once, onto an empty signature: the SDKs disagree otherwise), citations_delta; a delta type that does not fit the block, or for a block not open, is refused; members a delta holds besides its type and its text member are removed (both SDKs assemble from that member alone) and the stream is synthesized without them"},
		{"content_block_stop", "closes an open block"},
		{"message_delta", "delta members stop_reason, stop_sequence, stop_details and container overwrite the message's; usage members overwrite usage's (as the SDKs accumulate); other members of the delta and of the event that name no member of a message are the message's own (judged as member parts; removed under " + UnknownMembersKey + ": refuse), the others removed; the assembled message's metadata is released as an answer's"},
		{"message_stop", "ends the stream; every block must be closed; later bytes are not read"},
		{"ping", "dropped"},
		{"(no event name)", "skipped, as both SDKs skip it; never released"},
		{"error", "the model call errored: ErrUpstreamEvent, nothing is released"},
		{"(any other type)", "read and not released, as both SDKs pass over events they do not know: the stream is synthesized without it"},
	}
}

// sblock is a block being assembled.
type sblock struct {
	obj      map[string]any
	open     bool
	text     strings.Builder // text, thinking or partial_json
	sig      strings.Builder
	cites    []any
	jsonIn   bool // input_json_delta seen
	exactIn  bool // the start's input was exactly {}
	textSeen bool
}

// assembler accumulates events as anthropic-sdk-go's Message.Accumulate
// and the TypeScript SDK's MessageStream do, refusing what they would
// read differently or ignore.
type assembler struct {
	s          *Surface
	ac         answerCtx
	msg        map[string]any
	blocks     []*sblock
	events     []eventRec
	extra      [][]byte // the data of the events no buffer holds (eventRec.buf)
	replayable bool
	// known: the event being applied holds only members the gateway
	// knows, on one data line (it may be replayed as it is).
	known bool
	n     int
	cur   []byte // the data of the event being applied
	// treeOnly turns the fast delta path off (tests); scratch holds the
	// unescaped text of a fast delta.
	treeOnly bool
	scratch  []byte
}

func (a *assembler) fail(msg string) error {
	return &wire.StreamError{Kind: wire.ErrResponseInvalid, Event: a.n, Detail: msg}
}

// handle applies one event; it reports message_stop.
func (a *assembler) handle(ev sseEvent) (bool, error) {
	a.n++
	if ev.name == "" {
		// Both SDKs skip events without an event name; so does the
		// gateway, and it never releases them.
		return false, nil
	}
	if !a.treeOnly {
		if ok, err := a.fastDelta(ev); ok {
			return false, err
		}
	}
	v, err := jsonvalue.DecodeStrict(ev.data)
	if err != nil {
		return false, a.fail("data " + rawjson.DecodeProblem(err))
	}
	obj, _ := v.(map[string]any)
	typ, _ := obj["type"].(string)
	known := eventMembers[typ]
	if known == nil {
		// An event type newer than the gateway: both SDKs pass over
		// events they do not know, so it is read and not released (the
		// stream is synthesized without it), not refused.
		a.known, a.replayable = false, false
		return false, nil
	}
	if ev.name != typ {
		return false, a.fail("its event name differs from its data type")
	}
	if typ == "error" {
		return false, &wire.StreamError{Kind: wire.ErrUpstreamEvent, Event: a.n}
	}
	if k := known.CollisionIn(obj); k != "" {
		return false, a.fail(collisionMessage(k))
	}
	a.known = !known.UnknownIn(obj) && !ev.multiLine
	if !a.known {
		a.replayable = false
	}
	if typ == "ping" {
		return false, nil
	}
	if a.msg == nil && typ != "message_start" {
		return false, a.fail("an event before message_start")
	}
	a.record(ev, typ, false)
	a.cur = ev.data
	if typ == "message_delta" && !a.s.strict {
		for k, v := range obj {
			if !known.Has(k) && !responseKnown.Has(k) {
				a.msg[k] = v // a message member the SDKs take from here: judged with the message
			}
		}
	}
	switch typ {
	case "message_start":
		return false, a.start(obj)
	case "content_block_start":
		return false, a.blockStart(obj)
	case "content_block_delta":
		return false, a.delta(obj)
	case "content_block_stop":
		b, err := a.openBlock(obj)
		if err != nil {
			return false, err
		}
		b.open = false
		return false, nil
	case "message_delta":
		return false, a.messageDelta(obj)
	}
	for _, b := range a.blocks {
		if b.open {
			return true, a.fail("message_stop with a block still open")
		}
	}
	return true, nil
}

func (a *assembler) start(obj map[string]any) error {
	if a.msg != nil {
		return a.fail("a second message_start")
	}
	m, ok := obj["message"].(map[string]any)
	if !ok {
		return a.fail("message_start without a message object")
	}
	a.msg = m
	content, _ := m["content"].([]any)
	if len(content) > 0 {
		a.replayable = false // the replayed message_start is the released message's, content empty
	}
	for _, e := range content {
		b, _ := e.(map[string]any)
		if b == nil {
			return a.fail("message_start content holds a non-object")
		}
		a.blocks = append(a.blocks, &sblock{obj: b})
	}
	return nil
}

func (a *assembler) index(obj map[string]any) (int, bool) {
	n, ok := count(obj["index"])
	return int(n), ok && n < 1<<31
}

func (a *assembler) blockStart(obj map[string]any) error {
	i, ok := a.index(obj)
	if !ok || i != len(a.blocks) {
		return a.fail("content_block_start for an index other than the next")
	}
	b, ok := obj["content_block"].(map[string]any)
	if !ok {
		return a.fail("content_block_start without a content_block object")
	}
	sb := &sblock{obj: b, open: true}
	sb.exactIn = startInputIsEmpty(a.cur)
	a.blocks = append(a.blocks, sb)
	a.events[len(a.events)-1].reseal = blockHoldsBlob(b)
	return nil
}

// blockHoldsBlob reports whether a block start carries a blob the gateway
// seals: a signature, redacted data, a citation's encrypted_index.
func blockHoldsBlob(b map[string]any) bool {
	switch b["type"] {
	case "thinking":
		return b["signature"] != ""
	case "redacted_thinking":
		return b["data"] != ""
	case "text":
		cites, _ := b["citations"].([]any)
		return len(cites) > 0
	}
	return false
}

func (a *assembler) openBlock(obj map[string]any) (*sblock, error) {
	i, ok := a.index(obj)
	return a.openBlockAt(i, ok)
}

// openBlockAt is openBlock for an index already read (ok: a valid one).
func (a *assembler) openBlockAt(i int, ok bool) (*sblock, error) {
	if !ok || i >= len(a.blocks) || !a.blocks[i].open {
		return nil, a.fail("an event for a block that is not open")
	}
	return a.blocks[i], nil
}

func (a *assembler) delta(obj map[string]any) error {
	b, err := a.openBlock(obj)
	if err != nil {
		return err
	}
	d, _ := obj["delta"].(map[string]any)
	dt, _ := d["type"].(string)
	spec, ok := deltaTypes[dt]
	if !ok {
		return a.fail("a delta type the gateway does not know")
	}
	if !spec.fits(b) {
		return a.fail("a delta that does not fit its block")
	}
	if _, ok := d[spec.member]; !ok {
		return a.fail("a delta without its " + spec.member)
	}
	if len(d) != 2 {
		// Members a delta gained after the gateway was written: both SDKs
		// assemble a block from its delta's known member alone, so the
		// rest is removed (the stream is synthesized without it), not
		// refused.
		a.known, a.replayable = false, false
	}
	val := d[spec.member]
	a.events[len(a.events)-1].reseal = dt == "citations_delta" || dt == "signature_delta"
	if dt == "citations_delta" {
		if _, ok := val.(map[string]any); !ok {
			return a.fail("a citation that is not an object")
		}
		b.cites = append(b.cites, val)
		return nil
	}
	s, ok := val.(string)
	if !ok {
		return a.fail("a delta whose text is not a string")
	}
	return a.textDelta(b, dt, []byte(s))
}

// textDelta extends block b by the text s of a delta of type dt (not
// citations_delta) that fits it.
func (a *assembler) textDelta(b *sblock, dt string, s []byte) error {
	switch dt {
	case "signature_delta":
		// anthropic-sdk-go appends signatures, the TypeScript SDK
		// replaces: only one signature, onto an empty one, reads alike.
		if prev, _ := b.obj["signature"].(string); prev != "" || b.sig.Len() > 0 {
			return a.fail("a second signature for one thinking block")
		}
		b.sig.Write(s)
	case "input_json_delta":
		if !b.exactIn {
			return a.fail("input_json_delta after a start whose input is not {}")
		}
		b.jsonIn = true
		b.text.Write(s)
	default:
		b.textSeen = true
		b.text.Write(s)
	}
	return nil
}

func (a *assembler) messageDelta(obj map[string]any) error {
	d, ok := obj["delta"].(map[string]any)
	if !ok {
		return a.fail("message_delta without a delta object")
	}
	for k, v := range d {
		// Other members are the message's own, judged with it, unless
		// they would overwrite one the delta does not set.
		if messageDeltaMembers.Has(k) || !a.s.strict && !responseKnown.Has(k) {
			a.msg[k] = v
		}
	}
	if u, ok := obj["usage"].(map[string]any); ok {
		mu, _ := a.msg["usage"].(map[string]any)
		if mu == nil {
			mu = map[string]any{}
			a.msg["usage"] = mu
		}
		for k, v := range u {
			mu[k] = v
		}
	} else if obj["usage"] != nil {
		return a.fail("message_delta usage is not an object")
	}
	if cm, ok := obj["context_management"]; ok {
		a.msg["context_management"] = cm
	}
	return nil
}

// message renders the assembled answer as a Message body.
func (a *assembler) message() ([]byte, error) {
	content := make([]any, len(a.blocks))
	for i, b := range a.blocks {
		o := b.obj
		switch o["type"] {
		case "text":
			if b.textSeen {
				prev, _ := o["text"].(string)
				o["text"] = prev + b.text.String()
			}
			if len(b.cites) > 0 {
				prev, _ := o["citations"].([]any)
				o["citations"] = append(prev, b.cites...)
			}
		case "thinking":
			if b.textSeen {
				prev, _ := o["thinking"].(string)
				o["thinking"] = prev + b.text.String()
			}
			if b.sig.Len() > 0 {
				prev, _ := o["signature"].(string)
				o["signature"] = prev + b.sig.String()
			}
		}
		if b.jsonIn && b.text.Len() > 0 {
			in, err := jsonvalue.DecodeStrict([]byte(b.text.String()))
			if _, obj := in.(map[string]any); err != nil || !obj {
				return nil, &wire.StreamError{Kind: wire.ErrResponseInvalid, Detail: "content block " + strconv.Itoa(i) + ": the streamed tool input is not a JSON object"}
			}
			o["input"] = in
		}
		content[i] = o
	}
	a.msg["content"] = content
	out, err := jsonvalue.Marshal(a.msg)
	if err != nil {
		return nil, &wire.StreamError{Kind: wire.ErrResponseInvalid, Detail: "the assembled message is not encodable"}
	}
	return out, nil
}

// Stream is a buffered, assembled Messages stream.
type Stream struct {
	resp       *Response
	events     []eventRec
	bufs       [][]byte // the buffers the events' data lies in
	extra      [][]byte // the data of the events no buffer holds
	buffered   int64
	replayable bool
}

func (s *Surface) readStream(r io.Reader, limit int64, ac answerCtx) (*Stream, error) {
	return s.readStreamMode(r, limit, ac, false)
}

// readStreamMode is readStream; treeOnly decodes every event as a tree
// (tests compare the fast path with it).
func (s *Surface) readStreamMode(r io.Reader, limit int64, ac answerCtx, treeOnly bool) (*Stream, error) {
	er := newEventReader(r, limit)
	a := &assembler{s: s, ac: ac, replayable: true, treeOnly: treeOnly}
	for {
		ev, err := er.next()
		if err != nil {
			return nil, err
		}
		done, err := a.handle(ev)
		if err != nil {
			return nil, err
		}
		if done {
			return a.stream(er.buffered(), er.buffers())
		}
	}
}

// stream parses the assembled answer once message_stop was handled;
// buffered is the bytes read, into bufs.
func (a *assembler) stream(buffered int64, bufs [][]byte) (*Stream, error) {
	body, err := a.message()
	if err != nil {
		return nil, err
	}
	resp, err := a.s.parseMessage(body, a.ac)
	if err != nil {
		return nil, &wire.StreamError{Kind: wire.ErrResponseInvalid, Detail: "the assembled message", Err: err}
	}
	return &Stream{resp: resp, events: a.events, bufs: bufs, extra: a.extra, buffered: buffered, replayable: a.replayable && resp.blocksClean}, nil
}

// Response implements wire.Stream.
func (st *Stream) Response() wire.Response { return st.resp }

// BufferedBytes implements wire.Stream.
func (st *Stream) BufferedBytes() int64 { return st.buffered }

// Release implements wire.Stream. When the target is the projection and
// every event held only known members, the upstream's own block events
// are replayed (pings dropped, each re-framed as event and data lines,
// blobs sealed) between a message_start and a message_delta rendered from
// the released message (the gateway's id, the request's model, the
// metadata as released); otherwise a stream is synthesized from the
// released message.
func (st *Stream) Release(target any) ([]byte, error) {
	if target == nil {
		target = st.resp.proj
	}
	if st.replayable && jsonvalue.Equal(target, st.resp.proj) {
		return st.replay()
	}
	body, err := st.resp.render(target)
	if err != nil {
		return nil, err
	}
	return synthesize(body)
}

// replay renders the upstream's block events between a message_start and
// a message_delta made of the released message's metadata.
func (st *Stream) replay() ([]byte, error) {
	r := st.resp
	top, err := r.metaPatch()
	if err != nil {
		return nil, err
	}
	// message_start: the released message, content empty, stop reason and
	// stop sequence null.
	top.Set("content", []byte("[]"))
	top.Set("stop_reason", []byte("null"))
	top.Set("stop_sequence", []byte("null"))
	start := top.Render()
	sms, _ := rawjson.ScanObject(start, rawjson.RootSpan(start)) // the gateway rendered it
	released := func(k string) []byte {
		ms, b := sms, start
		if k == "stop_reason" || k == "stop_sequence" {
			ms, b = r.top, r.body // released as the upstream sent them
		}
		if i := rawjson.Find(ms, k); i >= 0 {
			return b[ms[i].Val.Start:ms[i].Val.End]
		}
		return nil
	}
	// Sized up front: growing by appends would leave copies of a large
	// stream behind as garbage.
	n := 2*len(start) + 256
	for _, ev := range st.events {
		n += len("event: \ndata: \n\n") + len(recNames[ev.name]) + len(st.data(ev))
	}
	out := make([]byte, 0, n)
	out = append(out, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":"...)
	out = append(append(out, start...), "}\n\n"...)
	for _, ev := range st.events {
		data, name := st.data(ev), recNames[ev.name]
		switch name {
		case "message_start", "message_delta":
			continue
		case "message_stop":
			out = appendRawMessageDelta(out, released)
		}
		if ev.reseal {
			var err error
			if data, err = st.resp.s.resealEvent(data); err != nil {
				return nil, err
			}
		}
		out = appendEvent(out, name, data)
	}
	return out, nil
}

// appendRawMessageDelta appends the message_delta of the released message
// whose members val returns (nil when absent): stop_reason, stop_sequence,
// stop_details (null when absent: the SDKs take it from here) and
// container when present, the usage, and context_management when present.
func appendRawMessageDelta(out []byte, val func(string) []byte) []byte {
	orNull := func(b []byte) []byte {
		if b == nil {
			return []byte("null")
		}
		return b
	}
	out = append(out, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"...)
	out = append(out, orNull(val("stop_reason"))...)
	out = append(append(out, `,"stop_sequence":`...), orNull(val("stop_sequence"))...)
	out = append(append(out, `,"stop_details":`...), orNull(val("stop_details"))...)
	if c := val("container"); c != nil {
		out = append(append(out, `,"container":`...), c...)
	}
	out = append(out, `},"usage":`...)
	if u := val("usage"); u != nil {
		out = append(out, u...)
	} else {
		out = append(out, "{}"...)
	}
	if cm := val("context_management"); cm != nil {
		out = append(append(out, `,"context_management":`...), cm...)
	}
	return append(out, "}\n\n"...)
}

// resealEvent returns a block event's data with the blobs it carries
// sealed, every other byte kept: a block start's signature, redacted data
// or citations' encrypted_index, a signature_delta's signature, a
// citations_delta's citation's encrypted_index.
func (s *Surface) resealEvent(data []byte) ([]byte, error) {
	root := rawjson.RootSpan(data)
	ms, err := rawjson.ScanObject(data, root)
	if err != nil {
		return nil, &wire.StreamError{Kind: wire.ErrResponseInvalid, Detail: "an event to seal does not scan"}
	}
	for _, name := range []string{"content_block", "delta"} {
		if i := rawjson.Find(ms, name); i >= 0 && ms[i].Val.Kind(data) == '{' {
			inner, err := s.resealObject(data, ms[i].Val)
			if err != nil {
				return nil, err
			}
			top := rawjson.NewObjPatch(data, root, ms)
			top.Set(name, inner)
			return top.Render(), nil
		}
	}
	return data, nil
}

// resealObject returns the block or delta at span of data with its blobs
// sealed.
func (s *Surface) resealObject(data []byte, span rawjson.Span) ([]byte, error) {
	ms, err := rawjson.ScanObject(data, span)
	if err != nil {
		return nil, &wire.StreamError{Kind: wire.ErrResponseInvalid, Detail: "an event to seal does not scan"}
	}
	p := rawjson.NewObjPatch(data, span, ms)
	str := func(name string) (string, bool) {
		i := rawjson.Find(ms, name)
		if i < 0 {
			return "", false
		}
		v, err := rawjson.DecodeSpan(data, ms[i].Val)
		str, ok := v.(string)
		return str, err == nil && ok
	}
	sealMember := func(name string, kind seal.Kind) {
		if blob, ok := str(name); ok && blob != "" {
			p.Set(name, s.sealString(kind, blob))
		}
	}
	typ, _ := str("type")
	switch typ {
	case "thinking", "signature_delta":
		sealMember("signature", kindSignature)
	case "redacted_thinking":
		sealMember("data", kindRedactedData)
	case "citations_delta":
		if i := rawjson.Find(ms, "citation"); i >= 0 {
			c, err := s.resealCitation(data, ms[i].Val)
			if err != nil {
				return nil, err
			}
			p.Set("citation", c)
		}
	case "text":
		if i := rawjson.Find(ms, "citations"); i >= 0 && ms[i].Val.Kind(data) == '[' {
			spans := rawjson.ScanArray(data, ms[i].Val)
			elems := make([][]byte, len(spans))
			for j, cs := range spans {
				if elems[j], err = s.resealCitation(data, cs); err != nil {
					return nil, err
				}
			}
			p.Set("citations", rawjson.RenderArray(data, ms[i].Val, spans, elems))
		}
	}
	return p.Render(), nil
}

// resealCitation returns the citation at span of data with its
// encrypted_index sealed.
func (s *Surface) resealCitation(data []byte, span rawjson.Span) ([]byte, error) {
	v, err := rawjson.DecodeSpan(data, span)
	c, ok := v.(map[string]any)
	if err != nil || !ok {
		return nil, &wire.StreamError{Kind: wire.ErrResponseInvalid, Detail: "a citation to seal is not an object"}
	}
	raw, err := s.sealCitation(data, span, c, "citation")
	if err != nil {
		return nil, &wire.StreamError{Kind: wire.ErrResponseInvalid, Detail: "a citation to seal", Err: err}
	}
	if raw == nil {
		raw = data[span.Start:span.End]
	}
	return raw, nil
}

func appendEvent(out []byte, name string, data []byte) []byte {
	out = append(out, "event: "...)
	out = append(out, name...)
	out = append(out, "\ndata: "...)
	out = append(out, data...)
	return append(out, "\n\n"...)
}

// startInputIsEmpty reports whether a content_block_start's input is the
// exact text {}: anthropic-sdk-go replaces input by the streamed JSON only
// then (and appends to anything else), while the TypeScript SDK always
// replaces it, so only that start is read alike by both.
func startInputIsEmpty(data []byte) bool {
	root := rawjson.RootSpan(data)
	ms, err := rawjson.ScanObject(data, root)
	if err != nil {
		return false
	}
	i := rawjson.Find(ms, "content_block")
	if i < 0 || ms[i].Val.Kind(data) != '{' {
		return false
	}
	bs, err := rawjson.ScanObject(data, ms[i].Val)
	if err != nil {
		return false
	}
	j := rawjson.Find(bs, "input")
	return j >= 0 && string(data[bs[j].Val.Start:bs[j].Val.End]) == "{}"
}

// eventRec is an event the assembler keeps for replay: its name (an
// index into recNames), whether it carries a blob the gateway seals
// before replaying it, and where its data lies: in the buffer numbered
// buf (see dataAt), or in extra[-buf-1] when buf is negative. It holds no
// pointer: a long stream's events cost the collector nothing to scan,
// and growing their list copies a third of what sseEvents would.
type eventRec struct {
	name       uint8
	reseal     bool
	buf        int32
	start, end int32
}

// recNames are the names of the events the assembler may keep: those of
// eventMembers (a test holds them equal), the only ones handle keeps.
var recNames = []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop", "ping", "error"}

// recName returns name's index in recNames; a name not there is a bug.
func recName(name string) uint8 {
	for i, n := range recNames {
		if n == name {
			return uint8(i)
		}
	}
	panic("messages: an event the assembler does not keep: " + name)
}

// record keeps ev, named name, for replay.
func (a *assembler) record(ev sseEvent, name string, reseal bool) {
	r := eventRec{name: recName(name), reseal: reseal, buf: ev.at.buf - 1, start: ev.at.start, end: ev.at.end}
	if ev.at.buf == 0 {
		a.extra = append(a.extra, ev.data)
		r.buf = -int32(len(a.extra))
	}
	a.events = append(a.events, r)
}

// data returns the data of the kept event ev.
func (st *Stream) data(ev eventRec) []byte {
	if ev.buf < 0 {
		return st.extra[-ev.buf-1]
	}
	return st.bufs[ev.buf][ev.start:ev.end]
}
