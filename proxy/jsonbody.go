package proxy

import (
	"bytes"
	"errors"
	"net/http"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// decodeObject decodes a request body that must be one JSON object, with
// no duplicate members (two parsers could disagree on which one counts).
// The 400 it returns names what is wrong, never the offending text.
func decodeObject(body []byte) (map[string]any, error) {
	bad := func(msg string) error {
		return &apiError{status: http.StatusBadRequest, typ: typeInvalid, code: "invalid_request", message: msg}
	}
	if len(bytes.TrimLeft(body, " \t\r\n")) == 0 {
		return nil, bad("the body is empty: a JSON object is required")
	}
	tree, err := jsonvalue.DecodeStrict(body)
	switch {
	case errors.Is(err, jsonvalue.ErrInvalidString):
		return nil, bad("the body contains invalid UTF-8 or a lone surrogate escape")
	case errors.Is(err, jsonvalue.ErrDuplicateKey):
		return nil, bad("the body has an object with a duplicate member")
	case err != nil:
		return nil, bad("the body is not valid JSON")
	}
	obj, ok := tree.(map[string]any)
	if !ok {
		return nil, bad("the body must be a JSON object")
	}
	return obj, nil
}
