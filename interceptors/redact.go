package interceptors

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// Replace modes of the "redact" type.
const (
	replacePlaceholder = "placeholder"
	replaceMask        = "mask"
	replaceHash        = "hash"
)

// placeholderField is the one field a placeholder template may use.
const placeholderField = "{detector}"

// redactOptions configures the "redact" type.
type redactOptions struct {
	// Detectors are built-in detector names; nil means all of them.
	Detectors []string `yaml:"detectors"`
	// Replace is placeholder (default), mask or hash.
	Replace string `yaml:"replace"`
	// Placeholder is the placeholder mode's template; {detector} is
	// replaced by the detector's name. A pointer: "" (delete) is a choice.
	Placeholder *string `yaml:"placeholder"`
	// HashKeyEnv names the environment variable holding the HMAC key of
	// the hash mode; unset means plain SHA-256.
	HashKeyEnv string         `yaml:"hash_key_env"`
	Custom     []redactCustom `yaml:"custom"`
	Reason     string         `yaml:"reason"`
	// Scope is request (default) or target; see scanScope.
	Scope string `yaml:"scope"`
}

// redactCustom is a detector defined by the policy.
type redactCustom struct {
	Name    string `yaml:"name"`
	Pattern string `yaml:"pattern"`
}

// customName keeps custom detector names usable in placeholders and
// verdict messages.
var customName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// redactInterceptor rewrites secrets and personal data found in the string
// values and object keys of the target, and denies when it finds them
// where a transform cannot reach (see scanScope).
type redactInterceptor struct {
	name   string
	reason string
	// unreachableReason denies a match no transform can reach: the
	// configured reason, else reasonUnredactable.
	unreachableReason string
	scope             scanScope
	scan              scanner
}

// newRedact builds the "redact" type.
func newRedact(spec config.Interceptor, _ Env) (enforcement.Interceptor, error) {
	var opts redactOptions
	if err := spec.DecodeOptions(&opts); err != nil {
		return nil, err
	}
	dets, ps := redactDetectors(spec, opts)
	replace, rps := redactReplacer(spec, opts)
	ps = append(ps, rps...)
	r := &redactInterceptor{name: spec.Name, reason: opts.Reason}
	var sps []config.Problem
	r.scope, sps = scopeOf(spec, opts.Scope)
	ps = append(ps, sps...)
	r.unreachableReason = cmp.Or(opts.Reason, reasonUnredactable)
	if r.reason == "" {
		r.reason = "policy:redacted"
	} else {
		ps = append(ps, checkReason(spec, opts.Reason)...)
	}
	for i, p := range spec.Points {
		if pt := enforcement.Point(p); pt.Valid() && !pt.Transformable() {
			ps = append(ps, spec.Problemf(fmt.Sprintf("points[%d]", i),
				"redact cannot run at %s: the spec forbids transforms there", p))
		}
	}
	if len(ps) > 0 {
		return nil, problemsError(ps...)
	}
	r.scan = scanner{detectors: dets, replace: replace}
	return r, nil
}

// redactDetectors selects the built-in detectors and compiles the custom
// ones, in the order they run.
func redactDetectors(spec config.Interceptor, opts redactOptions) ([]detector, []config.Problem) {
	builtin := builtinDetectors()
	names := make([]string, len(builtin))
	for i, d := range builtin {
		names[i] = d.name
	}
	var ps []config.Problem
	dets := builtin
	if opts.Detectors != nil {
		want := make(map[string]bool, len(opts.Detectors))
		for i, n := range opts.Detectors {
			field := fmt.Sprintf("detectors[%d]", i)
			switch {
			case !slices.Contains(names, n):
				ps = append(ps, spec.Problemf(field, "unknown detector %q (one of %s)", n, strings.Join(names, ", ")))
			case want[n]:
				ps = append(ps, spec.Problemf(field, "detector %q is listed twice", n))
			}
			want[n] = true
		}
		dets = slices.DeleteFunc(builtin, func(d detector) bool { return !want[d.name] })
	}
	seen := make(map[string]bool, len(opts.Custom))
	for i, c := range opts.Custom {
		field := fmt.Sprintf("custom[%d]", i)
		switch {
		case c.Name == "":
			ps = append(ps, spec.Problemf(field+".name", "is required"))
		case !customName.MatchString(c.Name):
			ps = append(ps, spec.Problemf(field+".name", "must be lower case letters, digits and _, starting with a letter (got %q)", c.Name))
		case slices.Contains(names, c.Name):
			ps = append(ps, spec.Problemf(field+".name", "%q is a built-in detector", c.Name))
		case seen[c.Name]:
			ps = append(ps, spec.Problemf(field+".name", "detector %q is defined twice", c.Name))
		}
		seen[c.Name] = true
		re, err := regexp.Compile(c.Pattern)
		switch {
		case c.Pattern == "":
			ps = append(ps, spec.Problemf(field+".pattern", "is required"))
		case err != nil:
			ps = append(ps, spec.Problemf(field+".pattern", "invalid RE2 pattern: %v", err))
		case re.MatchString(""):
			ps = append(ps, spec.Problemf(field+".pattern", "matches the empty string, so it would match every value"))
		default:
			dets = append(dets, detector{name: c.Name, re: re})
		}
	}
	if opts.Detectors != nil && len(opts.Detectors) == 0 && len(opts.Custom) == 0 {
		ps = append(ps, spec.Problemf("detectors", "is empty and there are no custom detectors: nothing to redact"))
	}
	return dets, ps
}

// redactReplacer returns the function writing a match's replacement.
func redactReplacer(spec config.Interceptor, opts redactOptions) (func(det, match string) string, []config.Problem) {
	var ps []config.Problem
	mode := cmp.Or(opts.Replace, replacePlaceholder)
	if opts.Placeholder != nil && mode != replacePlaceholder {
		ps = append(ps, spec.Problemf("placeholder", "is only used with replace: placeholder"))
	}
	if opts.HashKeyEnv != "" && mode != replaceHash {
		ps = append(ps, spec.Problemf("hash_key_env", "is only used with replace: hash"))
	}
	switch mode {
	case replacePlaceholder:
		tmpl := "[" + placeholderField + "]"
		if opts.Placeholder != nil {
			tmpl = *opts.Placeholder
			if rest := strings.ReplaceAll(tmpl, placeholderField, ""); strings.ContainsAny(rest, "{}") {
				ps = append(ps, spec.Problemf("placeholder", "may only use the field %s (got %q)", placeholderField, tmpl))
			}
		}
		return func(det, _ string) string { return strings.ReplaceAll(tmpl, placeholderField, det) }, ps
	case replaceMask:
		return func(_, match string) string { return mask(match) }, ps
	case replaceHash:
		var key []byte
		if opts.HashKeyEnv != "" {
			v, _ := os.LookupEnv(opts.HashKeyEnv)
			if v == "" {
				// The key itself is never quoted, only where it is missing.
				ps = append(ps, spec.Problemf("hash_key_env", "environment variable %s is not set or empty", opts.HashKeyEnv))
			}
			key = []byte(v)
		}
		return func(det, match string) string { return "[" + det + ":" + digest(key, match) + "]" }, ps
	}
	ps = append(ps, spec.Problemf("replace", "must be placeholder, mask or hash (got %q)", opts.Replace))
	return nil, ps
}

// maskKeep is how many trailing characters mask keeps; matches too short
// to hide anything after keeping them are masked whole.
const maskKeep = 4

// mask hides all but the last maskKeep characters behind a fixed "****",
// which does not reveal the match's length.
func mask(match string) string {
	if utf8.RuneCountInString(match) < 2*maskKeep {
		return "****"
	}
	i := len(match)
	for range maskKeep {
		_, size := utf8.DecodeLastRuneInString(match[:i])
		i -= size
	}
	return "****" + match[i:]
}

// digest is the first 12 hex digits of HMAC-SHA256(key, match), or of
// SHA-256(match) without a key: equal matches get equal replacements, so
// redacted text can still be correlated.
func digest(key []byte, match string) string {
	var sum []byte
	if key == nil {
		s := sha256.Sum256([]byte(match))
		sum = s[:]
	} else {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(match))
		sum = m.Sum(nil)
	}
	return hex.EncodeToString(sum[:6])
}

// NonBlocking marks the scan as pure CPU work bounded by the context size,
// so the emitter runs it without a timeout goroutine.
func (r *redactInterceptor) NonBlocking() {}

// ReadsOnly marks the type as reading only: rewrites go to its own deep
// copy of the target (audited by TestReadOnlyTypesNeverWrite).
func (*redactInterceptor) ReadsOnly() {}

// OwnsTransforms marks its transform values as the rewriter's own value
// trees (see textRewriter), which the emitter takes without a copy
// (audited by TestReadOnlyTypesNeverWrite).
func (*redactInterceptor) OwnsTransforms() {}

// Intercept implements enforcement.Interceptor: one transform of $target
// with every match rewritten, or allow when nothing matched. A match
// outside the target, or key renames that would merge two members, deny.
func (r *redactInterceptor) Intercept(ctx context.Context, c enforcement.Context) (enforcement.Verdict, error) {
	// With no points configured, redact runs wherever a transform is
	// permitted and lets the session boundaries through.
	if !c.Point().Transformable() {
		return enforcement.Allow(), nil
	}
	if member, found := r.scope.firstOutside(c, r.scan.anyMatch); found {
		return enforcement.Deny(r.unreachableReason, outsideMessage(r.name, member, "redact")), nil
	}
	counts := make(tally, len(r.scan.detectors))
	w := textRewriter{find: r.scan.appendEdits, counts: counts, memo: cleanMemoFor(ctx, r, walkRewrite), frozen: enforcement.ContextsFrozen(ctx)}
	out, changed := w.tree(c.Target())
	switch {
	case w.merged:
		return enforcement.Deny(r.unreachableReason, mergeMessage(r.name)), nil
	case !changed:
		return enforcement.Allow(), nil
	}
	// out is the rewriter's own: it shares with the context only what
	// nothing modifies (see textRewriter.unchanged).
	v := enforcement.TransformTo("$target", out)
	v.Reason, v.Message = r.reason, r.message(counts)
	return v, nil
}

// message says how many matches of which detectors were redacted: names
// and counts only, never the matched text.
func (r *redactInterceptor) message(counts tally) string {
	total := 0
	var parts []string
	for i, n := range counts {
		if n > 0 {
			total += n
			parts = append(parts, fmt.Sprintf("%s: %d", r.scan.detectors[i].name, n))
		}
	}
	noun := "matches"
	if total == 1 {
		noun = "match"
	}
	return fmt.Sprintf("redacted %d %s (%s) under policy %s", total, noun, strings.Join(parts, ", "), r.name)
}
