package responses

import (
	"errors"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// TestResponseValidityPaths: an answer is refused as not JSON exactly
// when encoding/json.Valid refuses it, and a repeated key at any depth
// and bytes the decoder refuses each fail with the member that holds
// them, as they always did.
func TestResponseValidityPaths(t *testing.T) {
	s := New(Options{Seal: testKeys})
	req := mustParse(t, s, codexRequest)
	if _, err := s.ParseResponse(req, []byte(jsonAnswer)); err != nil {
		t.Fatalf("valid answer: %v", err)
	}
	for _, tc := range []struct {
		name, body, field, msg string
	}{
		{"not JSON", jsonAnswer[:len(jsonAnswer)-1], "", "body is not valid JSON"},
		{"trailing data", jsonAnswer + "{}", "", "body is not valid JSON"},
		{"repeated key in output", strings.Replace(jsonAnswer, `"text":"hello"`, `"text":"hello","text":"bye"`, 1), "output", "has an object with a duplicate member"},
		{"repeated top-level key", strings.Replace(jsonAnswer, `"status":"completed"`, `"status":"completed","status":"completed"`, 1), "", "has a duplicate member"},
		{"invalid UTF-8", strings.Replace(jsonAnswer, `"text":"hello"`, "\"text\":\"hel\xfflo\"", 1), "output", ""},
	} {
		_, err := s.ParseResponse(req, []byte(tc.body))
		var re *wire.ResponseError
		if !errors.As(err, &re) || re.Field != tc.field || (tc.msg != "" && re.Msg != tc.msg) {
			t.Errorf("%s: %v, want a ResponseError at %q %q", tc.name, err, tc.field, tc.msg)
		}
	}
}
