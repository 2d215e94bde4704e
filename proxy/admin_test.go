package proxy

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestAdminAuth: on the main listener the admin endpoints exist only with a
// token and answer only to it (bearer or Basic password); the separate
// admin handler is open without a token.
func TestAdminAuth(t *testing.T) {
	pol := &Policy{Version: "v-test"}
	get := func(h http.Handler, set func(*http.Request)) (int, map[string]any) {
		t.Helper()
		hs := httptest.NewServer(h)
		defer hs.Close()
		req, _ := http.NewRequest(http.MethodGet, hs.URL+"/admin/policy", nil)
		if set != nil {
			set(req)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	noToken := New(Options{Policy: pol, AdminOnMain: true})
	if code, _ := get(noToken, nil); code != http.StatusNotFound {
		t.Errorf("main listener without a token: %d, want 404", code)
	}
	if code, body := get(noToken.AdminHandler(), nil); code != http.StatusOK || body["version"] != "v-test" {
		t.Errorf("admin handler without a token: %d %v", code, body)
	}
	withToken := New(Options{Policy: pol, AdminOnMain: true, AdminToken: "s3cret"})
	for name, set := range map[string]func(*http.Request){
		"none":   nil,
		"wrong":  func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") },
		"basic!": func(r *http.Request) { r.SetBasicAuth("admin", "nope") },
	} {
		if code, _ := get(withToken, set); code != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", name, code)
		}
	}
	for name, set := range map[string]func(*http.Request){
		"bearer": func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cret") },
		"basic":  func(r *http.Request) { r.SetBasicAuth("admin", "s3cret") },
	} {
		if code, body := get(withToken, set); code != http.StatusOK || body["version"] != "v-test" {
			t.Errorf("%s: %d %v", name, code, body)
		}
	}
}
