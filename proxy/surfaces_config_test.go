package proxy

import (
	"net/http"
	"strings"
	"testing"
)

// The configuration reaches the surfaces Build makes: the seal keys seal
// what clients hold, and unknown_members: refuse is the strict world.
func TestSurfacesTakeTheWireAndSealConfiguration(t *testing.T) {
	t.Setenv("TEST_SEAL_K7", strings.Repeat("s", 32))
	g := startConfiguredGateway(t, mockOnly+`seal: {keys: [{id: k7, secret_env: TEST_SEAL_K7}]}
wire: {responses: {unknown_members: refuse}}
`)
	hdr := map[string]string{"Content-Type": "application/json"}
	st, _, body := do(t, http.MethodPost, g.main.URL+"/v1/responses", `{"model":"mock","input":"hello"}`, hdr)
	if st != http.StatusOK || !strings.Contains(string(body), `"id":"hgs1_k7_`) {
		t.Fatalf("status %d: the answer's item ids are not sealed under k7: %s", st, body)
	}
	st, _, body = do(t, http.MethodPost, g.main.URL+"/v1/responses", `{"model":"mock","input":"hello","x_vendor":1}`, hdr)
	if st != http.StatusBadRequest || !strings.Contains(string(body), "wire.responses.unknown_members") {
		t.Fatalf("an unknown member under refuse: %d %s", st, body)
	}
	st, _, body = do(t, http.MethodPost, g.main.URL+"/v1/messages", `{"model":"mock","max_tokens":8,"messages":[{"role":"user","content":"hi"}],"x_vendor":1}`, hdr)
	if st != http.StatusOK {
		t.Fatalf("an unknown member on a judging surface: %d %s", st, body)
	}
}

// wire.chat.unknown_members: refuse reaches the chat surface.
func TestChatSurfaceTakesUnknownMembers(t *testing.T) {
	g := startConfiguredGateway(t, mockOnly+"wire: {chat: {unknown_members: refuse}}\n")
	hdr := map[string]string{"Content-Type": "application/json"}
	st, _, body := do(t, http.MethodPost, g.main.URL+"/v1/chat/completions", `{"model":"mock","messages":[{"role":"user","content":"hi"}],"x_vendor":1}`, hdr)
	if st != http.StatusBadRequest || !strings.Contains(string(body), "wire.chat.unknown_members") {
		t.Fatalf("an unknown member under refuse: %d %s", st, body)
	}
}
