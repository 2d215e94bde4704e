package proxy

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestBaseURLProbeAndRefusedRoutes(t *testing.T) {
	logs := &lockedBuffer{}
	g := newGateway(t, gatewayConfig{upstream: "http://127.0.0.1:1/v1", log: logs})
	tests := []struct {
		method, path string
		status       int
		code         string
	}{
		{http.MethodHead, "/", 200, ""},
		{http.MethodGet, "/v1/responses/resp_123", 400, "stored_state_unsupported"},
		{http.MethodGet, "/v1/responses/resp_123/input_items", 400, "stored_state_unsupported"},
		{http.MethodPost, "/v1/responses/resp_123/cancel", 400, "stored_state_unsupported"},
		{http.MethodDelete, "/v1/responses/resp_123", 400, "stored_state_unsupported"},
		{http.MethodPost, "/v1/conversations", 400, "stored_state_unsupported"},
		{http.MethodPost, "/v1/messages/batches", 400, "stored_state_unsupported"},
		{http.MethodGet, "/v1/no/such/route", 404, "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, g.URL+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.code == "" {
				return
			}
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if got := errorBody(t, b).Code; got != tt.code {
				t.Errorf("code %q, want %q", got, tt.code)
			}
		})
	}
	if !strings.Contains(logs.String(), `msg="no route" method=GET path="\"/v1/no/such/route\""`) {
		t.Errorf("an unknown route is not logged with its method and path:\n%s", logs.String())
	}
}
