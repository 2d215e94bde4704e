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
	held map[client]int
}

// client is whom a request's slot is counted against: a key, or an
// address (a struct, not a prefixed string: no allocation per request).
type client struct {
	key bool
	id  string
}

// acquire takes a slot for who unless it already holds max.
func (c *clientSlots) acquire(who client, max int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held[who] >= max {
		return false
	}
	if c.held == nil {
		c.held = make(map[client]int)
	}
	c.held[who]++
	return true
}

// release gives back a slot acquire took.
func (c *clientSlots) release(who client) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.held[who] - 1; n > 0 {
		c.held[who] = n
	} else {
		delete(c.held, who)
	}
}

// clientOf names the client a request's slot is counted against: its key's
// name when the policy authenticates clients and the key is valid, else
// its remote address (without the port). A request with an invalid key is
// counted by address: it is refused before its body is read.
func (s *Server) clientOf(r *http.Request) client {
	if pol := s.Policy(); pol != nil && (pol.RequireKeys || len(pol.Principals) > 0) {
		if p, err := s.authenticate(r, pol); err == nil && p.authenticated() {
			return client{key: true, id: p.KeyID}
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return client{id: host}
}
