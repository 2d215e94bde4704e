package chat

import (
	"bytes"
	"net/url"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// TestCheckedBodyIsCheckAndRender: the chat request's CheckedBody fails
// exactly where CheckMessages does, with its error, and otherwise is the
// body UpstreamBody renders for the target.
func TestCheckedBodyIsCheckAndRender(t *testing.T) {
	body := []byte(`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"hi","name":"n"}],"stream":true}`)
	parsed, err := New(Options{}).ParseRequest(body, url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	bc, ok := parsed.(wire.BodyChecker)
	if !ok {
		t.Fatal("the chat request is no wire.BodyChecker")
	}
	targets := []any{
		[]any{map[string]any{"role": "user", "content": "redacted"}},
		[]any{map[string]any{"role": "system", "content": "s"}, map[string]any{"role": "user", "content": "hi", "name": "n"}},
		[]any{},
		[]any{map[string]any{"role": 7, "content": "x"}},
		[]any{map[string]any{"role": "user"}},
		[]any{map[string]any{"role": "user", "content": "x", "Content": "y"}},
		"not a list",
	}
	for i, target := range targets {
		got, gotErr := bc.CheckedBody(target)
		checkErr := parsed.CheckMessages(target)
		if (gotErr == nil) != (checkErr == nil) || gotErr != nil && gotErr.Error() != checkErr.Error() {
			t.Fatalf("target %d: CheckedBody error %v, CheckMessages %v", i, gotErr, checkErr)
		}
		if gotErr != nil {
			continue
		}
		want, err := parsed.UpstreamBody(target)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("target %d: CheckedBody %s, UpstreamBody %s (%v)", i, got, want, err)
		}
	}
}

// TestValidateMessagesAllocatesNothingPerMessage: the write-back check
// of a valid conversation, which every transformed turn runs over the
// whole history, allocates as much for 500 messages as for 5 (the path
// of a problem is made for an error only).
func TestValidateMessagesAllocatesNothingPerMessage(t *testing.T) {
	allocs := func(n int) float64 {
		list := make([]any, n)
		for i := range list {
			list[i] = map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "line"}}}
		}
		return testing.AllocsPerRun(20, func() {
			if err := ValidateMessages(list); err != nil {
				t.Fatal(err)
			}
		})
	}
	if few, many := allocs(5), allocs(500); many != few {
		t.Fatalf("%v allocations per check of 500 valid messages, %v of 5", many, few)
	}
}
