package interceptors_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// evidencePair is one evidence member twice: canonical is its RFC 8785
// form, written out by hand (members sorted, 1.50 as 1.5, "/" and "é"
// unescaped); wire is how the verdict service sends the same value
// (indented, members unsorted, "\/" and "\u00e9" escapes, 1.50). pad
// grows both by the same value.
func evidencePair(pad string) (canonical, wire string) {
	const artefact = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	canonical = `{"artefact":"` + artefact + `","verification_pointers":{"log":"https://audit.example/e/1"},"x_detail":{"n":1.5,"note":"` + pad + `"}}`
	escaped := strings.ReplaceAll(pad, "é", `\u00e9`)
	wire = "{\n  \"x_detail\": {\"note\": \"" + escaped + "\", \"n\": 1.50},\n" +
		"  \"artefact\": \"" + artefact + "\",\n" +
		"  \"verification_pointers\": {\"log\": \"https:\\/\\/audit.example\\/e\\/1\"}\n}"
	return canonical, wire
}

// padTo returns a pad of "é" (two UTF-8 bytes) and "a" that makes the
// canonical evidence exactly n bytes long.
func padTo(t *testing.T, n int) string {
	t.Helper()
	empty, _ := evidencePair("")
	rest := n - len(empty)
	pad := strings.Repeat("é", rest/4) + strings.Repeat("a", rest-2*(rest/4))
	if c, _ := evidencePair(pad); len(c) != n {
		t.Fatalf("canonical evidence is %d bytes; the test wants %d", len(c), n)
	}
	return pad
}

// TestGatewayHTTPEvidence: a remote verdict's evidence reaches the record
// unchanged, its unknown member included, and the 10240-byte cap of spec
// §5.3 is measured on the RFC 8785 form of the evidence as returned: at
// 10240 canonical bytes the verdict stands although the service sent far
// more bytes; at 10241 it is host_error:verdict_invalid.
func TestGatewayHTTPEvidence(t *testing.T) {
	var wire string
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("{\"decision\": \"allow\", \"evidence\": " + wire + "}"))
	}))
	t.Cleanup(svc.Close)
	g := startGatewayConfig(t, remoteBase+`  - name: remote
    type: http
    points: [pre_model_call]
    url: `+svc.URL+`
    timeout: 500ms
`)

	canonical, atCap := evidencePair(padTo(t, 10240))
	if len(atCap) <= 10240+len(canonical)/2 {
		t.Fatalf("the wire form is %d bytes: too close to the cap to tell the measures apart", len(atCap))
	}
	wire = atCap
	if _, err := g.chat(t, "bot", "/say hi"); err != nil {
		t.Fatalf("evidence of exactly 10240 canonical bytes (%d on the wire): %v", len(atCap), err)
	}
	got := g.recordAt(t, "pre_model_call")["verdict"].(map[string]any)["evidence"]
	var want any
	if err := json.Unmarshal([]byte(atCap), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("record evidence differs from what the service returned")
	}
	if !strings.Contains(g.recordText(), `"n":1.50`) {
		t.Errorf("the record re-spelled the number 1.50 of the unknown member")
	}

	_, wire = evidencePair(padTo(t, 10241))
	_, err := g.chat(t, "bot", "/say hi")
	deniedWith(t, err, "host_error:verdict_invalid")
	rec := g.recordAt(t, "pre_model_call")
	if v := rec["verdict"].(map[string]any); v["evidence"] != nil {
		t.Errorf("the invalid verdict's evidence reached the record")
	}
}
