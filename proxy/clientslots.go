package proxy

import (
	"net"
	"net/http"
	"sync"
)

// clientSlots counts the requests each client holds at once, so that one
// client (one key, or one address without keys) cannot take every slot of
// server.max_requests: a client holding slow bodies open would otherwise
// starve every other until its bodies are cut. Entries live while a client
// holds a request, so the map is bounded by max_requests.
type clientSlots struct {
	mu   sync.Mutex
	held map[string]int
}

// acquire takes a slot for client unless it already holds max.
func (c *clientSlots) acquire(client string, max int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held[client] >= max {
		return false
	}
	if c.held == nil {
		c.held = make(map[string]int)
	}
	c.held[client]++
	return true
}

// release gives back a slot acquire took.
func (c *clientSlots) release(client string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.held[client] - 1; n > 0 {
		c.held[client] = n
	} else {
		delete(c.held, client)
	}
}

// clientOf names the client a request's slot is counted against: its key's
// name when the policy authenticates clients and the key is valid, else
// its remote address (without the port). A request with an invalid key is
// counted by address: it is refused before its body is read.
func (s *Server) clientOf(r *http.Request) string {
	if pol := s.Policy(); pol != nil && (pol.RequireKeys || len(pol.Principals) > 0) {
		if p, err := s.authenticate(r, pol); err == nil && p.authenticated() {
			return "key:" + p.KeyID
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "addr:" + host
}
