package policy

import (
	"path"

	"go.yaml.in/yaml/v3"

	"github.com/hooks-gateway/hooks-gateway/config"
)

// decodeRoutes decodes and checks the routes section; names are the
// interceptors of the whole document.
func decodeRoutes(d *config.Decoder, file string, n *yaml.Node, names map[string]origin) []Route {
	var out []Route
	seen := make(map[string]int)
	d.Sequence(n, "routes", func(f string, i int, v *yaml.Node) {
		r := Route{File: file, Line: d.Line(f)}
		d.Mapping(v, f, map[string]func(string, *yaml.Node){
			"name": func(f string, v *yaml.Node) { r.Name = d.String(v, f) },
			"match": func(f string, v *yaml.Node) {
				m := &r.Match
				d.Mapping(v, f, map[string]func(string, *yaml.Node){
					"agent_id": func(f string, v *yaml.Node) { m.AgentID = d.String(v, f) },
					"tenant":   func(f string, v *yaml.Node) { m.Tenant = d.String(v, f) },
					"model":    func(f string, v *yaml.Node) { m.Model = d.String(v, f) },
					"api_key":  func(f string, v *yaml.Node) { m.APIKey = d.String(v, f); r.APIKeyLine = d.Line(f) },
				})
			},
			"interceptors": func(f string, v *yaml.Node) { r.Interceptors = d.Strings(v, f) },
			"mode":         func(f string, v *yaml.Node) { r.Mode = d.String(v, f) },
			"point_modes":  func(f string, v *yaml.Node) { r.PointModes = d.StringMap(v, f) },
			"streaming":    func(f string, v *yaml.Node) { r.Streaming = d.String(v, f) },
			"native_sessions": func(f string, v *yaml.Node) {
				on := d.Bool(v, f)
				r.NativeSessions = &on
			},
		})
		checkRoute(d, f, r, names, seen, i)
		out = append(out, r)
	})
	return out
}

func checkRoute(d *config.Decoder, f string, r Route, names map[string]origin, seen map[string]int, i int) {
	switch {
	case r.Name == "":
		d.Problemf(f+".name", "is required")
	case !config.ValidName(r.Name):
		d.Problemf(f+".name", "must match ^[a-z0-9][a-z0-9_.-]*$ (got %q)", r.Name)
	default:
		if j, dup := seen[r.Name]; dup {
			d.Problemf(f+".name", "duplicate route name %q (also routes[%d])", r.Name, j)
		} else {
			seen[r.Name] = i
		}
	}
	for key, g := range map[string]string{"agent_id": r.Match.AgentID, "tenant": r.Match.Tenant, "model": r.Match.Model} {
		if _, err := path.Match(g, ""); err != nil {
			d.Problemf(f+".match."+key, "invalid glob %q: %v", g, err)
		}
	}
	if k := r.Match.APIKey; k != "" && !config.ValidKeyName(k) {
		d.Problemf(f+".match.api_key", "must be the name of a client key (auth.api_keys[].name, which defaults to its key_env) (got %q)", k)
	}
	if len(r.Interceptors) == 0 {
		d.Problemf(f+".interceptors", "must list at least one interceptor of the policy")
	}
	inRoute := make(map[string]bool, len(r.Interceptors))
	for j, n := range r.Interceptors {
		jf := f + ".interceptors[" + itoa(j) + "]"
		switch _, ok := names[n]; {
		case !ok:
			d.Problemf(jf, "no interceptor is named %q in the policy", n)
		case inRoute[n]:
			d.Problemf(jf, "%q is listed twice", n)
		}
		inRoute[n] = true
	}
	d.CheckModes(f, r.Mode, r.PointModes)
	if r.Streaming != "" && !config.ValidStreamingMode(r.Streaming) {
		d.Problemf(f+".streaming", "must be %s or %s (got %q)", config.StreamingBuffered, config.StreamingIncremental, r.Streaming)
	}
}

// CheckAPIKeys reports routes whose match.api_key names none of names
// (the client keys' names: auth.api_keys[].name, which defaults to the
// key_env, and the key file's), at the route's line.
func (d *Document) CheckAPIKeys(names []string) error {
	known := make(map[string]bool, len(names))
	for _, k := range names {
		known[k] = true
	}
	var ps []config.Problem
	for i, r := range d.Routes {
		if r.Match.APIKey != "" && !known[r.Match.APIKey] {
			ps = append(ps, config.Problem{File: r.File, Line: r.APIKeyLine, Field: "routes[" + itoa(i) + "].match.api_key",
				Msg: "names no client key of the gateway (auth.api_keys[].name or the key file's; got " + r.Match.APIKey + ")"})
		}
	}
	if len(ps) > 0 {
		return problemsError(ps)
	}
	return nil
}
