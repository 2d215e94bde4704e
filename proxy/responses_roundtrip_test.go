package proxy_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// recordingUpstream answers every Responses request with answer (JSON, or
// its stream when the request asks for one) and keeps the bodies.
type recordingUpstream struct {
	mu     sync.Mutex
	bodies []string
	answer *hostileAnswer
}

func (u *recordingUpstream) serve(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.bodies = append(u.bodies, string(b))
	u.mu.Unlock()
	if strings.Contains(string(b), `"stream":true`) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, u.answer.sse())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, u.answer.json())
}

func (u *recordingUpstream) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.bodies)
}

func (u *recordingUpstream) last() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.bodies[len(u.bodies)-1]
}

// startRoundTripGateway starts a gateway (allow-all, top the extra
// configuration) in front of u and returns openai-go pointed at it.
func startRoundTripGateway(t *testing.T, u *recordingUpstream, top string) openai.Client {
	t.Helper()
	return openai.NewClient(option.WithBaseURL(startRecordedGateway(t, u, top, allowPolicy)+"/v1"), option.WithAPIKey("client-key"), option.WithMaxRetries(0))
}

// startRecordedGateway starts a gateway under policy (interceptor entries)
// in front of u and returns its URL.
func startRecordedGateway(t *testing.T, u *recordingUpstream, top, policy string) string {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(up.Close)
	t.Setenv("ROUNDTRIP_TEST_KEY", "upstream-key")
	doc := "listeners:\n  http: \"127.0.0.1:0\"\nupstreams:\n  - name: up\n    type: openai\n    base_url: " + up.URL + "/v1\n" +
		"    api_key_env: ROUNDTRIP_TEST_KEY\n    models: [\"*\"]\nsessions:\n  store: memory\nrecords:\n  sinks:\n    - type: stdout\n" +
		top + "interceptors:\n" + policy
	return serveDoc(t, "roundtrip.yaml", doc, nil, nil)
}

// roundTripAnswer has every item whose id or blob the client hands back:
// reasoning with encrypted content, a provider-run web search, a message
// and a function call.
func roundTripAnswer() *hostileAnswer {
	a := newHostileAnswer()
	a.both("id", "resp_upstream_1")
	a.message()["id"] = "msg_upstream_1"
	a.items = append([]map[string]any{
		{"type": "reasoning", "id": "rs_upstream_1", "summary": []any{map[string]any{"type": "summary_text", "text": "think"}}, "encrypted_content": "gAAAAABoEncryptedReasoning+/0="},
		{"type": "web_search_call", "id": "ws_upstream_1", "status": "completed", "action": map[string]any{"type": "search", "query": "q"}},
	}, a.items...)
	a.items = append(a.items, map[string]any{"type": "function_call", "id": "fc_upstream_1", "call_id": "call_1", "name": "lookup", "arguments": `{"q":"x"}`, "status": "completed"})
	return a
}

// fedBack is the next request's input as an agent builds it: the user's
// message, the answer's output items as openai-go turns them into
// parameters, and the function call's output.
func fedBack(out []responses.ResponseOutputItemUnion) responses.ResponseInputParam {
	input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("hi", responses.EasyInputMessageRoleUser)}
	for _, it := range out {
		switch it.Type {
		case "reasoning":
			p := it.AsReasoning().ToParam()
			input = append(input, responses.ResponseInputItemUnionParam{OfReasoning: &p})
		case "message":
			p := it.AsMessage().ToParam()
			input = append(input, responses.ResponseInputItemUnionParam{OfOutputMessage: &p})
		case "function_call":
			p := it.AsFunctionCall().ToParam()
			input = append(input, responses.ResponseInputItemUnionParam{OfFunctionCall: &p})
		case "web_search_call":
			p := it.AsWebSearchCall().ToParam()
			input = append(input, responses.ResponseInputItemUnionParam{OfWebSearchCall: &p})
		}
	}
	result := responses.ResponseInputItemParamOfFunctionCallOutput("42")
	result.OfFunctionCallOutput.CallID = openai.String("call_1")
	return append(input, result)
}

// The client feeds the gateway's answer (sealed ids, sealed encrypted
// reasoning) back as the next request's input with the official client,
// and the upstream receives the ids and the blob it issued; a blob the
// gateway did not seal is refused, naming where it is.
func TestResponsesRoundTripOpensSeals(t *testing.T) {
	u := &recordingUpstream{answer: roundTripAnswer()}
	c := startRoundTripGateway(t, u, "")
	ctx := t.Context()
	params := func(input responses.ResponseInputParam) responses.ResponseNewParams {
		return responses.ResponseNewParams{Model: "m", Store: openai.Bool(false),
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input},
			Tools: []responses.ToolUnionParam{responses.ToolParamOfFunction("lookup", map[string]any{"type": "object"}, false)}}
	}
	for _, stream := range []bool{false, true} {
		first := params(responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("hi", responses.EasyInputMessageRoleUser)})
		var out []responses.ResponseOutputItemUnion
		if stream {
			s := c.Responses.NewStreaming(ctx, first)
			for s.Next() {
				if ev := s.Current(); ev.Type == "response.completed" {
					out = ev.AsResponseCompleted().Response.Output
				}
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
		} else {
			r, err := c.Responses.New(ctx, first)
			if err != nil {
				t.Fatal(err)
			}
			out = r.Output
		}
		if len(out) != 4 {
			t.Fatalf("stream %v: %d output items, want 4", stream, len(out))
		}
		for _, it := range out {
			if !strings.HasPrefix(it.ID, "hgs1_") || strings.Contains(it.RawJSON(), "upstream_1") || strings.Contains(it.RawJSON(), "EncryptedReasoning") {
				t.Fatalf("stream %v: the client holds an upstream value: %s", stream, it.RawJSON())
			}
		}
		if _, err := c.Responses.New(ctx, params(fedBack(out))); err != nil {
			t.Fatalf("stream %v: the fed-back answer is refused: %v", stream, err)
		}
		got := u.last()
		for _, want := range []string{`"id":"rs_upstream_1"`, `"encrypted_content":"gAAAAABoEncryptedReasoning+/0="`, `"id":"ws_upstream_1"`, `"id":"msg_upstream_1"`, `"id":"fc_upstream_1"`} {
			if !strings.Contains(got, want) {
				t.Errorf("stream %v: the upstream did not receive %s:\n%s", stream, want, got)
			}
		}
		if strings.Contains(got, "hgs1_") {
			t.Errorf("stream %v: a seal reached the upstream:\n%s", stream, got)
		}
	}
	// A forged blob, an id the gateway never issued and a seal moved to
	// another member are refused, each naming its path.
	first, err := c.Responses.New(ctx, params(responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("hi", responses.EasyInputMessageRoleUser)}))
	if err != nil {
		t.Fatal(err)
	}
	input := fedBack(first.Output)
	var held responses.ResponseReasoningItem // the reasoning item as the client holds it
	for _, it := range first.Output {
		if it.Type == "reasoning" {
			held = it.AsReasoning()
		}
	}
	// reasoningAt replaces the fed-back reasoning item with one built from
	// id and encrypted content.
	reasoningAt := func(id, enc string) responses.ResponseInputParam {
		r := responses.ResponseReasoningItemParam{ID: id, EncryptedContent: openai.String(enc),
			Summary: []responses.ResponseReasoningItemSummaryParam{{Text: "think"}}}
		out := append(responses.ResponseInputParam{}, input...)
		out[1] = responses.ResponseInputItemUnionParam{OfReasoning: &r}
		return out
	}
	if _, err := c.Responses.New(ctx, params(reasoningAt(held.ID, held.EncryptedContent))); err != nil {
		t.Fatalf("the reasoning item rebuilt from what the client holds is refused: %v", err)
	}
	for name, c2 := range map[string]struct {
		input responses.ResponseInputParam
		param string
	}{
		"forged encrypted content":           {reasoningAt(held.ID, "gAAAAABoForgedBlob"), "input[1].encrypted_content"},
		"an id the gateway never issued":     {reasoningAt("rs_elsewhere", held.EncryptedContent), "input[1].id"},
		"an id sealed for encrypted content": {reasoningAt(held.EncryptedContent, held.EncryptedContent), "input[1].id"},
	} {
		before := u.count()
		_, err := c.Responses.New(ctx, params(c2.input))
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Param != c2.param || !strings.Contains(apiErr.Message, "not issued through this gateway") {
			t.Errorf("%s: got %v, want a 400 naming %s", name, err, c2.param)
		}
		if u.count() != before {
			t.Errorf("%s: the refused request reached the upstream", name)
		}
	}
}

// With server state allowed, the response id is the gateway's seal, and a
// previous_response_id sent back reaches the upstream as the id it issued.
func TestResponsesPreviousResponseIDOpens(t *testing.T) {
	u := &recordingUpstream{answer: roundTripAnswer()}
	c := startRoundTripGateway(t, u, "wire:\n  responses:\n    allow_server_state: true\n")
	ctx := t.Context()
	first, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.ID, "hgs1_") {
		t.Fatalf("response id %q is not a seal", first.ID)
	}
	if _, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", PreviousResponseID: openai.String(first.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("and then?")}}); err != nil {
		t.Fatal(err)
	}
	if got := u.last(); !strings.Contains(got, `"previous_response_id":"resp_upstream_1"`) {
		t.Fatalf("the upstream did not receive the id it issued: %s", got)
	}
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", PreviousResponseID: openai.String("resp_upstream_1"),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("and then?")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Param != "previous_response_id" {
		t.Fatalf("an id the gateway never issued: %v", err)
	}
}

// Unknown members anywhere in a request reach the policy: a credential
// only in one of them is denied at pre_model_call, and nothing reaches the
// upstream; a request carrying them clean (the openai JS stream helper's
// parsed_arguments: null) is forwarded with them.
func TestResponsesUnknownRequestMembersReachPolicy(t *testing.T) {
	u := &recordingUpstream{answer: newHostileAnswer()}
	url := startRecordedGateway(t, u, "", `  - name: deny-credentials
    type: regex
    points: [pre_model_call]
    action: deny
    reason: policy:credential_leak
    patterns: ['sk-proj-[A-Za-z0-9]{24}']
`)
	s := mediationSecret
	post := func(body string) (int, string) {
		resp, err := http.Post(url+"/v1/responses", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	call := func(extra string) string {
		return `{"type":"function_call","call_id":"call_1","name":"lookup","arguments":"{}"` + extra + `}`
	}
	for name, body := range map[string]string{
		"top-level member":            `{"model":"m","input":"hi","x_trace":"` + s + `"}`,
		"input item member":           `{"model":"m","input":[{"role":"user","content":"hi","x_note":"` + s + `"}]}`,
		"content part member":         `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"hi","x_note":"` + s + `"}]}]}`,
		"function call member":        `{"model":"m","input":[{"role":"user","content":"hi"},` + call(`,"parsed_arguments":{"k":"`+s+`"}`) + `,{"type":"function_call_output","call_id":"call_1","output":"ok"}]}`,
		"client's own message id":     `{"model":"m","input":[{"type":"message","id":"` + s + `","role":"user","content":"hi"}]}`,
		"web search user_location":    `{"model":"m","input":"hi","tools":[{"type":"web_search","user_location":{"type":"approximate","city":"` + s + `"}}]}`,
		"file search vector stores":   `{"model":"m","input":"hi","tools":[{"type":"file_search","vector_store_ids":["` + s + `"]}]}`,
		"namespace description":       `{"model":"m","input":"hi","tools":[{"type":"namespace","name":"ns","description":"` + s + `","tools":[{"type":"function","name":"f"}]}]}`,
		"function tool member":        `{"model":"m","input":"hi","tools":[{"type":"function","name":"f","x_hint":"` + s + `"}]}`,
		"reasoning option":            `{"model":"m","input":"hi","reasoning":{"effort":"low","x_hint":"` + s + `"}}`,
		"reasoning entry member":      `{"model":"m","input":[{"role":"user","content":"hi"},{"type":"reasoning","summary":[{"type":"summary_text","text":"t","x":"` + s + `"}]}]}`,
		"stream_options member":       `{"model":"m","input":"hi","stream":true,"stream_options":{"x_hint":"` + s + `"}}`,
		"output_text part of history": `{"model":"m","input":[{"role":"assistant","content":[{"type":"output_text","text":"ok","annotations":[],"x":"` + s + `"}]}]}`,
	} {
		before := u.count()
		status, out := post(body)
		if status != http.StatusForbidden || strings.Contains(out, s) {
			t.Errorf("%s: status %d, want 403 without the secret\n%s", name, status, out)
		}
		if u.count() != before {
			t.Errorf("%s: the denied request reached the upstream", name)
		}
	}
	clean := `{"model":"m","input":[{"role":"user","content":"hi"},` + call(`,"parsed_arguments":null`) + `,{"type":"function_call_output","call_id":"call_1","output":"ok"}]}`
	if status, out := post(clean); status != http.StatusOK {
		t.Fatalf("parsed_arguments: null: status %d\n%s", status, out)
	}
	if got := u.last(); got != clean {
		t.Fatalf("the upstream received\n%s\nwant the client's body\n%s", got, clean)
	}
	// Logprobs of an earlier answer fed back are removed, not judged.
	withLogprobs := `{"model":"m","input":[{"role":"assistant","content":[{"type":"output_text","text":"ok","annotations":[],"logprobs":[{"token":"` + s + `","logprob":0,"bytes":[],"top_logprobs":[]}]}]}]}`
	if status, out := post(withLogprobs); status != http.StatusOK {
		t.Fatalf("logprobs: status %d\n%s", status, out)
	}
	if got := u.last(); strings.Contains(got, "logprobs") || strings.Contains(got, s) {
		t.Fatalf("logprobs reached the upstream: %s", got)
	}
}
