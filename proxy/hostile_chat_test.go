package proxy_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The chat surface releases no upstream byte on its shape alone: a
// credential in every member a client only reads (id, model,
// system_fingerprint, service_tier) never reaches the client, and one in a
// member the gateway does not know reaches it only as a member part a
// policy judged, so a regex deny policy blocks the answer. Over real HTTP,
// JSON and SSE, buffered and incremental.

// chatCredential is token-shaped, as a real key is: sk-proj- and 24
// letters.
const chatCredential = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx"

// chatRegexDeny denies what a regex over the projection finds.
const chatRegexDeny = `  - name: deny-keys
    type: regex
    points: [pre_model_call, post_model_call, output]
    action: deny
    reason: policy:credential_leak
    patterns: ['sk-proj-[A-Za-z0-9]{20,}']
`

const chatAllow = `  - {name: pass, type: allow}
`

// hostileChatMeta puts the credential in every metadata member.
const hostileChatMeta = `"id":"` + chatCredential + `","object":"%s","created":1,"model":"` + chatCredential +
	`","system_fingerprint":"` + chatCredential + `","service_tier":"` + chatCredential + `"`

func hostileChatHead(object string) string { return strings.Replace(hostileChatMeta, "%s", object, 1) }

// hostileChatJSON is a completion with the credential in its metadata
// and, when member, in an unknown top-level member x_debug.
func hostileChatJSON(member bool) string {
	extra := ""
	if member {
		extra = `,"x_debug":"trace ` + chatCredential + `"`
	}
	return `{` + hostileChatHead("chat.completion") + `,"choices":[{"index":0,"message":{"role":"assistant","content":"fine"},"finish_reason":"stop"}]` + extra + `}`
}

// hostileChatSSE is the same answer streamed: text in two chunks (the
// first ends on a word boundary, so incremental mediation releases it on
// its own), the unknown member in the finish chunk, after the text.
func hostileChatSSE(member bool) string {
	head := hostileChatHead("chat.completion.chunk")
	extra := ""
	if member {
		extra = `,"x_debug":"trace ` + chatCredential + `"`
	}
	return "data: {" + head + `,"choices":[{"index":0,"delta":{"role":"assistant","content":"All is "},"finish_reason":null}]}` + "\n\n" +
		"data: {" + head + `,"choices":[{"index":0,"delta":{"content":"fine"},"finish_reason":null}]}` + "\n\n" +
		"data: {" + head + `,"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]` + extra + "}\n\n" +
		"data: [DONE]\n\n"
}

type chatGateway struct {
	url string
	up  *fixedUpstream
}

// startChatGateway is a real gateway under policy, streaming in mode, in
// front of an upstream that answers with the current body.
func startChatGateway(t *testing.T, policy, mode string) *chatGateway {
	t.Helper()
	g := &chatGateway{up: newFixedUpstream(t)}
	// The text first; the rest once incremental mediation had time to
	// release it, so that its verdict on the whole answer comes after.
	g.up.splitLastEvent(200 * time.Millisecond)
	t.Setenv("HOSTILE_CHAT_KEY", "upstream-key")
	doc := `listeners:
  http: "127.0.0.1:0"
upstreams:
  - name: hostile
    type: openai
    base_url: ` + g.up.url + `/v1
    api_key_env: HOSTILE_CHAT_KEY
    models: ["*"]
sessions:
  store: memory
streaming:
  mode: ` + mode + `
interceptors:
` + policy
	g.url = serveDoc(t, "hostile-chat.yaml", doc, nil, nil)
	return g
}

// call has the upstream answer body and returns what the client got.
func (g *chatGateway) call(t *testing.T, body string, sse bool) (int, string) {
	t.Helper()
	g.up.answer(body, sse)
	stream := ""
	if sse {
		stream = `"stream":true,`
	}
	resp, err := http.Post(g.url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"asked-model",`+stream+`"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// releasedObjects are the JSON objects the client received: the body, or
// each data event of a stream.
func releasedObjects(t *testing.T, out string, sse bool) []map[string]any {
	t.Helper()
	var datas []string
	if !sse {
		datas = []string{out}
	}
	for _, ev := range strings.Split(out, "\n\n") {
		if d, ok := strings.CutPrefix(ev, "data: "); ok && sse && d != "[DONE]" {
			datas = append(datas, d)
		}
	}
	var objs []map[string]any
	for _, d := range datas {
		var m map[string]any
		if err := json.Unmarshal([]byte(d), &m); err != nil {
			t.Fatalf("released %q is not a JSON object: %v", d, err)
		}
		objs = append(objs, m)
	}
	return objs
}

func TestHostileChatMetadataAndMembers(t *testing.T) {
	for _, mode := range []string{"buffered", "incremental"} {
		allow := startChatGateway(t, chatAllow, mode)
		deny := startChatGateway(t, chatRegexDeny, mode)
		for _, sse := range []bool{false, true} {
			name := mode + "/json"
			body := hostileChatJSON
			if sse {
				name, body = mode+"/sse", hostileChatSSE
			}
			t.Run(name, func(t *testing.T) {
				// Allowed: the metadata is the gateway's; the credential
				// crosses only as the judged member, once, where it was.
				status, out := allow.call(t, body(true), sse)
				if status != http.StatusOK {
					t.Fatalf("allow: status %d: %s", status, out)
				}
				if n := strings.Count(out, chatCredential); n != 1 {
					t.Fatalf("allow: the credential crossed %d times, want once (the judged member):\n%s", n, out)
				}
				var ids []string
				for _, obj := range releasedObjects(t, out, sse) {
					id, _ := obj["id"].(string)
					ids = append(ids, id)
					if !strings.HasPrefix(id, "chatcmpl-") || obj["model"] != "asked-model" {
						t.Errorf("allow: released id %v, model %v", obj["id"], obj["model"])
					}
					if _, ok := obj["system_fingerprint"]; ok {
						t.Errorf("allow: a system_fingerprint was released")
					}
					if _, ok := obj["service_tier"]; ok {
						t.Errorf("allow: a service_tier outside its enumeration was released")
					}
					if v, ok := obj["x_debug"]; ok && v != "trace "+chatCredential {
						t.Errorf("allow: x_debug = %v", v)
					}
				}
				for _, id := range ids[1:] {
					if id != ids[0] {
						t.Errorf("allow: the chunks carry ids %v, want one", ids)
					}
				}
				// Without the member the credential does not cross, and
				// the regex, which sees no metadata, allows the answer.
				for _, g := range []*chatGateway{allow, deny} {
					status, out := g.call(t, body(false), sse)
					if status != http.StatusOK || strings.Contains(out, chatCredential) || !strings.Contains(out, "fine") {
						t.Errorf("metadata only: status %d:\n%s", status, out)
					}
				}
				// Denied: the member part is what the regex judged.
				status, out = deny.call(t, body(true), sse)
				if strings.Contains(out, chatCredential) {
					t.Fatalf("deny: the credential crossed: status %d:\n%s", status, out)
				}
				if !strings.Contains(out, "policy:credential_leak") {
					t.Errorf("deny: status %d, want the answer denied:\n%s", status, out)
				}
				if mode == "incremental" && sse && (status != http.StatusOK || !strings.Contains(out, `"content":"All is "`)) {
					t.Errorf("deny: status %d, want the text released before the verdict on the whole answer:\n%s", status, out)
				}
			})
		}
	}
}
