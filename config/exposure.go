package config

import (
	"fmt"
	"net"
	"strings"
)

// IsLoopback reports whether addr (host:port) listens on a loopback
// address only: localhost, 127.0.0.0/8 or ::1. An empty host (":8080")
// listens on every interface and is not loopback.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// realUpstream returns the name of the first upstream that is not the
// built-in mock model, or "".
func (c *Config) realUpstream() string {
	for _, u := range c.Upstreams {
		if u.Type != TypeMock {
			return u.Name
		}
	}
	return ""
}

// CheckExposure decides whether the gateway may listen on addr: with a
// real upstream (anything but mock) and no client keys, only a loopback
// address is allowed, unless auth.mode is none, the operator's explicit
// choice. Otherwise anyone who reaches the address spends the upstream
// key. The error names the fixes.
func (c *Config) CheckExposure(addr string) error {
	if c.Auth.Mode != "" || IsLoopback(addr) {
		return nil
	}
	up := c.realUpstream()
	if up == "" {
		return nil
	}
	return fmt.Errorf("refusing to listen on %s without client authentication: upstream %s is a real model provider, "+
		"and anyone who can reach this address would spend its key. Configure client keys (auth.api_keys or auth.keys_file, see docs/auth.md), "+
		"listen on a loopback address such as 127.0.0.1:8080, or set auth: {mode: none} to serve clients without keys on purpose", addr, up)
}

// AuthSummary is the startup line's account of client authentication for
// a gateway listening on addr, such as "client auth: keys (3 keys, 1
// revoked)", "client auth: none (explicit)" or "client auth: none
// (loopback only)".
func (c *Config) AuthSummary(addr string) string {
	switch c.Auth.Mode {
	case AuthKeys:
		keys := c.Auth.Keys()
		revoked := 0
		for _, k := range keys {
			if k.Revoked {
				revoked++
			}
		}
		s := fmt.Sprintf("client auth: keys (%d %s", len(keys), plural(len(keys), "key", "keys"))
		if revoked > 0 {
			s += fmt.Sprintf(", %d revoked", revoked)
		}
		if c.Auth.KeysFile != "" {
			s += ", key file " + c.Auth.KeysFile
		}
		return s + ")"
	case AuthNone:
		return "client auth: none (explicit)"
	}
	if IsLoopback(addr) {
		return "client auth: none (loopback only)"
	}
	return "client auth: none (mock upstream only)"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
