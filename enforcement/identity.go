package enforcement

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unsafe"

	"github.com/hooks-gateway/hooks-gateway/internal/jcs"
)

// IdentityJCSSHA256 is the name of the default identity provider (§10.2).
const IdentityJCSSHA256 = "jcs-sha256"

// DefaultMaxDepth is the recommended nesting bound (§12.3).
const DefaultMaxDepth = 128

// IdentityProvider maps a context to its context_identity (§10.1). Use
// JCSSHA256, NullIdentity or NewIdentityProvider; the zero value is the
// null provider.
type IdentityProvider struct {
	name     string
	compute  func(Context) (string, error)
	maxDepth int
}

// JCSSHA256 returns the default provider: "sha256:" + hex SHA-256 of the
// RFC 8785 form of the closed required+conditional projection (§10.2).
func JCSSHA256() IdentityProvider {
	return IdentityProvider{name: IdentityJCSSHA256, maxDepth: DefaultMaxDepth}
}

// NullIdentity returns the null provider: no identity, records and
// approvals are identity-unbound (§10.1).
func NullIdentity() IdentityProvider { return IdentityProvider{} }

var customProviderName = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// NewIdentityProvider registers a host-defined provider. The name must match
// ^[a-z][a-z0-9_-]*$ and must not start with "jcs" (§10.1); a keyed,
// non-linkable provider is conventionally named hmac-sha256-<key-id>.
func NewIdentityProvider(name string, compute func(Context) (string, error)) (IdentityProvider, error) {
	if !customProviderName.MatchString(name) {
		return IdentityProvider{}, fmt.Errorf("identity provider name %q must match ^[a-z][a-z0-9_-]*$", name)
	}
	if strings.HasPrefix(name, "jcs") {
		return IdentityProvider{}, fmt.Errorf("identity provider name %q: the jcs prefix is reserved", name)
	}
	if compute == nil {
		return IdentityProvider{}, errors.New("identity provider needs a compute function")
	}
	return IdentityProvider{name: name, compute: compute}, nil
}

// Name is the provider name recorded on every record; "" for the null provider.
func (p IdentityProvider) Name() string { return p.name }

// IsNull reports whether this is the null provider.
func (p IdentityProvider) IsNull() bool { return p.name == "" }

// Identity computes the context identity. The null provider returns nil.
// Any failure (a panic included) is an error: the caller denies the emission
// with host_error:context_invalid before dispatch (§10.1).
func (p IdentityProvider) Identity(c Context) (*string, error) { return p.identityMemo(c, nil, false) }

// identityMemo is Identity consulting memo (nil: none) for the canonical
// bytes of the objects it keeps; folded tells the identity of a context
// transforms folded from an emitted one's (see trailMemo).
func (p IdentityProvider) identityMemo(c Context, memo ObjectMemo, folded bool) (*string, error) {
	if p.IsNull() {
		return nil, nil
	}
	s := new(string)
	if err := p.identityInto(s, c, nil, nil, memo, folded); err != nil {
		return nil, err
	}
	return s, nil
}

// identityInto is Identity into *dst for a provider that is not null.
// With projections set, the caller has just run ValidateEnvelope on c, so
// the jcs-sha256 provider does not run it again, projects into storage
// from projections and writes the identity's bytes into *text, the string
// being those bytes (see identityText): storage of the caller's that
// nothing writes again, consulting memo (nil: none) for the canonical
// bytes of objects it knows. A custom provider is handed c as always.
func (p IdentityProvider) identityInto(dst *string, c Context, projections *sync.Pool, text *[jcs.SHA256IdentitySize]byte, memo ObjectMemo, folded bool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("identity provider %s panicked: %T", p.name, r)
		}
	}()
	var s string
	switch {
	case p.compute != nil:
		s, err = p.compute(c)
	case projections != nil:
		proj, _ := projections.Get().(*projection)
		if proj == nil {
			proj = new(projection)
		}
		s, err = validatedIdentityText(c, p.maxDepth, proj, text, memo, folded)
		projections.Put(proj) // reset by validatedIdentityText
	default:
		s, err = contextIdentity(c, p.maxDepth, memo, folded)
	}
	if err != nil {
		return fmt.Errorf("identity provider %s: %w", p.name, err)
	}
	*dst = s
	return nil
}

// ContextIdentity is the jcs-sha256 identity of c: the envelope check, the
// closed projection, the depth bound (maxDepth ≤ 0 means the default 128),
// the integer-domain check, then SHA-256 of the RFC 8785 bytes.
func ContextIdentity(c Context, maxDepth int) (string, error) {
	return contextIdentity(c, maxDepth, nil, false)
}

// contextIdentity is ContextIdentity consulting memo (nil: none).
func contextIdentity(c Context, maxDepth int, memo ObjectMemo, folded bool) (string, error) {
	if err := ValidateEnvelope(c); err != nil {
		return "", err
	}
	return validatedIdentityText(c, maxDepth, new(projection), new([jcs.SHA256IdentitySize]byte), memo, folded)
}

// validatedIdentityText is ContextIdentity after the envelope check,
// projecting into proj (reset before it returns), with the identity's
// bytes written into *text and the string made of them (identityText),
// consulting memo (nil: none).
func validatedIdentityText(c Context, maxDepth int, proj *projection, text *[jcs.SHA256IdentitySize]byte, memo ObjectMemo, folded bool) (string, error) {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	defer proj.reset()
	var m jcs.Memo
	if memo != nil {
		m = memo
	}
	proj.memo = m
	if tm, ok := memo.(trailMemo); ok {
		point := string(c.Point())
		t := tm.TakeTrail(point, folded)
		if t == nil {
			t = new(jcs.Trail)
		}
		err := jcs.SHA256IdentityTrailInto(text, proj.object(c, maxDepth), maxDepth, m, t)
		tm.KeepTrail(point, folded, t)
		if err != nil {
			return "", err
		}
		return identityText(text), nil
	}
	if err := jcs.SHA256IdentityMemoInto(text, proj.object(c, maxDepth), maxDepth, m); err != nil {
		return "", err
	}
	return identityText(text), nil
}

// trailMemo is an ObjectMemo that also keeps, per interception point, the
// trail of the last identity walk (jcs.Trail): a session's next context,
// whose canonical bytes begin with the history the last one hashed,
// then hashes only what follows it. TakeTrail hands a point's trail to
// one walk (nil when there is none, or another walk has it); KeepTrail
// takes it back. The identities of folded contexts keep trails apart
// from the emitted contexts' (folded): a session whose every turn is
// transformed (Claude Code's system prompt redacted, say) walks both
// every turn.
type trailMemo interface {
	TakeTrail(point string, folded bool) *jcs.Trail
	KeepTrail(point string, folded bool, t *jcs.Trail)
}

// identityText is the string whose bytes are *text, without a copy. The
// caller's contract: *text is written once, before this call, and never
// again (an emission's own storage: emissions are not reused), which is
// all a string's immutability asks of its bytes.
func identityText(text *[jcs.SHA256IdentitySize]byte) string {
	return unsafe.String(&text[0], len(text))
}

// IdentityProjection returns the closed required+conditional projection of
// a context whose envelope is valid (§10.2). It shares values with c.
func IdentityProjection(c Context) map[string]any {
	p := c.Point()
	out := make(map[string]any, 9)
	for _, k := range []string{"spec", "interception_point", "timestamp", "sequence", "target"} {
		out[k] = c[k]
	}
	out["agent"] = pick(c["agent"], "id", "framework")
	out["session"] = pick(c["session"], "id")
	for _, f := range shapes[p].fields {
		if f.subfields == nil {
			out[f.field] = c[f.field]
		} else {
			out[f.field] = pick(c[f.field], f.subfields...)
		}
	}
	return out
}

// identityObject is IdentityProjection as a jcs.Object: the same members,
// without the maps, which cost more than hashing a small context.
func identityObject(c Context) jcs.Object {
	return *new(projection).object(c, 0)
}

// projection is the storage of one identity projection: the members and
// the picked sub-objects live in fixed arrays, so projecting costs no
// allocation of its own (an emission embeds one). Sizes: the seven core
// members plus at most two conditional ones; agent's two subfields,
// session's one and at most five whitelisted subfields of the
// conditional members (post_tool_call's tool_call and tool_result).
type projection struct {
	top   [9]jcs.Member
	sub   [8]jcs.Member
	boxes [4]jcs.Object
	root  jcs.Object
	nsub  int
	nbox  int
	// target is the target's canonical bytes when they are written twice
	// (see shareTarget).
	target jcs.Canonical
	// memo supplies canonical bytes of objects made before (nil: none).
	memo jcs.Memo
}

// object fills p with the projection of c and returns it (a pointer, which
// boxes without an allocation). It shares values with c; p must not be
// reused until the result is no longer used, and must be reset after.
// maxDepth > 0 lets the target's canonical bytes be made once for both
// places it appears (shareTarget) under that depth bound; 0 projects
// plainly.
func (p *projection) object(c Context, maxDepth int) *jcs.Object {
	p.nsub, p.nbox = 0, 0
	point := c.Point()
	shape := shapes[point]
	var shared *jcs.Canonical
	if maxDepth > 0 {
		shared = p.shareTarget(c, point, maxDepth)
	}
	out := jcs.Object(p.top[:0])
	for _, k := range [...]string{"spec", "interception_point", "timestamp", "sequence"} {
		out = append(out, jcs.Member{Key: k, Value: c[k]})
	}
	if shared != nil {
		out = append(out, jcs.Member{Key: "target", Value: shared})
	} else {
		out = append(out, jcs.Member{Key: "target", Value: c["target"]})
	}
	out = append(out,
		jcs.Member{Key: "agent", Value: p.pick(c["agent"], "", nil, "id", "framework")},
		jcs.Member{Key: "session", Value: p.pick(c["session"], "", nil, "id")})
	for _, f := range shape.fields {
		var v any = c[f.field]
		switch {
		case shared == nil || f.field != shape.targetOf[0]:
			if f.subfields != nil {
				v = p.pick(v, "", nil, f.subfields...)
			}
		case len(shape.targetOf) == 2:
			// tool_call.args, tool_result.value: the target is one member
			// of the picked object.
			v = p.pick(v, shape.targetOf[1], shared, f.subfields...)
		case f.subfields == nil || p.pickedWhole(v, f.subfields):
			// The member is the target, taken whole or with every one of
			// its keys whitelisted: the same canonical bytes.
			v = shared
		default:
			v = p.pick(v, "", nil, f.subfields...)
		}
		out = append(out, jcs.Member{Key: f.field, Value: v})
	}
	p.root = out
	return &p.root
}

// shareTarget makes the target's canonical bytes when the target is the
// very container its mirror member holds (as Builder makes it), so they
// stand for both: canonicalizing a large message list or response once
// rather than twice. They are made at the deeper of the two levels the
// value sits at (the root is 1: target is at 2, a nested mirror such as
// tool_call.args at 3). Any failure returns nil: the plain walk then
// finds and reports the first violation exactly as before.
func (p *projection) shareTarget(c Context, point Point, maxDepth int) *jcs.Canonical {
	target := c["target"]
	alias, ok := targetAlias(c, point)
	if !ok || !sameValue(alias, target) {
		return nil
	}
	if err := p.target.EncodeMemo(target, 1+len(shapes[point].targetOf), maxDepth, p.memo); err != nil {
		return nil
	}
	return &p.target
}

// pickedWhole reports whether picking keys from v keeps all of v: then
// the picked object canonicalizes exactly as v does.
func (p *projection) pickedWhole(v any, keys []string) bool {
	obj, ok := v.(map[string]any)
	if !ok {
		return false
	}
	n := 0
	for _, k := range keys {
		if _, ok := obj[k]; ok {
			n++
		}
	}
	return n == len(obj)
}

// pick is the sub-object of v's members under keys, as a *jcs.Object
// into p's storage (a pointer boxes without an allocation). The member
// named sharedKey, when not "", is written as shared.
func (p *projection) pick(v any, sharedKey string, shared *jcs.Canonical, keys ...string) *jcs.Object {
	obj, _ := v.(map[string]any)
	start := p.nsub
	for _, k := range keys {
		if x, ok := obj[k]; ok {
			if sharedKey != "" && k == sharedKey {
				x = shared
			}
			p.sub[p.nsub] = jcs.Member{Key: k, Value: x}
			p.nsub++
		}
	}
	box := &p.boxes[p.nbox]
	p.nbox++
	*box = p.sub[start:p.nsub:p.nsub]
	return box
}

// reset drops the references into the last projected context and
// returns the target's bytes to their pool.
func (p *projection) reset() {
	p.target.Release()
	*p = projection{}
}

func pick(v any, keys ...string) map[string]any {
	obj, _ := v.(map[string]any)
	out := make(map[string]any, len(keys))
	for _, k := range keys {
		if x, ok := obj[k]; ok {
			out[k] = x
		}
	}
	return out
}

// HMACSHA256 returns a keyed, content-derived provider named
// hmac-sha256-<keyID>: "hmac-sha256:" + hex HMAC-SHA-256 of the same RFC
// 8785 projection jcs-sha256 hashes. Unlike jcs-sha256, a record's identity
// cannot be confirmed by anyone holding a candidate context without the key
// (spec §14, non-linkable records).
func HMACSHA256(keyID string, key []byte) (IdentityProvider, error) {
	if len(key) < 16 {
		return IdentityProvider{}, errors.New("hmac-sha256 identity key must be at least 16 bytes")
	}
	k := append([]byte(nil), key...)
	return NewIdentityProvider("hmac-sha256-"+keyID, func(c Context) (string, error) {
		if err := ValidateEnvelope(c); err != nil {
			return "", err
		}
		mac := hmac.New(sha256.New, k)
		if err := jcs.HashCanonical(mac, identityObject(c), DefaultMaxDepth); err != nil {
			return "", err
		}
		return "hmac-sha256:" + hex.EncodeToString(mac.Sum(nil)), nil
	})
}
