package proxy

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// One client holding slow bodies open takes its own share of the request
// slots, not everyone's: its next request is refused with 503, another
// key's is served, and the refusals are counted as reason="client".
func TestOneClientCannotTakeEverySlot(t *testing.T) {
	g := startAuthGateway(t, mockOnly+`server: {max_requests: 8, max_requests_per_client: 2}
auth:
  api_keys:
    - {name: team-a, sha256: `+sha(keyA)+`}
    - {name: team-b, sha256: `+sha(keyB)+`}
`)
	addr := strings.TrimPrefix(g.main.URL, "http://")
	for i := range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		// Headers and one byte of a 1,000-byte body: the request holds a
		// slot while the gateway waits for the rest.
		fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", keyA)
		waitFor(t, 5*time.Second, fmt.Sprintf("slow request %d to be admitted", i+1), func() bool { return g.asm.Server.RequestsInFlight() == i+1 })
	}

	st, h, code := chatCall(t, g.main.URL, keyA, "mock")
	if st != http.StatusServiceUnavailable || code != "overloaded" || h.Get("Retry-After") == "" {
		t.Fatalf("team-a's third request: %d %q, Retry-After %q; want 503 overloaded", st, code, h.Get("Retry-After"))
	}
	for range 3 {
		if st, _, code := chatCall(t, g.main.URL, keyB, "mock"); st != http.StatusOK {
			t.Fatalf("team-b while team-a holds its share: %d %q", st, code)
		}
	}
	if got := g.asm.Server.RequestsInFlight(); got != 2 {
		t.Fatalf("requests in flight = %d, want team-a's 2", got)
	}
	_, _, metricsBody := do(t, http.MethodGet, g.main.URL+"/metrics", "", nil)
	if !strings.Contains(string(metricsBody), `hooks_gateway_overload_refusals_total{reason="client"} 1`) {
		t.Fatal("the refusal is not counted as reason=\"client\"")
	}
}

func TestClientSlotsAreReleased(t *testing.T) {
	var c clientSlots
	a, b := client{id: "10.0.0.1"}, client{key: true, id: "10.0.0.1"} // an address and a key of the same name
	if !c.acquire(a, 2) || !c.acquire(a, 2) || c.acquire(a, 2) {
		t.Fatal("a client got more than its 2 slots")
	}
	if !c.acquire(b, 2) {
		t.Fatal("another client was refused")
	}
	c.release(a)
	if !c.acquire(a, 2) {
		t.Fatal("a released slot was not given back")
	}
	c.release(a)
	c.release(a)
	c.release(b)
	if len(c.held) != 0 {
		t.Fatalf("entries of clients holding nothing remain: %v", c.held)
	}
}

// Without keys, a client is its address, whatever port it connects from.
func TestClientOfWithoutKeysIsTheAddress(t *testing.T) {
	g := startAuthGateway(t, mockOnly)
	for _, tc := range []struct {
		remote string
		want   client
	}{
		{"10.0.0.7:51234", client{id: "10.0.0.7"}},
		{"10.0.0.7:40000", client{id: "10.0.0.7"}},
		{"[2001:db8::1]:443", client{id: "2001:db8::1"}},
	} {
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
		r.RemoteAddr = tc.remote
		if got := g.asm.Server.clientOf(r); got != tc.want {
			t.Errorf("clientOf(%s) = %+v, want %+v", tc.remote, got, tc.want)
		}
	}
}
