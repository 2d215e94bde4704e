package chat

import (
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// Members the gateway does not know are projected as member parts (judge
// mode) and written back from the verdict; in strict mode they are
// removed unless the operator allows them.
func TestAllowedResponseMembers(t *testing.T) {
	body := `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi","x_citations":["` + secret + `"]},"finish_reason":"stop"}]}`
	judge := ResponseOptions{id: "c", Model: "m"}
	allow := ResponseOptions{id: "c", Model: "m", StrictMembers: true, AllowMembers: []string{"x_citations"}}
	strict := ResponseOptions{id: "c", Model: "m", StrictMembers: true}

	for _, opts := range []ResponseOptions{judge, allow} {
		r, err := ParseResponse([]byte(body), opts)
		if err != nil {
			t.Fatal(err)
		}
		want := tree(t, `[{"type":"text","text":"hi"},{"type":"member","name":"x_citations","value":["`+secret+`"]}]`)
		if got := r.Project()["content"]; !jsonvalue.Equal(got, want) {
			t.Fatalf("content = %s", mustJSON(t, got))
		}
		if out, err := r.Release(nil); err != nil || string(out) != body {
			t.Errorf("a judged, unchanged body must be released as it came: %s (%v)", out, err)
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
	}

	plain, err := ParseResponse([]byte(body), strict)
	if err != nil {
		t.Fatal(err)
	}
	if got := plain.Project()["content"]; got != "hi" {
		t.Errorf("strict content = %v", got)
	}
	if out, _ := plain.Release(nil); strings.Contains(string(out), "x_citations") {
		t.Errorf("an unknown member was released in strict mode: %s", out)
	}

	sse := "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"x_citations\":\"a\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"x_citations\":\"b\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	for _, opts := range []ResponseOptions{judge, allow} {
		st, err := ReadStream(strings.NewReader(sse), 1<<20, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Response().Project()["content"]; !jsonvalue.Equal(got, tree(t, `[{"type":"member","name":"x_citations","value":"ab"}]`)) {
			t.Errorf("streamed content = %s", mustJSON(t, got))
		}
	}
	st, err := ReadStream(strings.NewReader(sse), 1<<20, strict)
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := st.Release(nil, false); strings.Contains(string(out), "x_citations") || st.Replayable() {
		t.Errorf("strict mode released the member or replays the stream: %s", out)
	}
}
