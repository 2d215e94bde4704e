package interceptors

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// Egress actions and defaults.
const (
	egressDeny          = "deny"
	egressRewrite       = "rewrite"
	reasonEgressDenied  = "policy:egress_denied"
	reasonEgressRewrite = "policy:egress_rewritten"
	defaultRewriteTo    = "https://blocked.invalid/"
)

// egressOptions configures the "egress" type.
type egressOptions struct {
	// AllowHosts, when not empty, is the only hosts URLs may name; "*."
	// matches any subdomain (not the apex).
	AllowHosts []string `yaml:"allow_hosts"`
	// DenyHosts is checked first.
	DenyHosts []string `yaml:"deny_hosts"`
	// Schemes a URL may use; default http and https.
	Schemes   []string `yaml:"schemes"`
	Action    string   `yaml:"action"`
	RewriteTo *string  `yaml:"rewrite_to"`
	Reason    string   `yaml:"reason"`
	Message   string   `yaml:"message"`
	// Scope is request (default) or target; see scanScope.
	Scope string `yaml:"scope"`
}

// hostPattern is one normalised allow_hosts or deny_hosts entry.
type hostPattern struct {
	name     string
	wildcard bool // "*.name": subdomains of name only
}

// matches reports whether h is named by p; wildcards never match IPs.
func (p hostPattern) matches(h host) bool {
	if p.wildcard {
		return !h.ip && strings.HasSuffix(h.name, "."+p.name)
	}
	return h.name == p.name
}

// egressInterceptor finds URLs in every string value and object key of
// what it judges (the target and, by default at pre_model_call, the
// request's tools and model.params; see scanScope) and denies, or rewrites
// in the target, those whose scheme or host the policy forbids.
type egressInterceptor struct {
	policy    string
	scope     scanScope
	allow     []hostPattern
	deny      []hostPattern
	schemes   []string
	rewrite   bool
	rewriteTo string
	// denyReason is also used by rewrite, for a URL it cannot rewrite.
	denyReason    string
	rewriteReason string
	message       string
}

// newEgress builds the "egress" type.
func newEgress(spec config.Interceptor, _ Env) (enforcement.Interceptor, error) {
	var opts egressOptions
	if err := spec.DecodeOptions(&opts); err != nil {
		return nil, err
	}
	var ps []config.Problem
	e := &egressInterceptor{
		policy: spec.Name, message: opts.Message, schemes: []string{"http", "https"},
		denyReason: reasonEgressDenied, rewriteReason: reasonEgressRewrite,
	}
	if opts.Reason != "" {
		e.denyReason, e.rewriteReason = opts.Reason, opts.Reason
	}
	var sps []config.Problem
	e.scope, sps = scopeOf(spec, opts.Scope)
	ps = append(ps, sps...)
	if len(opts.AllowHosts) == 0 && len(opts.DenyHosts) == 0 && opts.Schemes == nil {
		ps = append(ps, spec.Problemf("", "gives no allow_hosts, deny_hosts or schemes: it would enforce nothing"))
	}
	var hps []config.Problem
	e.allow, hps = hostPatterns(spec, "allow_hosts", opts.AllowHosts)
	ps = append(ps, hps...)
	e.deny, hps = hostPatterns(spec, "deny_hosts", opts.DenyHosts)
	ps = append(ps, hps...)
	if opts.Schemes != nil {
		e.schemes = nil
		if len(opts.Schemes) == 0 {
			ps = append(ps, spec.Problemf("schemes", "must list at least one scheme"))
		}
	}
	for i, s := range opts.Schemes {
		if s == "" || !isASCIILetter(s[0]) || strings.IndexFunc(s, func(r rune) bool { return r > 0x7f || !isSchemeByte(byte(r)) }) >= 0 {
			ps = append(ps, spec.Problemf(fmt.Sprintf("schemes[%d]", i), "must be a URL scheme such as https (got %q)", s))
		}
		e.schemes = append(e.schemes, strings.ToLower(s))
	}
	switch opts.Action {
	case "", egressDeny:
		if opts.RewriteTo != nil {
			ps = append(ps, spec.Problemf("rewrite_to", "is only used with action: rewrite"))
		}
	case egressRewrite:
		e.rewrite, e.rewriteTo = true, defaultRewriteTo
		if opts.RewriteTo != nil {
			e.rewriteTo = *opts.RewriteTo
		}
		for i, p := range spec.Points {
			if pt := enforcement.Point(p); pt.Valid() && !pt.Transformable() {
				ps = append(ps, spec.Problemf(fmt.Sprintf("points[%d]", i),
					"rewrite cannot run at %s: the spec forbids transforms there", p))
			}
		}
	default:
		ps = append(ps, spec.Problemf("action", "must be deny or rewrite (got %q)", opts.Action))
	}
	if opts.Reason != "" {
		ps = append(ps, checkReason(spec, opts.Reason)...)
	}
	if len(ps) > 0 {
		return nil, problemsError(ps...)
	}
	return e, nil
}

// hostPatterns normalises a host list as URL hosts are normalised.
func hostPatterns(spec config.Interceptor, field string, entries []string) ([]hostPattern, []config.Problem) {
	var out []hostPattern
	var ps []config.Problem
	for i, entry := range entries {
		f := fmt.Sprintf("%s[%d]", field, i)
		p, msg := hostPatternOf(entry)
		if msg != "" {
			ps = append(ps, spec.Problemf(f, "%s (got %q)", msg, entry))
			continue
		}
		out = append(out, p)
	}
	return out, ps
}

// hostPatternOf reads one entry: a host name, an IP address (IPv6 with or
// without brackets) or "*." and a host name.
func hostPatternOf(entry string) (hostPattern, string) {
	if strings.Contains(entry, "://") || strings.ContainsAny(entry, "/@") {
		return hostPattern{}, "must be a host, not a URL"
	}
	if addr, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(entry, "["), "]")); err == nil && addr.Zone() == "" {
		return hostPattern{name: addr.Unmap().String()}, ""
	}
	p := hostPattern{}
	name := entry
	if rest, ok := strings.CutPrefix(entry, "*."); ok {
		p.wildcard, name = true, rest
	}
	if strings.ContainsAny(name, "*:") {
		return hostPattern{}, `must be a host name or IP address, optionally after "*." (no ports, no other wildcards)`
	}
	h := normaliseHost(name)
	switch {
	case !h.valid:
		return hostPattern{}, "is not a valid host"
	case h.ip && p.wildcard:
		return hostPattern{}, `"*." applies to domain names, not IP addresses`
	}
	p.name = h.name
	return p, ""
}

// NonBlocking marks the scan as pure CPU work bounded by the context size.
func (e *egressInterceptor) NonBlocking() {}

// ReadsOnly marks the type as reading only: rewrites go to its own deep
// copy of the target (audited by TestReadOnlyTypesNeverWrite).
func (*egressInterceptor) ReadsOnly() {}

// OwnsTransforms marks its transform values as the rewriter's own value
// trees (see textRewriter), which the emitter takes without a copy
// (audited by TestReadOnlyTypesNeverWrite).
func (*egressInterceptor) OwnsTransforms() {}

// Intercept implements enforcement.Interceptor.
func (e *egressInterceptor) Intercept(ctx context.Context, c enforcement.Context) (enforcement.Verdict, error) {
	if !e.rewrite {
		return e.denyIn(c), nil
	}
	if !c.Point().Transformable() {
		return enforcement.Allow(), nil
	}
	return e.rewriteIn(ctx, c), nil
}

// denyIn denies the first forbidden URL in the target or beside it.
func (e *egressInterceptor) denyIn(c enforcement.Context) enforcement.Verdict {
	why, found := e.firstForbidden(c.Target())
	if !found {
		_, found = e.scope.firstOutside(c, func(v any) bool {
			why, found = e.firstForbidden(v)
			return found
		})
	}
	if found {
		return enforcement.Deny(e.denyReason, e.denyMessage(why))
	}
	return enforcement.Allow()
}

// rewriteIn transforms the target with every forbidden URL replaced, in
// string values and object keys. A forbidden URL beside the target, where
// no transform reaches, or key renames that would merge two members, deny.
func (e *egressInterceptor) rewriteIn(ctx context.Context, c enforcement.Context) enforcement.Verdict {
	if member, found := e.scope.firstOutside(c, e.anyForbidden); found {
		return enforcement.Deny(e.denyReason, outsideMessage(e.policy, member, "rewrite"))
	}
	w := textRewriter{find: e.appendEdits, frozen: enforcement.ContextsFrozen(ctx)}
	out, changed := w.tree(c.Target())
	switch {
	case w.merged:
		return enforcement.Deny(e.denyReason, mergeMessage(e.policy))
	case !changed:
		return enforcement.Allow()
	}
	// out is the rewriter's own: it shares with the context only what
	// nothing modifies (see textRewriter.unchanged).
	v := enforcement.TransformTo("$target", out)
	v.Reason = e.rewriteReason
	v.Message = e.message
	if v.Message == "" {
		v.Message = "URLs forbidden by policy " + e.policy + " were rewritten"
	}
	return v
}

// anyForbidden reports whether v holds a forbidden URL anywhere.
func (e *egressInterceptor) anyForbidden(v any) bool { return anyText(v, e.isForbidden) }

// forbidden explains the first forbidden URL found: the host or scheme,
// never the URL, whose path and query may carry secrets.
type forbidden struct {
	scheme string
	host   host
}

func (e *egressInterceptor) denyMessage(f forbidden) string {
	if e.message != "" {
		return e.message
	}
	// The scheme and host are the payload's: the message says which
	// check refused the URL, never what the URL names.
	switch {
	case !slices.Contains(e.schemes, f.scheme):
		return "a URL scheme is not allowed by policy " + e.policy
	case !f.host.valid:
		return "a URL with an invalid host is not allowed by policy " + e.policy
	}
	return "a URL host is not allowed by policy " + e.policy
}

// firstForbidden finds a forbidden URL in a string value or object key of
// v. Most values hold none, so an unordered scan decides first; only then
// are keys walked in order, so the host a message names does not vary
// between runs (sorting every object's keys would cost an allocation per
// object on every call).
func (e *egressInterceptor) firstForbidden(v any) (forbidden, bool) {
	if !anyText(v, e.isForbidden) {
		return forbidden{}, false
	}
	return e.firstForbiddenSorted(v)
}

// isForbidden reports whether s holds a forbidden URL.
func (e *egressInterceptor) isForbidden(s string) bool {
	_, bad := e.stringForbidden(s)
	return bad
}

// firstForbiddenSorted is firstForbidden with object keys in order.
func (e *egressInterceptor) firstForbiddenSorted(v any) (forbidden, bool) {
	switch x := v.(type) {
	case string:
		return e.stringForbidden(x)
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if f, ok := e.stringForbidden(k); ok {
				return f, true
			}
			if f, ok := e.firstForbiddenSorted(x[k]); ok {
				return f, true
			}
		}
	case []any:
		for _, el := range x {
			if f, ok := e.firstForbiddenSorted(el); ok {
				return f, true
			}
		}
		var f forbidden
		if anyJoin(x, func(s string) bool {
			var bad bool
			f, bad = e.stringForbidden(s)
			return bad
		}) {
			return f, true
		}
	}
	return forbidden{}, false
}

// stringForbidden returns the first forbidden URL in s.
func (e *egressInterceptor) stringForbidden(s string) (forbidden, bool) {
	for u := range findURLs(s) {
		if f, bad := e.check(u); bad {
			return f, true
		}
	}
	return forbidden{}, false
}

// check decides one URL: its scheme must be listed and every reading of
// its host valid, not denied and, with an allowlist, allowed.
func (e *egressInterceptor) check(u foundURL) (forbidden, bool) {
	if !slices.Contains(e.schemes, u.scheme) {
		return forbidden{scheme: u.scheme}, true
	}
	for _, h := range u.hosts {
		if !h.valid || slices.ContainsFunc(e.deny, func(p hostPattern) bool { return p.matches(h) }) ||
			len(e.allow) > 0 && !slices.ContainsFunc(e.allow, func(p hostPattern) bool { return p.matches(h) }) {
			return forbidden{scheme: u.scheme, host: h}, true
		}
	}
	return forbidden{}, false
}

// appendEdits appends an edit replacing each forbidden URL of s with
// rewrite_to. A URL nested in another is part of it: the outer URL is
// replaced whole when either is forbidden (an allowed host can redirect
// to the nested one).
func (e *egressInterceptor) appendEdits(dst []edit, s string) []edit {
	// A group is a URL and the URLs nested in it; it is written when the
	// next URL starts past its end.
	groupStart, groupEnd, groupBad := -1, -1, false
	flush := func() {
		if groupBad {
			dst = append(dst, edit{start: groupStart, end: groupEnd, repl: e.rewriteTo})
		}
	}
	for u := range findURLs(s) {
		_, bad := e.check(u)
		if groupStart >= 0 && u.start < groupEnd {
			groupEnd, groupBad = max(groupEnd, u.end), groupBad || bad
			continue
		}
		if groupStart >= 0 {
			flush()
		}
		groupStart, groupEnd, groupBad = u.start, u.end, bad
	}
	if groupStart >= 0 {
		flush()
	}
	return dst
}
