package messages

import (
	"errors"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// TestAnswerValidityPaths: an answer is refused as not JSON exactly when
// encoding/json.Valid refuses it; a repeated key and bytes the decoder
// refuses fail with the member that holds them.
func TestAnswerValidityPaths(t *testing.T) {
	s := New(Options{})
	req := parseOK(t, s, answerRequest)
	if _, err := s.ParseResponse(req, []byte(answerJSON)); err != nil {
		t.Fatalf("valid answer: %v", err)
	}
	for _, tc := range []struct {
		name, body, field, msg string
	}{
		{"not JSON", answerJSON[:len(answerJSON)-1], "", "body is not valid JSON"},
		{"trailing data", answerJSON + "{}", "", "body is not valid JSON"},
		{"repeated key in content", strings.Replace(answerJSON, `"name":"Bash"`, `"name":"Bash","name":"Read"`, 1), "content", ""},
		{"invalid UTF-8", strings.Replace(answerJSON, `"Go 1.26 is out."`, "\"Go 1.26 \xff\"", 1), "content", ""},
	} {
		_, err := s.ParseResponse(req, []byte(tc.body))
		var re *wire.ResponseError
		if !errors.As(err, &re) || re.Field != tc.field || (tc.msg != "" && re.Msg != tc.msg) {
			t.Errorf("%s: %v, want a ResponseError at %q %q", tc.name, err, tc.field, tc.msg)
		}
	}
}
