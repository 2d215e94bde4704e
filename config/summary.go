package config

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// Summary is one line for the startup log: the upstreams (name, type, base
// URL host), the policy (interceptors, profile, modes, identity), the
// session store and the record sinks. It never contains a key, a token or
// a URL's credentials.
func (c *Config) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "config %s: ", c.Source)

	ups := make([]string, len(c.Upstreams))
	for i, u := range c.Upstreams {
		where := u.Type
		if h := hostOf(u.BaseURL); h != "" {
			where += " " + h
		}
		ups[i] = fmt.Sprintf("%s (%s)", u.Name, where)
	}
	fmt.Fprintf(&b, "upstreams %s; ", orNone(ups))

	ics := make([]string, len(c.Interceptors))
	for i, ic := range c.Interceptors {
		ics[i] = fmt.Sprintf("%s (%s)", ic.Name, ic.Type)
	}
	e := c.Enforcement
	policy := orNone(ics)
	if c.Policy.Path != "" {
		policy = "from " + c.Policy.Path
		if c.Policy.Watch {
			policy += " (watched)"
		}
	}
	fmt.Fprintf(&b, "policy %s, profile %s, mode %s", policy, e.Composition.Profile, e.Mode)
	if len(e.PointModes) > 0 {
		pms := make([]string, 0, len(e.PointModes))
		for _, p := range slices.Sorted(maps.Keys(e.PointModes)) {
			pms = append(pms, p+"="+e.PointModes[p])
		}
		fmt.Fprintf(&b, " (%s)", strings.Join(pms, ", "))
	}
	fmt.Fprintf(&b, ", identity %s; ", e.IdentityProvider)

	b.WriteString("sessions ")
	b.WriteString(c.Sessions.Store)
	if c.Sessions.Store == StoreRedis {
		if h := hostOf(c.Sessions.RedisURL); h != "" {
			b.WriteString(" " + h)
		}
	}
	sinks := make([]string, len(c.Records.Sinks))
	for i, s := range c.Records.Sinks {
		sinks[i] = s.summary()
	}
	fmt.Fprintf(&b, "; records %s", orNone(sinks))
	if c.Tracing.Enabled() {
		fmt.Fprintf(&b, "; tracing otlp %s (%s, ratio %g)", hostOf(c.Tracing.OTLPEndpoint), c.Tracing.ServiceName, c.Tracing.SampleRatio)
	}
	b.WriteString(c.Approvals.summary())
	b.WriteString(c.Wire.summary())
	b.WriteString(c.Seal.summary())
	b.WriteString(c.MCP.summary())
	return b.String()
}

// summary describes a sink for the startup log: its type, file, stream
// and host, never a URL's credentials, path or query.
func (s Sink) summary() string {
	out := s.Type
	switch s.Type {
	case SinkJSONL:
		out += " " + s.Path
		if s.MaxBytes > 0 {
			out += fmt.Sprintf(" (rotated at %d bytes, %d kept)", s.MaxBytes, s.MaxFiles)
		}
	case SinkRedisStream:
		if h := hostOf(s.RedisURL); h != "" {
			out += " " + h
		}
		out += " " + s.Stream
	case SinkHTTP:
		if h := hostOf(s.URL); h != "" {
			out += " " + h
		}
	}
	return out
}

// hostOf returns a URL's host alone, so neither credentials nor paths with
// tokens in them reach the log.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}

func orNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}
