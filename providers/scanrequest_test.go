package providers

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestScanRequestAgreesWithDecoding: on request bodies with and without
// each member, of the right and wrong types, scanRequest reads what
// encoding/json decodes into the two fields (keys matched exactly), and
// refuses what it refuses.
func TestScanRequestAgreesWithDecoding(t *testing.T) {
	bodies := []string{
		`{"model":"gpt-4o","messages":[]}`,
		`{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
		`{"stream":false,"model":"m"}`,
		` {"model":null,"stream":null} `,
		`{"model":"gpt-\u0034o","stream":true}`,
		`{"messages":[{"stream":true,"model":"inner"}]}`,
		`{"model":7}`,
		`{"model":"m","stream":"true"}`,
		`{"model":"m","stream":1}`,
		`{"model":["m"]}`,
		`[]`,
		`{"model":"m"`,
		`{"model":"m"} x`,
		``,
		`{"model":"m","stream":tru}`,
	}
	for _, b := range bodies {
		var want struct {
			Model  *string `json:"model"`
			Stream *bool   `json:"stream"`
		}
		wantErr := json.Unmarshal([]byte(b), &want) != nil
		got, err := scanRequest([]byte(b))
		if (err != nil) != wantErr {
			t.Errorf("%s: error %v, encoding/json refuses: %v", b, err, wantErr)
			continue
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidRequest) {
				t.Errorf("%s: error %v does not wrap ErrInvalidRequest", b, err)
			}
			continue
		}
		if want.Model != nil && got.Model != *want.Model || want.Model == nil && got.Model != "" {
			t.Errorf("%s: model %q", b, got.Model)
		}
		if want.Stream != nil && got.Stream != *want.Stream || want.Stream == nil && got.Stream {
			t.Errorf("%s: stream %v", b, got.Stream)
		}
	}
	// Keys are matched exactly (encoding/json would fold case), and a
	// repeated key is refused (encoding/json would keep the last).
	for _, b := range []string{`{"Stream":true,"MODEL":"m"}`} {
		if got, err := scanRequest([]byte(b)); err != nil || got.Stream || got.Model != "" {
			t.Errorf("%s: got %+v, %v; want nothing read", b, got, err)
		}
	}
	if _, err := scanRequest([]byte(`{"stream":false,"stream":true}`)); err == nil {
		t.Error("a repeated key was accepted")
	}
}
