package chat

import (
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// Members an operator allows are projected as member parts and written
// back from the verdict; without the allowance they are removed.
func TestAllowedResponseMembers(t *testing.T) {
	body := `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi","x_citations":["` + secret + `"]},"finish_reason":"stop"}]}`
	allow := ResponseOptions{AllowMembers: []string{"x_citations"}}

	r, err := ParseResponse([]byte(body), allow)
	if err != nil {
		t.Fatal(err)
	}
	want := tree(t, `[{"type":"text","text":"hi"},{"type":"member","name":"x_citations","value":["`+secret+`"]}]`)
	if got := r.Project()["content"]; !jsonvalue.Equal(got, want) {
		t.Fatalf("content = %s", mustJSON(t, got))
	}
	if out, err := r.Release(nil); err != nil || string(out) != body {
		t.Errorf("an allowed, unchanged body must be released as it came: %s (%v)", out, err)
	}
	target := r.Project()
	target["content"].([]any)[1].(map[string]any)["value"] = []any{"[redacted]"}
	out, err := r.Release(target)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), secret) || !strings.Contains(string(out), `"x_citations":["[redacted]"]`) {
		t.Errorf("transformed body = %s", out)
	}

	plain, err := ParseResponse([]byte(body), ResponseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := plain.Project()["content"]; got != "hi" {
		t.Errorf("without the allowance content = %v", got)
	}
	if out, _ := plain.Release(nil); strings.Contains(string(out), "x_citations") {
		t.Errorf("an unknown member was released: %s", out)
	}

	sse := "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"x_citations\":\"a\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"x_citations\":\"b\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	st, err := ReadStream(strings.NewReader(sse), 1<<20, allow)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Response().Project()["content"]; !jsonvalue.Equal(got, tree(t, `[{"type":"member","name":"x_citations","value":"ab"}]`)) {
		t.Errorf("streamed content = %s", mustJSON(t, got))
	}
}
