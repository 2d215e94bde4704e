package interceptors

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/textview"
)

// Regex actions.
const (
	regexDeny   = "deny"
	regexRedact = "redact"
)

// regexOptions configures the "regex" type.
type regexOptions struct {
	// Patterns are Go RE2 expressions; any match counts.
	Patterns []string `yaml:"patterns"`
	// Action is deny (block the action) or redact (replace every match).
	Action  string `yaml:"action"`
	Reason  string `yaml:"reason"`
	Message string `yaml:"message"`
	// Replacement is inserted literally for each match (redact only). A
	// pointer, because an explicit "" (delete the match) differs from unset.
	Replacement *string `yaml:"replacement"`
	// Scope is request (default) or target; see scanScope.
	Scope string `yaml:"scope"`
}

// regexInterceptor matches patterns against every string value and object
// key of what it judges: the target and, by default at pre_model_call, the
// request's tools and model.params (see scanScope).
type regexInterceptor struct {
	policy string
	re     *regexp.Regexp // all patterns as one alternation
	filter literalFilter  // strings without a required literal cannot match
	// windows confine the search to the runs around the literals.
	windows matchWindows
	scope   scanScope
	redact  bool
	reason  string
	// unreachableReason is a redact's deny of a match no transform can
	// reach: the configured reason, else reasonUnredactable.
	unreachableReason string
	message           string
	replacement       string
}

// newRegex builds the "regex" type.
func newRegex(spec config.Interceptor, _ Env) (enforcement.Interceptor, error) {
	var opts regexOptions
	if err := spec.DecodeOptions(&opts); err != nil {
		return nil, err
	}
	var ps []config.Problem
	if len(opts.Patterns) == 0 {
		ps = append(ps, spec.Problemf("patterns", "at least one pattern is required"))
	}
	alts := make([]string, 0, len(opts.Patterns))
	valid := make([]string, 0, len(opts.Patterns))
	for i, p := range opts.Patterns {
		field := fmt.Sprintf("patterns[%d]", i)
		re, err := regexp.Compile(p)
		switch {
		case p == "":
			ps = append(ps, spec.Problemf(field, "must not be empty"))
		case err != nil:
			ps = append(ps, spec.Problemf(field, "invalid RE2 pattern: %v", err))
		case re.MatchString(""):
			// Such a pattern matches every string: a deny would block
			// everything, a redact would scatter replacements.
			ps = append(ps, spec.Problemf(field, "matches the empty string, so it would match every value"))
		default:
			alts = append(alts, "(?:"+p+")")
			valid = append(valid, p)
		}
	}
	r := &regexInterceptor{policy: spec.Name, reason: opts.Reason, message: opts.Message, replacement: "[redacted]"}
	var sps []config.Problem
	r.scope, sps = scopeOf(spec, opts.Scope)
	ps = append(ps, sps...)
	switch opts.Action {
	case regexDeny:
		if opts.Replacement != nil {
			ps = append(ps, spec.Problemf("replacement", "is only used with action: redact"))
		}
		if r.reason == "" {
			r.reason = "policy:pattern_match"
		}
		if r.message == "" {
			// Never the match itself: messages reach clients and records.
			r.message = "content matched a pattern denied by policy " + spec.Name
		}
	case regexRedact:
		r.redact = true
		if opts.Replacement != nil {
			r.replacement = *opts.Replacement
		}
		r.unreachableReason = cmp.Or(r.reason, reasonUnredactable)
		if r.reason == "" {
			r.reason = "policy:redacted"
		}
		for i, p := range spec.Points {
			if pt := enforcement.Point(p); pt.Valid() && !pt.Transformable() {
				ps = append(ps, spec.Problemf(fmt.Sprintf("points[%d]", i),
					"redact cannot run at %s: the spec forbids transforms there", p))
			}
		}
	case "":
		ps = append(ps, spec.Problemf("action", "is required (deny or redact)"))
	default:
		ps = append(ps, spec.Problemf("action", "must be deny or redact (got %q)", opts.Action))
	}
	if opts.Reason != "" {
		ps = append(ps, checkReason(spec, opts.Reason)...)
	}
	if len(ps) > 0 {
		return nil, problemsError(ps...)
	}
	// Each pattern compiled alone, so their alternation compiles too.
	r.re = regexp.MustCompile(strings.Join(alts, "|"))
	r.filter = newLiteralFilter(valid)
	r.windows = newMatchWindows(r.re.String(), r.filter.literals)
	return r, nil
}

// NonBlocking marks the scan as pure CPU work bounded by the context size,
// so the emitter runs it without a timeout goroutine.
func (r *regexInterceptor) NonBlocking() {}

// ReadsOnly marks the scan as reading only: a redaction rewrites its own
// deep copy of the target.
func (r *regexInterceptor) ReadsOnly() {}

// OwnsTransforms marks its transform values as the rewriter's own value
// trees (see textRewriter), which the emitter takes without a copy
// (audited by TestReadOnlyTypesNeverWrite).
func (r *regexInterceptor) OwnsTransforms() {}

// Intercept implements enforcement.Interceptor.
func (r *regexInterceptor) Intercept(ctx context.Context, c enforcement.Context) (enforcement.Verdict, error) {
	if r.redact {
		// With no points configured, redact runs everywhere a transform is
		// permitted and lets the session boundaries through.
		if !c.Point().Transformable() {
			return enforcement.Allow(), nil
		}
		return r.redactIn(ctx, c), nil
	}
	if anyTextIn(c.Target(), r.matchString, cleanMemoFor(ctx, r, walkMatch)) {
		return enforcement.Deny(r.reason, r.message), nil
	}
	if _, found := r.scope.firstOutside(c, r.anyMatch); found {
		return enforcement.Deny(r.reason, r.message), nil
	}
	return enforcement.Allow(), nil
}

// redactIn transforms the target with every match replaced, or denies
// when a match lies where the transform cannot reach or when renaming
// keys would merge two members. memo skips the target's objects known to
// hold no match.
func (r *regexInterceptor) redactIn(ctx context.Context, c enforcement.Context) enforcement.Verdict {
	if member, found := r.scope.firstOutside(c, r.anyMatch); found {
		return enforcement.Deny(r.unreachableReason, outsideMessage(r.policy, member, "redact"))
	}
	w := textRewriter{find: r.appendEdits, memo: cleanMemoFor(ctx, r, walkRewrite), frozen: enforcement.ContextsFrozen(ctx)}
	out, changed := w.tree(c.Target())
	switch {
	case w.merged:
		return enforcement.Deny(r.unreachableReason, mergeMessage(r.policy))
	case !changed:
		return enforcement.Allow()
	}
	// out is the rewriter's own: it shares with the context only what
	// nothing modifies (see textRewriter.unchanged).
	v := enforcement.TransformTo("$target", out)
	v.Reason, v.Message = r.reason, r.message
	return v
}

// anyMatch reports whether any string value or object key in v matches.
func (r *regexInterceptor) anyMatch(v any) bool { return anyText(v, r.matchString) }

// matchString reports whether s matches, the literal filter first. Both
// run on the view of s (see textview): what a reader sees matches even
// when fullwidth letters or invisible characters disguise it.
func (r *regexInterceptor) matchString(s string) bool {
	v := textview.Of(s)
	if !r.filter.admits(v.Text) {
		return false
	}
	if !r.windows.enabled() {
		return r.re.MatchString(v.Text)
	}
	return r.windows.each(v.Text, func(w string, _ int) bool { return r.re.MatchString(w) })
}

// appendEdits appends an edit for every match in the view of s, over the
// original bytes the match came from. One search finds the matches: a
// string without any costs no allocation.
func (r *regexInterceptor) appendEdits(dst []edit, s string) []edit {
	v := textview.Of(s)
	if !r.filter.admits(v.Text) {
		return dst
	}
	if !r.windows.enabled() {
		return r.appendMatches(dst, &v, v.Text, 0)
	}
	r.windows.each(v.Text, func(w string, off int) bool {
		dst = r.appendMatches(dst, &v, w, off)
		return false
	})
	return dst
}

// appendMatches appends an edit for every match in w, the part of v's
// text from off on.
func (r *regexInterceptor) appendMatches(dst []edit, v *textview.View, w string, off int) []edit {
	for _, loc := range r.re.FindAllStringIndex(w, -1) {
		o, e := v.Original(off+loc[0], off+loc[1])
		dst = append(dst, edit{start: o, end: e, repl: r.replacement})
	}
	return dst
}
