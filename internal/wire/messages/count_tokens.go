package messages

import (
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/rawjson"
)

var (
	countTokensMembers       = rawjson.NewMemberSet("input_tokens", "context_management")
	countContextManagMembers = rawjson.NewMemberSet("original_input_tokens")
)

// CountTokensRelease checks a count_tokens answer and returns the bytes to
// release: {"input_tokens": n} with n a non-negative integer, and
// optionally context_management {original_input_tokens: n}. Anything else
// is an error wrapping wire.ErrResponseInvalid: the count carries no model
// text, so nothing else may ride along unmediated.
func CountTokensRelease(body []byte) ([]byte, error) {
	v, err := jsonvalue.DecodeStrict(body)
	if err != nil {
		return nil, &wire.ResponseError{Msg: "count_tokens body " + rawjson.DecodeProblem(err)}
	}
	obj, ok := v.(map[string]any)
	if !ok || countTokensMembers.UnknownIn(obj) {
		return nil, &wire.ResponseError{Msg: "count_tokens body must be {input_tokens, context_management?}"}
	}
	if _, ok := count(obj["input_tokens"]); !ok {
		return nil, &wire.ResponseError{Field: "input_tokens", Msg: "must be a non-negative integer"}
	}
	if cm, present := obj["context_management"]; present && cm != nil {
		m, ok := cm.(map[string]any)
		if !ok || countContextManagMembers.UnknownIn(m) {
			return nil, &wire.ResponseError{Field: "context_management", Msg: "must be {original_input_tokens}"}
		}
		if _, ok := count(m["original_input_tokens"]); !ok {
			return nil, &wire.ResponseError{Field: "context_management.original_input_tokens", Msg: "must be a non-negative integer"}
		}
	}
	return body, nil
}

// CountTokensRelease is the package function, for callers holding the
// surface.
func (s *Surface) CountTokensRelease(body []byte) ([]byte, error) { return CountTokensRelease(body) }
