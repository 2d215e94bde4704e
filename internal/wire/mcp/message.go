// Package mcp reads and writes the messages of the Model Context Protocol
// as the gateway mediates them: one JSON-RPC message per POST body, the
// projection of a request into a tool call (tools/call under its tool's
// name, every other method under its method name) and of its answer into
// a tool result, the verdicted result written back, the standard headers
// of the 2026-07-28 revision, and the server-sent events a server may
// answer with.
//
// Nothing here trusts a message's shape: messages are decoded strictly
// (duplicate members refused), every member is named by the projection
// or refused, and what reaches the client is built from verdicted values.
package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// JSON-RPC error codes the gateway answers with.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeHeaderMismatch is the 2026-07-28 revision's code for standard
	// headers that disagree with the body (SEP-2575).
	CodeHeaderMismatch = -32020
	// CodeUnsupportedProtocolVersion is the 2026-07-28 revision's answer
	// to a revision the server does not speak; its data lists those it
	// does (SEP-2575).
	CodeUnsupportedProtocolVersion = -32022
	// CodeDenied answers a request a verdict blocked where the method has
	// no error-carrying result (every method but tools/call).
	CodeDenied = -32003
	// CodeUnavailable answers a request the gateway could not mediate
	// (server unreachable, session store down): it failed closed.
	CodeUnavailable = -32002
)

// Kind tells the three JSON-RPC message kinds apart.
type Kind int

const (
	// Request has a method and an id: it expects an answer.
	Request Kind = iota + 1
	// Notification has a method and no id.
	Notification
	// Response has an id and a result or an error.
	Response
)

// Message is one decoded JSON-RPC 2.0 message.
type Message struct {
	Kind Kind
	// ID is a request's or response's id: a string or a json.Number
	// holding an integer.
	ID any
	// Method is a request's or notification's method.
	Method string
	// Params is a request's or notification's params (nil when absent).
	Params map[string]any
	// Result is a response's result; Error its error.
	Result map[string]any
	Error  *RPCError
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int64
	Message string
	Data    any // absent when nil
}

// Error makes a *RPCError an error.
func (e *RPCError) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }

// Errorf is a JSON-RPC error with code and a formatted message.
func Errorf(code int64, format string, args ...any) *RPCError {
	return &RPCError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrBatch refuses a JSON array body: batches were removed from MCP in
// the 2025-06-18 revision, and no later revision brought them back.
var ErrBatch = errors.New("a JSON-RPC batch (an array body) is not accepted: send one message per request (MCP 2025-06-18 and later)")

// Parse decodes one JSON-RPC message. A problem comes back as an
// *RPCError naming what is wrong (never the offending text).
func Parse(body []byte) (*Message, error) {
	tree, err := jsonvalue.DecodeStrict(body)
	switch {
	case errors.Is(err, jsonvalue.ErrDuplicateKey):
		return nil, Errorf(CodeParseError, "the message has an object with a duplicate member")
	case errors.Is(err, jsonvalue.ErrInvalidString):
		return nil, Errorf(CodeParseError, "the message contains invalid UTF-8 or a lone surrogate escape")
	case err != nil:
		return nil, Errorf(CodeParseError, "the body is not valid JSON")
	}
	if _, ok := tree.([]any); ok {
		return nil, &RPCError{Code: CodeInvalidRequest, Message: ErrBatch.Error()}
	}
	obj, ok := tree.(map[string]any)
	if !ok {
		return nil, Errorf(CodeInvalidRequest, "the body must be a JSON-RPC message object")
	}
	return fromObject(obj)
}

// FromObject reads one decoded message (an element of a server's stream,
// say).
func fromObject(obj map[string]any) (*Message, error) {
	if v, _ := obj["jsonrpc"].(string); v != "2.0" {
		return nil, Errorf(CodeInvalidRequest, `jsonrpc must be "2.0"`)
	}
	for k := range obj {
		switch k {
		case "jsonrpc", "id", "method", "params", "result", "error":
		default:
			// The name is not quoted: it is the peer's text, and errors
			// reach logs and the other party.
			return nil, Errorf(CodeInvalidRequest, "a JSON-RPC message has a member besides jsonrpc, id, method, params, result and error")
		}
	}
	m := &Message{}
	id, hasID := obj["id"]
	if hasID {
		if err := CheckID(id); err != nil {
			return nil, err
		}
		m.ID = id
	}
	method, hasMethod := obj["method"]
	_, hasResult := obj["result"]
	_, hasError := obj["error"]
	switch {
	case hasMethod:
		s, ok := method.(string)
		if !ok || s == "" {
			return nil, Errorf(CodeInvalidRequest, "method must be a non-empty string")
		}
		if hasResult || hasError {
			return nil, Errorf(CodeInvalidRequest, "a request has no result or error")
		}
		m.Method, m.Kind = s, Notification
		if hasID {
			m.Kind = Request
		}
		if p, ok := obj["params"]; ok {
			if m.Params, ok = p.(map[string]any); !ok {
				return nil, Errorf(CodeInvalidParams, "params must be an object")
			}
		}
	case hasResult == hasError:
		return nil, Errorf(CodeInvalidRequest, "a message needs a method, or exactly one of result and error")
	default:
		if !hasID {
			return nil, Errorf(CodeInvalidRequest, "a response needs an id")
		}
		if _, ok := obj["params"]; ok {
			return nil, Errorf(CodeInvalidRequest, "a response has no params")
		}
		m.Kind = Response
		if hasResult {
			r, ok := obj["result"].(map[string]any)
			if !ok {
				return nil, Errorf(CodeInvalidRequest, "result must be an object")
			}
			m.Result = r
		} else {
			e, err := readError(obj["error"])
			if err != nil {
				return nil, err
			}
			m.Error = e
		}
	}
	return m, nil
}

// CheckID accepts the ids MCP allows: a string, or an integer.
func CheckID(id any) error {
	switch v := id.(type) {
	case string:
		return nil
	case json.Number:
		if _, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return nil
		}
	}
	return Errorf(CodeInvalidRequest, "id must be a string or an integer")
}

func readError(v any) (*RPCError, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, Errorf(CodeInvalidRequest, "error must be an object")
	}
	n, ok := obj["code"].(json.Number)
	code, err := strconv.ParseInt(string(n), 10, 64)
	if !ok || err != nil {
		return nil, Errorf(CodeInvalidRequest, "error.code must be an integer")
	}
	msg, ok := obj["message"].(string)
	if !ok {
		return nil, Errorf(CodeInvalidRequest, "error.message must be a string")
	}
	return &RPCError{Code: code, Message: msg, Data: obj["data"]}, nil
}

// RelayedCode is the error code a client receives for a server's code:
// JSON-RPC's reserved range (-32768 to -32000, which holds the protocol's
// and MCP's codes) as it is; any other integer, which a server is free to
// fill with anything, becomes -32603 (internal error).
func RelayedCode(code int64) int64 {
	if code >= -32768 && code <= -32000 {
		return code
	}
	return CodeInternalError
}

// maxRevisions bounds the revisions VersionData passes on: a server
// supports a handful, and an unbounded list of dates would be a channel
// from the server to the client that no verdict judges.
const maxRevisions = 16

// VersionData is the data a client may receive with an
// CodeUnsupportedProtocolVersion error: rebuilt from the server's, and
// only when that holds revisions alone (real calendar dates, at most
// maxRevisions), since clients negotiate with it; nil otherwise.
func VersionData(code int64, data any) map[string]any {
	obj, ok := data.(map[string]any)
	if code != CodeUnsupportedProtocolVersion || !ok {
		return nil
	}
	list, _ := obj["supported"].([]any)
	if len(list) > maxRevisions {
		return nil
	}
	supported := make([]any, 0, len(list))
	for _, v := range list {
		s, ok := v.(string)
		if !ok || !IsRevision(s) {
			return nil
		}
		supported = append(supported, s)
	}
	out := map[string]any{"supported": supported}
	if r, ok := obj["requested"].(string); ok && IsRevision(r) {
		out["requested"] = r
	}
	return out
}

// IsRevision reports whether s is an MCP revision: a real calendar date
// such as 2025-11-25. Digits merely shaped as one (9999-99-99) are not,
// so no header or error data the gateway passes on can spell anything
// else.
func IsRevision(s string) bool {
	if len(s) != len(time.DateOnly) {
		return false
	}
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// IsSessionID reports whether s can be an MCP session id (the value of
// Mcp-Session-Id): 1 to 256 bytes of visible ASCII (0x21 to 0x7E).
func IsSessionID(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// IDString is an id as a tool call carries it: a string as it is, an
// integer in decimal.
func IDString(id any) string {
	switch v := id.(type) {
	case string:
		return v
	case json.Number:
		return string(v)
	}
	return ""
}

// SameID reports whether two ids are the same id (by type and value).
func SameID(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		i, err1 := strconv.ParseInt(string(x), 10, 64)
		j, err2 := strconv.ParseInt(string(y), 10, 64)
		return err1 == nil && err2 == nil && i == j
	}
	return false
}

// ResultBody renders a response carrying result to the request id.
func ResultBody(id any, result map[string]any) ([]byte, error) {
	return jsonvalue.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

// ErrorBody renders a response carrying e to the request id (null when
// the request's id could not be read).
func ErrorBody(id any, e *RPCError) []byte {
	obj := map[string]any{"code": json.Number(strconv.FormatInt(e.Code, 10)), "message": e.Message}
	if e.Data != nil {
		obj["data"] = e.Data
	}
	b, err := jsonvalue.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": obj})
	if err != nil { // data that cannot be written: the error without it
		delete(obj, "data")
		b, _ = jsonvalue.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": obj})
	}
	return b
}

// RequestBody renders a request or notification (id nil) with params.
func RequestBody(id any, method string, params map[string]any) ([]byte, error) {
	obj := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != nil {
		obj["id"] = id
	}
	if params != nil {
		obj["params"] = params
	}
	return jsonvalue.Marshal(obj)
}
