package responses

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// Stream is an upstream event stream read through its terminal event and
// assembled. It is immutable and safe for concurrent use.
type Stream struct {
	buffered int64
	resp     *Response
}

// progressEvents carry no text: {type, sequence_number, item_id,
// output_index}.
var progressEvents = map[string]bool{
	"response.web_search_call.in_progress": true, "response.web_search_call.searching": true, "response.web_search_call.completed": true,
	"response.file_search_call.in_progress": true, "response.file_search_call.searching": true, "response.file_search_call.completed": true,
	"response.code_interpreter_call.in_progress": true, "response.code_interpreter_call.interpreting": true, "response.code_interpreter_call.completed": true,
	"response.image_generation_call.in_progress": true, "response.image_generation_call.generating": true, "response.image_generation_call.completed": true,
	"response.mcp_call.in_progress": true, "response.mcp_call.completed": true, "response.mcp_list_tools.in_progress": true, "response.mcp_list_tools.completed": true,
}

// StreamEvents documents the treatment of each stream event type. The
// events released to the client are all synthesized from the verdicted
// response object (see Stream.Release); upstream events are read to
// assemble and check the answer.
func StreamEvents() []MemberDoc {
	return []MemberDoc{
		{"response.created, response.in_progress, response.queued", "checked: the response snapshot must have an empty output"},
		{"response.output_item.added", "checked: output_index must be the next one"},
		{"response.output_item.done", "projected: the authoritative item (Codex reads items here)"},
		{"response.content_part.added, response.content_part.done", "checked against the assembled part: a done part's text must equal its deltas, else 502"},
		{"response.output_text.delta, response.output_text.done, response.output_text.annotation.added", "assembled; deltas must equal the done text and the done item, else 502; annotations are judged in the done item"},
		{"response.refusal.delta, response.refusal.done", "assembled; as output text"},
		{"response.function_call_arguments.delta, response.function_call_arguments.done", "assembled; must equal the done item's arguments, else 502"},
		{"response.reasoning_summary_part.added, response.reasoning_summary_part.done, response.reasoning_summary_text.delta, response.reasoning_summary_text.done", "assembled; must equal the done item's summary, else 502"},
		{"response.reasoning_text.delta, response.reasoning_text.done", "assembled; must equal the done item's content, else 502"},
		{"response.code_interpreter_call_code.delta, response.code_interpreter_call_code.done", "assembled; must equal the done item's code, else 502"},
		{"response.image_generation_call.partial_image", "read (a preview no verdict covers); not released"},
		{"hosted-tool progress (response.web_search_call.*, file_search_call.*, code_interpreter_call.*, image_generation_call.*, mcp_call.*, mcp_list_tools.*)", "checked (it must address an added item); not released"},
		{"response.completed, response.incomplete", "terminal: its response object is parsed like a JSON answer; a non-empty output must equal the done items, else 502"},
		{"response.failed, error", "upstream error (ErrUpstreamEvent)"},
		{"any other", "read and not released: the done items and the terminal object carry the answer; refused (502) when the surface is strict"},
	}
}

// readStream reads r through the terminal event, at most limit bytes: the
// incremental reader's loop, run to the end without watching for plain
// text.
func (s *Surface) readStream(req *Request, r io.Reader, limit int64) (*Stream, error) {
	var rd streamReader
	rd.init(s, req, r, limit, false)
	for {
		done, err := rd.Next()
		if err != nil {
			return nil, err
		}
		if done {
			return rd.st, nil
		}
	}
}

// feed parses the complete lines of buf from *pos until one event has
// been dispatched or the complete lines run out; it reports whether the
// event was the terminal one.
func (a *assembler) feed(buf []byte, pos *int, eof bool) (bool, error) {
	events := a.events
	for *pos < len(buf) && a.events == events {
		if a.skipLF { // the CR that ended the last line was the buffer's last byte
			a.skipLF = false
			if buf[*pos] == '\n' {
				*pos++
				continue
			}
		}
		rest := buf[*pos:]
		i := wire.LineEnd(rest)
		var line []byte
		switch {
		case i < 0 && !eof:
			return false, nil
		case i < 0:
			line, *pos = rest, len(buf)
		default:
			line = rest[:i]
			*pos += i + 1
			if rest[i] == '\r' {
				if i+1 == len(rest) {
					a.skipLF = true
				} else if rest[i+1] == '\n' {
					*pos++
				}
			}
		}
		done, err := a.line(line)
		if err != nil || done {
			return done, err
		}
	}
	if eof && *pos >= len(buf) && len(a.data) > 0 && a.events == events {
		return a.dispatch()
	}
	return false, nil
}

func (a *assembler) line(l []byte) (bool, error) {
	if len(l) == 0 {
		return a.dispatch()
	}
	if l[0] == ':' {
		return false, nil
	}
	field, value, _ := bytes.Cut(l, []byte(":"))
	if len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	switch string(field) {
	case "data":
		if a.hasData {
			a.data = append(a.data, '\n')
		}
		a.data, a.hasData = append(a.data, value...), true
	case "event":
		a.evType = append(a.evType[:0], value...)
	}
	return false, nil
}

// assembler builds the answer from events as the official clients do.
type assembler struct {
	surface *Surface
	req     *Request
	// ids are the answer's released ids: the incremental head names the
	// response and the message before the terminal object is read.
	ids *answerIDs
	// data is the event's data so far; hasData reports whether a data
	// line was seen since the last dispatch (data may be empty). Its
	// buffer is reused from event to event, except for the terminal
	// event's, which final keeps.
	data    []byte
	hasData bool
	evType  []byte // the event's name, empty when it has none (reused too)
	scratch []byte // an unescaped delta (the fast path's)
	noFast  bool   // every event takes the tree path (tests compare both)
	events  int    // the events dispatched (their data is not kept: the client's are synthesized)
	skipLF  bool   // a CR ended the last line: a LF next is part of it
	// watch enables plain, the plain-text tracking of OpenStream.
	watch   bool
	plain   plainWatch
	lastSeq int64
	items   []*streamItem
	final   []byte // the terminal event's data
	// finalOutput is the output member of final's response object, as
	// decoded with the whole event (nil when it has none).
	finalOutput any
}

// streamItem is one output item under assembly.
type streamItem struct {
	id    string
	typ   string
	done  any // the output_item.done item, decoded
	texts map[textKey]*strings.Builder
}

// textKey names one text of an item under assembly: a content part
// ('c', its content index), a summary entry ('s', its summary index), or
// the arguments or code ('a').
type textKey struct {
	list byte
	n    int
}

func (it *streamItem) text(key textKey) *strings.Builder {
	if it.texts == nil {
		it.texts = map[textKey]*strings.Builder{}
	}
	b := it.texts[key]
	if b == nil {
		b = &strings.Builder{}
		it.texts[key] = b
	}
	return b
}

// invalid is a 502 for event n.
func (a *assembler) invalid(msg string) error {
	return &wire.StreamError{Kind: wire.ErrResponseInvalid, Event: a.events, Err: &wire.ResponseError{Msg: msg}}
}

// dispatch handles one complete event.
func (a *assembler) dispatch() (bool, error) {
	if len(a.data) == 0 {
		a.evType = a.evType[:0]
		return false, nil
	}
	data, evType := a.data, a.evType
	a.data, a.hasData, a.evType = data[:0], false, evType[:0]
	a.events++
	if string(evType) == "error" {
		return false, &wire.StreamError{Kind: wire.ErrUpstreamEvent, Event: a.events}
	}
	if ok, err := a.fastDelta(data, evType); ok {
		return false, err
	}
	done, err := a.treeEvent(data, evType)
	if done {
		a.data = nil // final keeps the terminal event's data
	}
	return done, err
}

// treeEvent decodes one event's data into a value tree and applies it.
func (a *assembler) treeEvent(data, evType []byte) (bool, error) {
	obj, ok := a.lightEvent(data, evType)
	if !ok {
		v, err := jsonvalue.DecodeStrict(data)
		if err != nil {
			return false, a.invalid("event data " + rawjson.DecodeProblem(err))
		}
		if obj, ok = v.(map[string]any); !ok {
			return false, a.invalid("event data must be an object")
		}
	}
	typ, _ := obj["type"].(string)
	if len(evType) > 0 && string(evType) != typ {
		return false, a.invalid("event name and data type disagree")
	}
	if typ == "error" || typ == "response.failed" || obj["error"] != nil {
		return false, &wire.StreamError{Kind: wire.ErrUpstreamEvent, Event: a.events}
	}
	seq, ok := obj["sequence_number"].(json.Number)
	n, perr := strconv.ParseInt(string(seq), 10, 64)
	if !ok || perr != nil || n <= a.lastSeq {
		return false, a.invalid("sequence_number must be an increasing integer")
	}
	a.lastSeq = n
	done, err := a.handle(typ, obj, data)
	if err == nil && a.watch {
		a.plain.observe(a, typ, obj)
	}
	return done, err
}
