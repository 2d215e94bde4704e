package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

// serverStateMessage is the refusal for server-side state.
const serverStateMessage = "uses server-side state the gateway cannot show the policy; a deployment can allow it with wire.responses.allow_server_state: true"

// Request is a validated Responses request. It keeps the body and the
// offsets of its members and input items, so UpstreamBody rewrites only
// what a verdict changed. It is immutable and safe for concurrent use.
type Request struct {
	surf    *Surface
	text    jsonvalue.Text // the body as bytes and as one string: the trees\' strings slice it
	root    rawjson.Span
	members []rawjson.Member
	// created is when the gateway accepted the request (Unix seconds): the
	// answer's created_at.
	created int64

	model  string
	stream bool

	// instr is the instructions member's projection (a system message), or
	// nil when the request has none.
	instr map[string]any
	// inputString: input is a string (one user message).
	inputString bool
	inputSpan   rawjson.Span
	items       []rawjson.Span // the input array's elements
	segs        []segment      // input, grouped into projected messages

	tools     []any
	toolNames []string
	params    map[string]any
	// callIDs are the call_ids of the input's function_call items, with
	// the index of their item.
	callIDs map[string]int
	// up holds, per input item, the bytes the upstream receives when they
	// differ from the client's (seals opened, logprobs removed); nil (or a
	// nil entry) keeps the client's bytes.
	up [][]byte
	// prevID is the previous_response_id the upstream receives (the seal
	// the client sent, opened), as a JSON string; nil when there is none.
	prevID []byte
	// prevOrig is that id as a string: an answer echoing it releases the
	// client's seal instead.
	prevOrig string
	// memo is the session's memo while the request is parsed (see
	// memo.go); nil after.
	memo wire.Memo
	// onePass: input's items are validated as they are read (see
	// parseRequestMemo); false after parsing.
	onePass bool
}

// segment is one projected message and the input items it came from (one
// item, or a run of consecutive function_call items).
type segment struct {
	msg   map[string]any
	first int // first item index
	n     int // number of items
	kind  itemKind
}

// parseRequest validates body and projects it.
func (s *Surface) parseRequest(body []byte) (*Request, error) {
	return s.parseRequestMemo(body, nil)
}

// parseRequestMemo is parseRequest reusing the input items memo kept
// (nil: none). With a memo it first tries the one-pass path: the body's
// members are validated but for input, whose array syntax and new items
// are checked as they are read, while an item memo kept (so from a valid
// body) is not checked again. Any doubt on that path (an error, an input
// that is not an array of items read from their bytes) takes the path
// that validates the whole body first and decides every refusal, so a
// request is accepted, and refused, exactly as without the memo.
func (s *Surface) parseRequestMemo(body []byte, memo wire.Memo) (*Request, error) {
	if memo != nil {
		if r, err := s.parse(body, memo, true); err == nil {
			return r, nil
		}
	}
	return s.parse(body, memo, false)
}

// errOnePass makes the one-pass path hand the body to the full one.
var errOnePass = errors.New("responses: the one-pass parse cannot decide")

// parse validates body and projects it, reusing memo's items (nil: none).
// With onePass the input member is validated as it is read (see
// parseRequestMemo) and any failure is errOnePass or another error that
// only means "take the full path".
func (s *Surface) parse(body []byte, memo wire.Memo, onePass bool) (*Request, error) {
	if onePass {
		root, ms, ok := rawjson.ScanRoot(body, "input")
		if !ok {
			return nil, errOnePass
		}
		return s.parseMembers(body, root, ms, memo, true)
	}
	// ScanRootValid validates the body and lists its members in one
	// allocation-free pass, in place of encoding/json.Valid plus a member
	// scan; when it says no, the Valid-first checks below decide the
	// error, so refusals are unchanged.
	root, ms, ok := rawjson.ScanRootValid(body)
	if !ok {
		if !json.Valid(body) {
			if len(bytes.TrimLeft(body, " \t\r\n")) == 0 {
				return nil, &wire.RequestError{Msg: "body is empty: a JSON object is required"}
			}
			return nil, &wire.RequestError{Msg: "body is not valid JSON"}
		}
		root = rawjson.RootSpan(body)
		if root.Kind(body) != '{' {
			return nil, &wire.RequestError{Msg: "body must be a JSON object"}
		}
		var err error
		if ms, err = rawjson.ScanObject(body, root); err != nil {
			return nil, &wire.RequestError{Msg: "body has a duplicate member"}
		}
	}
	return s.parseMembers(body, root, ms, memo, false)
}

// parseMembers projects the members ms of the object at root of body.
func (s *Surface) parseMembers(body []byte, root rawjson.Span, ms []rawjson.Member, memo wire.Memo, onePass bool) (*Request, error) {
	r := &Request{surf: s, text: jsonvalue.ShareText(body), root: root, members: ms, created: time.Now().Unix(), memo: memo, onePass: onePass}
	defer func() { r.memo, r.onePass = nil, false }()
	// The one-pass path counts input's items as it lists them (see
	// parseInputRaw).
	if !onePass && rawjson.ArrayLonger(body, ms, "input", s.maxMessages) {
		return nil, wire.TooManyMessages("input", s.maxMessages)
	}
	partial := false
	for _, m := range ms {
		spec := requestMemberByName[m.Key]
		if spec == nil {
			if err := r.parseExtra(s, m); err != nil {
				return nil, err
			}
			continue
		}
		if spec.treat == treatInput && !s.treeInput && m.Val.Kind(body) == '[' && r.parseInputRaw(m.Val) {
			continue // projected item by item, without a tree of the array
		}
		if onePass && spec.treat == treatInput {
			return nil, errOnePass // input unvalidated: the full path reads it
		}
		v, kept := r.memoMember(m.Val)
		if !kept {
			if rawjson.HasDuplicateKeys(body, m.Val) {
				return nil, &wire.RequestError{Field: spec.name, Msg: "has an object with a duplicate member"}
			}
			var err error
			if v, err = r.text.Decode(m.Val.Start, m.Val.End); err != nil {
				return nil, &wire.RequestError{Field: spec.name, Msg: rawjson.DecodeProblem(err)}
			}
			v = r.keepMember(m.Val, v)
		}
		if v == nil && spec.treat != treatModel && spec.treat != treatInput {
			continue // null means "not set"
		}
		if sub, msg := spec.problem(v, s.strict); msg != "" {
			return nil, &wire.RequestError{Field: spec.name + sub, Msg: msg}
		}
		stateUsed, err := r.parseKnown(s, spec, m.Val, v)
		if err != nil {
			return nil, err
		}
		partial = partial || stateUsed
	}
	switch {
	case r.model == "":
		return nil, &wire.RequestError{Field: "model", Msg: "is required"}
	case r.segs == nil && !r.inputString && r.instr == nil:
		return nil, &wire.RequestError{Field: "input", Msg: "is required"}
	}
	if partial {
		r.setParam("partial_context", true)
	}
	return r, nil
}

// parseKnown handles one known, non-null member; it reports whether the
// member uses server-side state.
func (r *Request) parseKnown(s *Surface, spec *requestMember, raw rawjson.Span, v any) (bool, error) {
	switch spec.treat {
	case treatModel:
		m, ok := v.(string)
		if !ok || m == "" {
			return false, &wire.RequestError{Field: "model", Msg: "must be a non-empty string"}
		}
		r.model = m
	case treatInput:
		return false, r.parseInput(raw, v)
	case treatInstructions:
		r.instr = map[string]any{"role": "system", "content": v}
	case treatTools:
		return r.parseTools(v.([]any), s.allowServerState)
	case treatStream:
		r.stream = v.(bool)
	case treatStreamOptions:
		opts := v.(map[string]any)
		if x, ok := opts["include_obfuscation"]; ok && x != nil {
			if _, ok := x.(bool); !ok {
				return false, &wire.RequestError{Field: "stream_options.include_obfuscation", Msg: "must be a boolean"}
			}
		}
		if spec.members.UnknownIn(opts) {
			r.setParam(spec.name, v) // members beyond the transport's are judged
		}
	case treatServerState:
		if b, ok := v.(bool); ok && !b {
			r.setParam(spec.name, v) // background: false uses no state
			return false, nil
		}
		if !s.allowServerState {
			return false, &wire.RequestError{Field: spec.name, Msg: serverStateMessage}
		}
		if spec.name == "previous_response_id" {
			if err := r.openPrevious(v.(string)); err != nil {
				return false, err
			}
		}
		r.setParam(spec.name, v)
		return true, nil
	default:
		if spec.name == "tool_choice" {
			if obj, ok := v.(map[string]any); ok {
				if known := toolChoiceMembers.CollisionIn(obj); known != "" {
					return false, &wire.RequestError{Field: "tool_choice", Msg: collisionMessage(known)}
				}
			}
		}
		r.setParam(spec.name, v)
	}
	return false, nil
}

var toolChoiceMembers = rawjson.NewMemberSet("type", "name", "mode", "tools", "server_label")

// openPrevious opens a previous_response_id: the gateway's seal of an
// upstream response id (answers carry sealed ids when server state is
// allowed).
func (r *Request) openPrevious(id string) error {
	orig, err := r.surf.keys.OpenString(kindResponseID, id)
	if err != nil {
		return wire.NotIssued("previous_response_id")
	}
	r.prevOrig = orig
	r.prevID = appendString(nil, orig)
	return nil
}

// parseExtra handles a member the gateway does not know: ambiguous under
// case folding, refused (strict, unless allowed), or judged: projected
// verbatim into model.params and forwarded.
func (r *Request) parseExtra(s *Surface, m rawjson.Member) error {
	if known := requestKnown.FoldsOnto(m.Key); known != "" {
		return &wire.RequestError{Msg: "body " + collisionMessage(known)}
	}
	if s.strict && !s.allowReq.Has(m.Key) {
		return unknownMemberError(m.Key)
	}
	field := safeField(m.Key)
	if rawjson.HasDuplicateKeys(r.text.Bytes(), m.Val) {
		return &wire.RequestError{Field: field, Msg: "has an object with a duplicate member"}
	}
	v, err := r.text.Decode(m.Val.Start, m.Val.End)
	if err != nil {
		return &wire.RequestError{Field: field, Msg: rawjson.DecodeProblem(err)}
	}
	r.setParam(m.Key, v)
	return nil
}

func (r *Request) setParam(name string, v any) {
	if r.params == nil {
		r.params = map[string]any{}
	}
	r.params[name] = v
}

// Model returns the requested model.
func (r *Request) Model() string { return r.model }

// Stream reports whether the client asked for a stream.
func (r *Request) Stream() bool { return r.stream }

// Operation returns wire.OpResponses.
func (r *Request) Operation() wire.Operation { return wire.OpResponses }

// ToolNames lists the function tools (namespace children included, under
// their projected names) in order.
func (r *Request) ToolNames() []string { return slices.Clone(r.toolNames) }

// Messages returns the normalized conversation: the instructions as a
// leading system message, then one message per input segment. The slice
// is the caller's; the message trees are the Request's, shared by every
// call, and must not be modified.
func (r *Request) Messages() []any {
	out := make([]any, 0, len(r.segs)+1)
	if r.instr != nil {
		out = append(out, r.instr)
	}
	for _, sg := range r.segs {
		out = append(out, sg.msg)
	}
	return out
}

// Tools returns [{name, description?, schema?}], or nil. The trees are
// shared and read-only, as with Messages.
func (r *Request) Tools() []any {
	if len(r.tools) == 0 {
		return nil
	}
	return slices.Clone(r.tools)
}

// Params returns model.params, or nil. With server-side state it holds
// partial_context: true. The map is the caller's; its values are shared
// and read-only, as with Messages.
func (r *Request) Params() map[string]any {
	if len(r.params) == 0 {
		return nil
	}
	return maps.Clone(r.params)
}

func fieldIndex(base string, i int) string { return base + "[" + strconv.Itoa(i) + "]" }
